// The Jinja evaluator's state and operations, shared by its three files: jinja.cpp (values,
// statements, expressions, calls, the bounds), jinja_builtins.cpp (filters, tests, methods of
// str/list/dict, globals) and jinja_format.cpp (Python's str() and repr(), json.dumps, `%` and
// str.format, Markup's escaping). Internal to the text library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jinja_ast.h"

namespace cuset::jinja::detail {

using K = Value::Kind;

// ---- strings with provenance (jinja.cpp)
void str_append(Str& dst, const Str& src);
void str_append(Str& dst, std::string_view s);
Str str_sub(const Str& s, size_t b, size_t e);
std::vector<size_t> cp_bounds(const std::string& s);  // byte offsets of the code points, and s.size()
size_t cp_count(const std::string& s);
uint32_t cp_at(const std::string& s, size_t b, size_t* len);
std::vector<uint32_t> cps_of(const std::string& s);
std::string utf8_of(uint32_t cp);
bool py_space(uint32_t c);  // Python's str.isspace()

// ---- Python's view of values (jinja_format.cpp)
std::string py_float(double f);                 // repr(float)
std::string py_repr_str(std::string_view s);    // repr(str)
const char* type_name(const Value& v);          // type(v).__name__
bool truthy(const Value& v);
bool equal(const Value& a, const Value& b);     // ==
bool hashable(const Value& v);

enum class Flow { kNormal, kBreak, kContinue };

class Interp {
public:
    Interp(const std::string& name, const Value& context, const RenderLimits& limits);
    Output run(const Body& body);

    // ---- errors and bounds
    [[noreturn]] void fail(int line, const std::string& what) const;
    [[noreturn]] void undefined_error(const Value& v, int line) const;
    void step(int64_t n = 1);                 // evaluation work; polls the stop request
    void use_bytes(size_t n, int line);       // bytes made
    void check_size(size_t n, int line);      // a string of n bytes may be made
    Value str_value(Str s, int line, bool markup = false);  // a made string: sized and counted

    // ---- Python semantics (jinja_format.cpp)
    std::string py_str(const Value& v, int line);   // str(v)
    std::string py_repr(const Value& v, int line);  // repr(v)
    Str to_str(const Value& v, int line);           // str(v), keeping a string's provenance
    int order(const Value& a, const Value& b, int line);  // -1/0/1 for <, or TypeError
    struct JsonOpts {
        bool ensure_ascii = false;
        int64_t indent = -1;  // -1 = None
        std::string indent_text;
        std::string item_sep = ", ", key_sep = ": ";
        bool sort_keys = false;
    };
    void to_json(const Value& v, const JsonOpts& o, int level, std::string& out, int line);
    Str html_escape(const Value& v, int line);      // markupsafe.escape(v)'s text
    Value markup_arg(const Value& v, int line);     // an argument of a Markup operation, escaped
    Value percent_format(const Value& fmt, const Value& args, int line);    // fmt % args
    Value str_format(const Value& fmt, const Args& args, int line, int nesting = 0);  // fmt.format(*args, **kwargs)

    // ---- lookups and calls (jinja.cpp)
    Value lookup(const std::string& n) const;
    Value getattr(const Value& obj, const std::string& attr, int line);
    Value getitem(const Value& obj, const Value& key, int line);
    Value call_value(const Value& f, const Args& a, int line);
    std::vector<Value> iterate(const Value& v, int line);  // list(v): an iterator is consumed
    Value make_list(List l, int line, bool tuple = false);
    Value make_iterator(std::vector<Value> items, int line);  // a generator over items
    Value binary(const std::string& op, const Value& a, const Value& b, int line);
    bool compare(const std::string& op, const Value& a, const Value& b, int line);
    bool contains(const Value& hay, const Value& needle, int line);
    std::shared_ptr<Callable> fn(std::string name, std::function<Value(const Args&)> f);
    int line() const { return line_; }  // the line of the call being evaluated

    // ---- builtins (jinja_builtins.cpp)
    Value filter(const std::string& f, const Value& v, const Args& a, int line);
    bool test(const std::string& t, const Value& v, const Args& a, int line);
    // obj.name for a method of str, list or dict: a bound method; a groupby item's `grouper` and
    // `list`: the field; the sandbox's refusal for the methods that modify a list or dict;
    // nullptr-kind undefined when the type has no such method.
    bool method(const Value& obj, const std::string& name, int line, Value* out);
    void install_globals();
    // what the filters (each a function of the table in jinja_builtins.cpp) build on
    Value attr_path(const Value& v, const std::string& path, int line);
    Value str_method(const Value& obj, const std::string& m, const Args& a, int line);
    Value list_method(const Value& obj, const std::string& m, const Args& a, int line);
    Value dict_method(const Value& obj, const std::string& m, const Args& a, int line);
    Value split(const Str& s, const Value* sep, int64_t maxsplit, bool from_right, int line);
    Value replace(const Value& s, const std::string& old, const std::string& rep, int64_t count, int line);
    Value select_family(const std::string& f, const Value& v, const Args& a, int line);

private:
    struct Frame {
        std::unordered_map<std::string, Value> vars;
    };
    const std::string& name_;
    RenderLimits limits_;
    std::vector<Frame> frames_;  // [0]: the globals and the context, then the scopes
    size_t scope_base_ = 1;      // the first frame of the current macro call (frames below it are hidden, except [0])
    std::vector<Str> bufs_;
    std::vector<std::pair<size_t, size_t>> generation_;
    std::vector<Value> block_values_;  // kBlockValue: the rendered body of {% filter %} / {% set | f %}
    int64_t steps_ = 0, bytes_ = 0;
    int depth_ = 0, calls_ = 0;
    int line_ = 0;

    struct DepthGuard {
        Interp& in;
        DepthGuard(Interp& interp, int line);
        ~DepthGuard() { --in.depth_; }
    };

    void set_var(const std::string& n, Value v) { frames_.back().vars[n] = std::move(v); }
    void assign(const Target& t, const Value& v, int line);
    void emit(const Str& s, int line);
    Str render_body(const Body& b, int line);  // into a captured buffer
    Flow exec(const Body& body);
    Flow exec(const Stmt& s);
    Flow exec_for(const Stmt& s);
    Value eval(const Expr& e);
    Args eval_args(const Expr& e, size_t first);
    Value call(const Expr& e);
    Value define_macro(const Stmt& m, bool is_caller);
    Value call_macro(const Stmt& m, const Args& a, const std::vector<Frame>* closure, int line);
    Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step, int line);
    Value int_op(const std::string& op, int64_t i, int64_t j, int line);

};

const Value* arg(const Args& a, size_t pos, const char* kw);  // positional `pos` or keyword `kw`

}  // namespace cuset::jinja::detail
