// A Jinja interpreter for the subset that Hugging Face chat templates use, with the environment
// transformers' apply_chat_template renders them in (trim_blocks, lstrip_blocks, loop controls,
// the {% generation %} tag, tojson without ASCII escaping, raise_exception, namespace, sandboxed
// undefined semantics). Strings carry the provenance of their bytes through the operations that
// keep them (concatenation, slicing, strip, split, join), so the caller can find where each
// message's content landed in the output. A construct outside the subset is refused when the
// template is parsed, with its line; nothing unsupported is ever rendered approximately.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace cuset::jinja {

// Bytes [begin, end) of a string came from source `source` (a caller's tag, e.g. a message index)
// at byte `offset` of that source.
struct Span {
    size_t begin = 0, end = 0;
    int32_t source = -1;
    size_t offset = 0;
};

struct Str {
    std::string text;
    std::vector<Span> spans;  // sorted by begin, disjoint
};

class Value;
using List = std::vector<Value>;
using Dict = std::vector<std::pair<std::string, Value>>;  // insertion order, as Python's dict
struct Callable;

class Value {
public:
    enum class Kind : uint8_t { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kCallable };

    Value() = default;  // undefined
    static Value undefined(std::string name = "");
    static Value none();
    static Value boolean(bool b);
    static Value integer(int64_t i);
    static Value number(double f);
    static Value string(std::string s);
    static Value string(Str s);
    // A string whose every byte comes from `source` (offset 0 at its first byte).
    static Value tagged(std::string s, int32_t source);
    static Value list(List l = {});
    static Value tuple(List l);  // a list that prints as a Python tuple
    static Value dict(Dict d = {});
    static Value namespace_(Dict d = {});  // namespace(): a dict whose attributes can be set
    static Value callable(std::shared_ptr<Callable> c);

    Kind kind() const { return kind_; }
    bool is_undefined() const { return kind_ == Kind::kUndefined; }
    bool is_none() const { return kind_ == Kind::kNone; }
    bool is_string() const { return kind_ == Kind::kString; }
    bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool; }
    bool is_namespace() const { return kind_ == Kind::kDict && namespace_flag_; }
    bool is_tuple() const { return kind_ == Kind::kList && namespace_flag_; }

    bool as_bool() const { return b_; }
    int64_t as_int() const { return kind_ == Kind::kFloat ? static_cast<int64_t>(f_) : i_; }
    double as_float() const { return kind_ == Kind::kFloat ? f_ : static_cast<double>(i_); }
    const Str& str() const { return *s_; }
    const std::string& text() const { return s_->text; }
    List& list_ref() const { return *l_; }
    Dict& dict_ref() const { return *d_; }
    const std::shared_ptr<Callable>& fn() const { return fn_; }
    const std::string& undefined_name() const { return undef_name_; }

    // Dict lookup; nullptr when absent (or not a dict).
    const Value* find(const std::string& key) const;
    void set(const std::string& key, Value v) const;  // dicts and namespaces (shared storage)

private:
    Kind kind_ = Kind::kUndefined;
    bool b_ = false;
    bool namespace_flag_ = false;  // dict: a namespace(); list: a tuple
    int64_t i_ = 0;
    double f_ = 0.0;
    std::shared_ptr<const Str> s_;
    std::shared_ptr<List> l_;
    std::shared_ptr<Dict> d_;
    std::shared_ptr<Callable> fn_;
    std::string undef_name_;
};

struct Args {
    std::vector<Value> pos;
    std::vector<std::pair<std::string, Value>> kw;
};
struct Callable {
    std::string name;
    std::function<Value(const Args&)> call;
};

// JSON -> Value (objects keep their key order as nlohmann::ordered_json does; numbers keep int/float).
Value value_from_json(const nlohmann::ordered_json& j);

struct Output {
    std::string text;
    std::vector<Span> spans;                               // provenance of the output's bytes
    std::vector<std::pair<size_t, size_t>> generation;     // byte ranges written inside {% generation %}
};

namespace detail {
struct Program;
}

class Template {
public:
    // Parses `source`. `name` names the template in errors ("<file>:<line>: <what>"). Throws
    // InputError for a syntax error or a construct outside the supported subset.
    Template(const std::string& source, std::string name);

    // Renders with the variables of `context` (a dict). Throws InputError naming the template line
    // for raise_exception() and for errors while rendering (an undefined value used where
    // transformers' environment raises, a type error).
    Output render(const Value& context) const;

    bool has_generation() const;  // the template has {% generation %} markers
    const std::string& name() const { return name_; }

private:
    std::shared_ptr<const detail::Program> prog_;
    std::string name_;
};

}  // namespace cuset::jinja
