// A Jinja interpreter for Hugging Face chat templates, with the environment transformers'
// apply_chat_template renders them in: Jinja2's ImmutableSandboxedEnvironment with trim_blocks,
// lstrip_blocks, loop controls, the {% generation %} tag, transformers' tojson, raise_exception,
// strftime_now, dict and namespace, and Jinja2's undefined, Markup and lookup semantics (an
// unknown filter, test or method is an error only when it is evaluated; what the sandbox
// refuses, such as list.append or a dunder attribute, is refused). Strings carry the provenance
// of their bytes through the operations that keep them (concatenation, slicing, strip, split,
// join), so the caller can find where each message's content landed in the output.
//
// A template is untrusted input (it comes with a model folder), so rendering is bounded: parse
// depth, call depth, evaluation steps, bytes made, the size of every string, and 64-bit integers
// checked for overflow. Each bound ends in an InputError naming the template and its line, and a
// stop request (core/signals.h) ends a render within a fixed number of steps. What Python would
// compute with unbounded integers or memory is refused, never approximated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
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
class Dict;
using List = std::vector<Value>;
struct Callable;
struct Iterator;
namespace detail {
struct Release;
}

class Value {
public:
    // kIterator: a one-pass iterator (what Jinja's map, select, items, ... return: a generator).
    enum class Kind : uint8_t { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kCallable, kIterator };

    Value() = default;  // undefined
    // `hint`: what using the value raises instead of "'name' is undefined" (the sandbox's refusal
    // of an unsafe attribute).
    static Value undefined(std::string name = "", std::string hint = "");
    static Value none();
    static Value boolean(bool b);
    static Value integer(int64_t i);
    static Value number(double f);
    static Value string(std::string s);
    static Value string(Str s);
    static Value markup(Str s);  // markupsafe.Markup: |safe, |escape
    // A string whose every byte comes from `source`, its first byte at `offset` of that source.
    static Value tagged(std::string s, int32_t source, size_t offset = 0);
    static Value list(List l = {});
    static Value tuple(List l);  // a list that prints as a Python tuple
    // An item of Jinja2's groupby: the tuple (grouper, list) whose fields are also its attributes
    // `grouper` and `list` (Jinja2's _GroupTuple, a named tuple).
    static Value group(Value grouper, Value list);
    static Value dict();
    static Value dict(Dict d);
    static Value namespace_(Dict d);  // namespace(): a dict whose attributes can be set
    static Value callable(std::shared_ptr<Callable> c);
    static Value iterator(std::shared_ptr<Iterator> it);

    Kind kind() const { return kind_; }
    bool is_undefined() const { return kind_ == Kind::kUndefined; }
    bool is_none() const { return kind_ == Kind::kNone; }
    bool is_string() const { return kind_ == Kind::kString; }
    bool is_markup() const { return kind_ == Kind::kString && (flags_ & kMarkup); }
    bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool; }
    bool is_namespace() const { return kind_ == Kind::kDict && (flags_ & kNamespace); }
    bool is_tuple() const { return kind_ == Kind::kList && (flags_ & kTuple); }
    bool is_group() const { return kind_ == Kind::kList && (flags_ & kGroup); }

    bool as_bool() const { return kind_ != Kind::kFloat && i_ != 0; }
    int64_t as_int() const { return kind_ == Kind::kFloat ? 0 : i_; }  // ints and bools
    double as_float() const { return kind_ == Kind::kFloat ? f_ : static_cast<double>(i_); }
    const Str& str() const;
    const std::string& text() const { return str().text; }
    const List& list_ref() const;
    Dict& dict_ref() const;
    std::shared_ptr<Callable> fn() const;
    Iterator& iter() const;
    const std::string& undefined_name() const;
    const std::string& undefined_hint() const;

    // Dict lookup by a string key; nullptr when absent (or not a dict).
    const Value* find(const std::string& key) const;
    void set(const std::string& key, Value v) const;  // dicts and namespaces (shared storage)

private:
    friend struct detail::Release;
    enum Flags : uint8_t { kMarkup = 1, kNamespace = 2, kTuple = 4, kGroup = 8 };
    Kind kind_ = Kind::kUndefined;
    uint8_t flags_ = 0;
    union {
        int64_t i_ = 0;  // ints and bools
        double f_;       // floats
    };
    // Str, List, Dict, Callable, Iterator, or the undefined's name and hint. A list or dict is
    // released without recursing however deep it nests (detail::Release).
    std::shared_ptr<void> p_;
};

// Python's dict: insertion order, keys of any hashable value (str, int, float, bool, None, tuple),
// 1 == 1.0 == True as Python has it.
class Dict {
public:
    using Item = std::pair<Value, Value>;
    const Value* find(const Value& key) const;
    const Value* find(std::string_view key) const;
    void set(Value key, Value v);  // the caller checks that the key is hashable
    size_t size() const { return items_.size(); }
    bool empty() const { return items_.empty(); }
    std::vector<Item>::const_iterator begin() const { return items_.begin(); }
    std::vector<Item>::const_iterator end() const { return items_.end(); }

private:
    friend struct detail::Release;
    std::vector<Item> items_;
    std::unordered_map<std::string, size_t> by_string_;  // string keys -> index in items_
    std::vector<size_t> other_keys_;                     // indices of the keys that are not strings
};

struct Args {
    std::vector<Value> pos;
    std::vector<std::pair<std::string, Value>> kw;
};
struct Callable {
    std::string name;
    std::function<Value(const Args&)> call;
    std::vector<std::pair<std::string, Value>> attributes;  // e.g. dict.fromkeys
};
struct Iterator {
    std::string type_name;                 // Python's name of the type, for errors ("generator")
    std::function<bool(Value*)> next;      // false when exhausted
};

// The filters a template may use (one table in the evaluator), and Jinja2's filters that cuset
// does not implement: a template that runs one of those fails naming it (docs/data.md lists them).
std::vector<std::string> filter_names();
std::vector<std::string> unimplemented_jinja2_filters();

// JSON -> Value (objects keep their key order as nlohmann::ordered_json does; numbers keep int/float).
Value value_from_json(const nlohmann::ordered_json& j);

struct Output {
    std::string text;
    std::vector<Span> spans;                               // provenance of the output's bytes
    std::vector<std::pair<size_t, size_t>> generation;     // byte ranges written inside {% generation %}
};

// The bounds of one render. The defaults render every real template with room to spare (each of
// the parity suite's 787 real templates renders its conversations in under 5,000 steps and 30
// levels of nesting, so a conversation thousands of turns long still fits) and end any template
// within seconds and a few hundred MB.
struct RenderLimits {
    int64_t max_steps = 20'000'000;      // statements, expression nodes, loop iterations, items visited
    int64_t max_bytes = int64_t{512} << 20;  // bytes of strings, lists and dicts made, in total
    size_t max_string = size_t{64} << 20;  // bytes of any one string, the output included
    int max_calls = 200;                 // nested macro calls (Jinja2 stops near 200, on Python's recursion limit)
    int max_depth = 1000;                // nested evaluation (statements, expressions, calls): under 1 MB of stack
};

namespace detail {
struct Program;
}

class Template {
public:
    // Parses `source`. `name` names the template in errors ("<name>:<line>: <what>", one line).
    // Throws InputError for a syntax error, nesting deeper than 256 levels, or a filter or test
    // that Jinja2 does not know outside a conditional (Jinja2 refuses those when compiling).
    Template(const std::string& source, std::string name);

    // Renders with the variables of `context` (a dict). Throws InputError naming the template line
    // for raise_exception(), for what Jinja2 raises while rendering (an undefined value used, a
    // type error, an unknown filter, test or method reached, an unsafe attribute called) and for
    // each bound of `limits`; StoppedBySignal (core/error.h) when a stop was requested.
    Output render(const Value& context, const RenderLimits& limits = RenderLimits()) const;

    bool has_generation() const;  // the template has {% generation %} markers
    const std::string& name() const { return name_; }

private:
    std::shared_ptr<const detail::Program> prog_;
    std::string name_;
};

}  // namespace cuset::jinja
