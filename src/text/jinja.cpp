// The Jinja evaluator: values, the filters, tests, methods and globals that chat templates call,
// and the rendering of a parsed template (jinja_parse.cpp) with the provenance of every output
// byte. Semantics follow Jinja 2/3 in transformers' sandboxed environment: an undefined value
// renders as "", iterates as nothing and is falsy, and raises when an attribute or item of it
// is read or it takes part in arithmetic.
#include "cuset/text/jinja.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <unordered_map>

#include <utf8proc.h>

#include "cuset/core/error.h"
#include "jinja_ast.h"
#include "unicode.h"

namespace cuset::jinja {

// ---------------------------------------------------------------- values

Value Value::undefined(std::string name) {
    Value v;
    v.undef_name_ = std::move(name);
    return v;
}
Value Value::none() {
    Value v;
    v.kind_ = Kind::kNone;
    return v;
}
Value Value::boolean(bool b) {
    Value v;
    v.kind_ = Kind::kBool;
    v.b_ = b;
    v.i_ = b ? 1 : 0;
    return v;
}
Value Value::integer(int64_t i) {
    Value v;
    v.kind_ = Kind::kInt;
    v.i_ = i;
    return v;
}
Value Value::number(double f) {
    Value v;
    v.kind_ = Kind::kFloat;
    v.f_ = f;
    return v;
}
Value Value::string(std::string s) {
    Str st;
    st.text = std::move(s);
    return string(std::move(st));
}
Value Value::string(Str s) {
    Value v;
    v.kind_ = Kind::kString;
    v.s_ = std::make_shared<const Str>(std::move(s));
    return v;
}
Value Value::tagged(std::string s, int32_t source) {
    Str st;
    st.text = std::move(s);
    if (!st.text.empty()) st.spans.push_back({0, st.text.size(), source, 0});
    return string(std::move(st));
}
Value Value::list(List l) {
    Value v;
    v.kind_ = Kind::kList;
    v.l_ = std::make_shared<List>(std::move(l));
    return v;
}
Value Value::tuple(List l) {
    Value v = list(std::move(l));
    v.namespace_flag_ = true;
    return v;
}
Value Value::dict(Dict d) {
    Value v;
    v.kind_ = Kind::kDict;
    v.d_ = std::make_shared<Dict>(std::move(d));
    return v;
}
Value Value::namespace_(Dict d) {
    Value v = dict(std::move(d));
    v.namespace_flag_ = true;
    return v;
}
Value Value::callable(std::shared_ptr<Callable> c) {
    Value v;
    v.kind_ = Kind::kCallable;
    v.fn_ = std::move(c);
    return v;
}
const Value* Value::find(const std::string& key) const {
    if (kind_ != Kind::kDict) return nullptr;
    for (const auto& [k, v] : *d_)
        if (k == key) return &v;
    return nullptr;
}
void Value::set(const std::string& key, Value v) const {
    for (auto& [k, x] : *d_)
        if (k == key) {
            x = std::move(v);
            return;
        }
    d_->push_back({key, std::move(v)});
}

Value value_from_json(const nlohmann::ordered_json& j) {
    switch (j.type()) {
        case nlohmann::ordered_json::value_t::null: return Value::none();
        case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
        case nlohmann::ordered_json::value_t::number_integer:
        case nlohmann::ordered_json::value_t::number_unsigned: return Value::integer(j.get<int64_t>());
        case nlohmann::ordered_json::value_t::number_float: return Value::number(j.get<double>());
        case nlohmann::ordered_json::value_t::string: return Value::string(j.get<std::string>());
        case nlohmann::ordered_json::value_t::array: {
            List l;
            for (const auto& x : j) l.push_back(value_from_json(x));
            return Value::list(std::move(l));
        }
        case nlohmann::ordered_json::value_t::object: {
            Dict d;
            for (auto it = j.begin(); it != j.end(); ++it) d.push_back({it.key(), value_from_json(it.value())});
            return Value::dict(std::move(d));
        }
        default: return Value::none();
    }
}

namespace {

using detail::Body;
using detail::Expr;
using detail::Stmt;
using K = Value::Kind;

// ---------------------------------------------------------------- strings with provenance

void str_append(Str& dst, const Str& src) {
    const size_t base = dst.text.size();
    dst.text += src.text;
    for (Span sp : src.spans) {
        sp.begin += base;
        sp.end += base;
        // Merge with the previous span when it continues the same source contiguously.
        if (!dst.spans.empty()) {
            Span& last = dst.spans.back();
            if (last.end == sp.begin && last.source == sp.source && last.offset + (last.end - last.begin) == sp.offset) {
                last.end = sp.end;
                continue;
            }
        }
        dst.spans.push_back(sp);
    }
}
void str_append(Str& dst, const std::string& s) { dst.text += s; }

Str str_sub(const Str& s, size_t b, size_t e) {
    Str out;
    out.text = s.text.substr(b, e - b);
    for (const Span& sp : s.spans) {
        size_t ob = std::max(sp.begin, b), oe = std::min(sp.end, e);
        if (oe <= ob) continue;
        out.spans.push_back({ob - b, oe - b, sp.source, sp.offset + (ob - sp.begin)});
    }
    return out;
}

// Byte offsets of the code points of `s` (and s.size() at the end).
std::vector<size_t> cp_bounds(const std::string& s) {
    std::vector<size_t> b;
    b.reserve(s.size() + 1);
    for (size_t k = 0; k < s.size(); ++k)
        if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80) b.push_back(k);
    b.push_back(s.size());
    return b;
}
size_t cp_count(const std::string& s) { return cp_bounds(s).size() - 1; }

uint32_t cp_at(const std::string& s, size_t b, size_t* len) {
    utf8proc_int32_t cp = 0;
    auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + b), static_cast<utf8proc_ssize_t>(s.size() - b), &cp);
    *len = n > 0 ? static_cast<size_t>(n) : 1;
    return n > 0 ? static_cast<uint32_t>(cp) : 0xFFFD;
}

// Python's str.isspace() code points.
bool py_space(uint32_t c) { return cuset::detail::py_is_space(c); }

std::vector<uint32_t> cps_of(const std::string& s) {
    std::vector<uint32_t> out;
    for (size_t k = 0; k < s.size();) {
        size_t n;
        out.push_back(cp_at(s, k, &n));
        k += n;
    }
    return out;
}

std::string utf8_of(uint32_t cp) {
    utf8proc_uint8_t buf[4];
    auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
    return std::string(reinterpret_cast<char*>(buf), static_cast<size_t>(n));
}

// strip/lstrip/rstrip: `chars` null = Python whitespace.
Str py_strip(const Str& s, const std::string* chars, bool left, bool right) {
    std::vector<uint32_t> set;
    if (chars) set = cps_of(*chars);
    auto strip_cp = [&](uint32_t c) { return chars ? std::find(set.begin(), set.end(), c) != set.end() : py_space(c); };
    std::vector<size_t> b = cp_bounds(s.text);
    size_t lo = 0, hi = b.size() - 1;  // code point indices
    size_t n;
    if (left)
        while (lo < hi && strip_cp(cp_at(s.text, b[lo], &n))) ++lo;
    if (right)
        while (hi > lo && strip_cp(cp_at(s.text, b[hi - 1], &n))) --hi;
    return str_sub(s, b[lo], b[hi]);
}

// ---------------------------------------------------------------- Python's str() and repr()

std::string py_float(double f) {
    if (std::isnan(f)) return "nan";
    if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
    char buf[64];
    int prec = 1;
    for (; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*e", prec - 1, f);
        if (std::strtod(buf, nullptr) == f) break;
    }
    // buf: [-]d.ddde[+-]XX -> digits and exponent
    std::string s(buf);
    bool neg = s[0] == '-';
    if (neg) s.erase(0, 1);
    size_t epos = s.find('e');
    int exp = std::atoi(s.c_str() + epos + 1);
    std::string digits;
    for (size_t k = 0; k < epos; ++k)
        if (s[k] != '.') digits += s[k];
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    std::string out;
    if (exp >= -4 && exp < 16) {
        if (exp >= 0) {
            std::string ip = digits.substr(0, std::min(digits.size(), static_cast<size_t>(exp) + 1));
            while (ip.size() < static_cast<size_t>(exp) + 1) ip += '0';
            std::string fp = digits.size() > static_cast<size_t>(exp) + 1 ? digits.substr(static_cast<size_t>(exp) + 1) : "0";
            out = ip + "." + fp;
        } else {
            out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
        }
    } else {
        out = digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        char eb[16];
        std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
        out += eb;
    }
    return (neg ? "-" : "") + out;
}

std::string py_repr_str(const std::string& s) {
    const bool dq = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
    const char q = dq ? '"' : '\'';
    std::string out(1, q);
    for (unsigned char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == static_cast<unsigned char>(q)) out += std::string("\\") + q;
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", c);
            out += b;
        } else out += static_cast<char>(c);
    }
    return out + q;
}

std::string py_repr(const Value& v);
std::string py_str(const Value& v) {
    switch (v.kind()) {
        case K::kUndefined: return "";
        case K::kNone: return "None";
        case K::kBool: return v.as_bool() ? "True" : "False";
        case K::kInt: return std::to_string(v.as_int());
        case K::kFloat: return py_float(v.as_float());
        case K::kString: return v.text();
        case K::kList: {
            const List& l = v.list_ref();
            std::string s = v.is_tuple() ? "(" : "[";
            for (size_t k = 0; k < l.size(); ++k) s += (k ? ", " : "") + py_repr(l[k]);
            if (v.is_tuple()) return s + (l.size() == 1 ? ",)" : ")");
            return s + "]";
        }
        case K::kDict: {
            if (v.is_namespace()) return "<Namespace>";
            std::string s = "{";
            bool first = true;
            for (const auto& [k, x] : v.dict_ref()) {
                s += (first ? "" : ", ") + py_repr_str(k) + ": " + py_repr(x);
                first = false;
            }
            return s + "}";
        }
        case K::kCallable: return "<function " + v.fn()->name + ">";
    }
    return "";
}
std::string py_repr(const Value& v) { return v.is_string() ? py_repr_str(v.text()) : py_str(v); }

Str to_str(const Value& v) {
    if (v.is_string()) return v.str();
    Str s;
    s.text = py_str(v);
    return s;
}

// json.dumps(x, ensure_ascii, indent, separators, sort_keys)
struct JsonOpts {
    bool ensure_ascii = false;
    int indent = -1;  // -1 = None
    std::string item_sep = ", ", key_sep = ": ";
    bool sort_keys = false;
};
void json_str(const std::string& s, bool ensure_ascii, std::string& out) {
    out += '"';
    for (size_t k = 0; k < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[k]);
        if (c == '"') out += "\\\"";
        else if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c == '\b') out += "\\b";
        else if (c == '\f') out += "\\f";
        else if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            out += b;
        } else if (c >= 0x80 && ensure_ascii) {
            size_t n;
            uint32_t cp = cp_at(s, k, &n);
            char b[16];
            if (cp >= 0x10000) {
                uint32_t v = cp - 0x10000;
                std::snprintf(b, sizeof b, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
            } else {
                std::snprintf(b, sizeof b, "\\u%04x", cp);
            }
            out += b;
            k += n;
            continue;
        } else out += static_cast<char>(c);
        ++k;
    }
    out += '"';
}

struct Fail {
    const std::string& name;
    int line;
    [[noreturn]] void operator()(const std::string& what) const {
        throw InputError(name + ":" + std::to_string(line) + ": " + what);
    }
};

void to_json(const Value& v, const JsonOpts& o, int level, std::string& out, const Fail& fail) {
    auto nl = [&](int lv) {
        if (o.indent < 0) return;
        out += '\n';
        out += std::string(static_cast<size_t>(o.indent * lv), ' ');
    };
    switch (v.kind()) {
        case K::kUndefined: fail("tojson: an undefined value is not JSON serializable");
        case K::kNone: out += "null"; return;
        case K::kBool: out += v.as_bool() ? "true" : "false"; return;
        case K::kInt: out += std::to_string(v.as_int()); return;
        case K::kFloat: {
            double f = v.as_float();
            out += std::isnan(f) ? "NaN" : std::isinf(f) ? (f > 0 ? "Infinity" : "-Infinity") : py_float(f);
            return;
        }
        case K::kString: json_str(v.text(), o.ensure_ascii, out); return;
        case K::kList: {
            const List& l = v.list_ref();
            if (l.empty()) {
                out += "[]";
                return;
            }
            out += '[';
            for (size_t k = 0; k < l.size(); ++k) {
                if (k) out += o.item_sep;
                nl(level + 1);
                to_json(l[k], o, level + 1, out, fail);
            }
            nl(level);
            out += ']';
            return;
        }
        case K::kDict: {
            std::vector<const std::pair<std::string, Value>*> items;
            for (const auto& kv : v.dict_ref()) items.push_back(&kv);
            if (o.sort_keys) std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
            if (items.empty()) {
                out += "{}";
                return;
            }
            out += '{';
            for (size_t k = 0; k < items.size(); ++k) {
                if (k) out += o.item_sep;
                nl(level + 1);
                json_str(items[k]->first, o.ensure_ascii, out);
                out += o.key_sep;
                to_json(items[k]->second, o, level + 1, out, fail);
            }
            nl(level);
            out += '}';
            return;
        }
        case K::kCallable: fail("tojson: a function is not JSON serializable");
    }
}

bool truthy(const Value& v) {
    switch (v.kind()) {
        case K::kUndefined:
        case K::kNone: return false;
        case K::kBool: return v.as_bool();
        case K::kInt: return v.as_int() != 0;
        case K::kFloat: return v.as_float() != 0.0;
        case K::kString: return !v.text().empty();
        case K::kList: return !v.list_ref().empty();
        case K::kDict: return v.is_namespace() || !v.dict_ref().empty();
        case K::kCallable: return true;
    }
    return false;
}

bool equal(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.kind() == K::kFloat || b.kind() == K::kFloat) return a.as_float() == b.as_float();
        return a.as_int() == b.as_int();
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case K::kUndefined:
        case K::kNone: return true;
        case K::kString: return a.text() == b.text();
        case K::kList: {
            const List &x = a.list_ref(), &y = b.list_ref();
            if (x.size() != y.size()) return false;
            for (size_t k = 0; k < x.size(); ++k)
                if (!equal(x[k], y[k])) return false;
            return true;
        }
        case K::kDict: {
            if (a.dict_ref().size() != b.dict_ref().size()) return false;
            for (const auto& [k, v] : a.dict_ref()) {
                const Value* o = b.find(k);
                if (!o || !equal(v, *o)) return false;
            }
            return true;
        }
        case K::kCallable: return a.fn() == b.fn();
        default: return false;
    }
}

// -1, 0, 1; fails on types Python cannot order.
int order(const Value& a, const Value& b, const Fail& fail) {
    if (a.is_number() && b.is_number()) {
        double x = a.as_float(), y = b.as_float();
        if (a.kind() != K::kFloat && b.kind() != K::kFloat) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
        return x < y ? -1 : x > y;
    }
    if (a.is_string() && b.is_string()) {
        int c = a.text().compare(b.text());
        return c < 0 ? -1 : c > 0;
    }
    if (a.kind() == K::kList && b.kind() == K::kList) {
        const List &x = a.list_ref(), &y = b.list_ref();
        for (size_t k = 0; k < x.size() && k < y.size(); ++k)
            if (int c = order(x[k], y[k], fail)) return c;
        return x.size() < y.size() ? -1 : x.size() > y.size();
    }
    fail("cannot compare values of these types with < or >");
}

const char* kind_name(const Value& v) {
    switch (v.kind()) {
        case K::kUndefined: return "undefined";
        case K::kNone: return "None";
        case K::kBool: return "bool";
        case K::kInt: return "int";
        case K::kFloat: return "float";
        case K::kString: return "str";
        case K::kList: return "list";
        case K::kDict: return "dict";
        case K::kCallable: return "function";
    }
    return "?";
}

// ---------------------------------------------------------------- the interpreter

enum class Flow { kNormal, kBreak, kContinue };

class Interp {
public:
    Interp(const std::string& name, const Value& context) : name_(name) {
        frames_.emplace_back();
        install_globals();
        if (context.kind() == K::kDict)
            for (const auto& [k, v] : context.dict_ref()) frames_[0][k] = v;
        bufs_.emplace_back();
    }

    Output run(const Body& body) {
        exec(body);
        Output o;
        o.text = std::move(bufs_[0].text);
        o.spans = std::move(bufs_[0].spans);
        o.generation = std::move(generation_);
        return o;
    }

private:
    const std::string& name_;
    std::vector<std::unordered_map<std::string, Value>> frames_;
    std::vector<Str> bufs_;
    std::vector<std::pair<size_t, size_t>> generation_;
    int depth_ = 0;

    Fail at(int line) const { return Fail{name_, line}; }

    Value lookup(const std::string& n) const {
        for (size_t k = frames_.size(); k-- > 0;) {
            auto it = frames_[k].find(n);
            if (it != frames_[k].end()) return it->second;
        }
        return Value::undefined(n);
    }

    static std::shared_ptr<Callable> fn(std::string name, std::function<Value(const Args&)> f) {
        auto c = std::make_shared<Callable>();
        c->name = std::move(name);
        c->call = std::move(f);
        return c;
    }

    void install_globals() {
        auto& g = frames_[0];
        const std::string& nm = name_;
        g["range"] = Value::callable(fn("range", [&nm](const Args& a) {
            int64_t start = 0, stop = 0, step = 1;
            if (a.pos.size() == 1) stop = a.pos[0].as_int();
            else if (a.pos.size() >= 2) {
                start = a.pos[0].as_int();
                stop = a.pos[1].as_int();
                if (a.pos.size() >= 3) step = a.pos[2].as_int();
            }
            if (step == 0) throw InputError(nm + ": range() step must not be zero");
            List l;
            for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
                l.push_back(Value::integer(i));
                if (l.size() > 100000) throw InputError(nm + ": range() too long");
            }
            return Value::list(std::move(l));
        }));
        g["namespace"] = Value::callable(fn("namespace", [](const Args& a) {
            Dict d;
            if (!a.pos.empty() && a.pos[0].kind() == K::kDict) d = a.pos[0].dict_ref();
            Value ns = Value::namespace_(std::move(d));
            for (const auto& [k, v] : a.kw) ns.set(k, v);
            return ns;
        }));
        g["dict"] = Value::callable(fn("dict", [](const Args& a) {
            Value d = Value::dict();
            if (!a.pos.empty() && a.pos[0].kind() == K::kDict)
                for (const auto& [k, v] : a.pos[0].dict_ref()) d.set(k, v);
            for (const auto& [k, v] : a.kw) d.set(k, v);
            return d;
        }));
        g["strftime_now"] = Value::callable(fn("strftime_now", [](const Args& a) {
            std::time_t t = std::time(nullptr);
            std::tm tm{};
            localtime_r(&t, &tm);
            char buf[256];
            std::string f = a.pos.empty() ? "" : py_str(a.pos[0]);
            size_t n = std::strftime(buf, sizeof buf, f.c_str(), &tm);
            return Value::string(std::string(buf, n));
        }));
        // raise_exception is handled in call() for its line number.
    }

    // ---- output
    void emit(const Str& s) { str_append(bufs_.back(), s); }

    // ---- statements
    Flow exec(const Body& body) {
        for (const auto& s : body) {
            Flow f = exec(*s);
            if (f != Flow::kNormal) return f;
        }
        return Flow::kNormal;
    }

    Flow exec(const Stmt& s) {
        switch (s.k) {
            case Stmt::K::kText: str_append(bufs_.back(), s.text); return Flow::kNormal;
            case Stmt::K::kOutput: emit(to_str(eval(*s.expr))); return Flow::kNormal;
            case Stmt::K::kIf:
                for (size_t b = 0; b < s.conds.size(); ++b)
                    if (truthy(eval(*s.conds[b]))) return exec(s.bodies[b]);
                if (s.has_else) return exec(s.bodies.back());
                return Flow::kNormal;
            case Stmt::K::kFor: return exec_for(s);
            case Stmt::K::kSet: {
                Value v = eval(*s.expr);
                if (s.attr_target) {
                    Value ns = lookup(s.targets[0]);
                    if (!ns.is_namespace()) at(s.line)("cannot set attribute '" + s.targets[1] + "' of '" + s.targets[0] + "': not a namespace()");
                    ns.set(s.targets[1], v);
                } else if (s.targets.size() == 1) {
                    frames_.back()[s.targets[0]] = v;
                } else {
                    std::vector<Value> items = iterate(v, s.line);
                    if (items.size() != s.targets.size()) at(s.line)("cannot unpack " + std::to_string(items.size()) + " values into " + std::to_string(s.targets.size()) + " names");
                    for (size_t k = 0; k < items.size(); ++k) frames_.back()[s.targets[k]] = items[k];
                }
                return Flow::kNormal;
            }
            case Stmt::K::kSetBlock: {
                bufs_.emplace_back();
                exec(s.bodies[0]);
                Str out = std::move(bufs_.back());
                bufs_.pop_back();
                frames_.back()[s.name] = Value::string(std::move(out));
                return Flow::kNormal;
            }
            case Stmt::K::kMacro: {
                const Stmt* m = &s;
                frames_.back()[s.name] = Value::callable(fn(s.name, [this, m](const Args& a) { return call_macro(*m, a); }));
                return Flow::kNormal;
            }
            case Stmt::K::kGeneration: {
                if (bufs_.size() != 1) at(s.line)("{% generation %} inside captured output is not supported");
                size_t start = bufs_[0].text.size();
                Flow f = exec(s.bodies[0]);
                generation_.push_back({start, bufs_[0].text.size()});
                return f;
            }
            case Stmt::K::kBreak: return Flow::kBreak;
            case Stmt::K::kContinue: return Flow::kContinue;
        }
        return Flow::kNormal;
    }

    Value call_macro(const Stmt& m, const Args& a) {
        if (++depth_ > 64) at(m.line)("macro recursion too deep");
        std::unordered_map<std::string, Value> f;
        if (a.pos.size() > m.params.size()) at(m.line)("macro '" + m.name + "' takes " + std::to_string(m.params.size()) + " arguments");
        for (size_t k = 0; k < m.params.size(); ++k) {
            if (k < a.pos.size()) f[m.params[k]] = a.pos[k];
            else if (m.defaults[k]) f[m.params[k]] = eval(*m.defaults[k]);
            else f[m.params[k]] = Value::undefined(m.params[k]);
        }
        for (const auto& [k, v] : a.kw) {
            if (std::find(m.params.begin(), m.params.end(), k) == m.params.end())
                at(m.line)("macro '" + m.name + "' has no parameter '" + k + "'");
            f[k] = v;
        }
        // The macro sees the template's top level and its own arguments.
        std::vector<std::unordered_map<std::string, Value>> saved;
        saved.swap(frames_);
        frames_.push_back(saved[0]);
        frames_.push_back(std::move(f));
        bufs_.emplace_back();
        try {
            exec(m.bodies[0]);
        } catch (...) {
            bufs_.pop_back();
            frames_.swap(saved);
            --depth_;
            throw;
        }
        Str out = std::move(bufs_.back());
        bufs_.pop_back();
        frames_.swap(saved);
        --depth_;
        return Value::string(std::move(out));
    }

    std::vector<Value> iterate(const Value& v, int line) {
        switch (v.kind()) {
            case K::kUndefined: return {};
            case K::kList: return v.list_ref();
            case K::kDict: {
                std::vector<Value> out;
                for (const auto& kv : v.dict_ref()) out.push_back(Value::string(kv.first));
                return out;
            }
            case K::kString: {
                std::vector<Value> out;
                std::vector<size_t> b = cp_bounds(v.text());
                for (size_t k = 0; k + 1 < b.size(); ++k) out.push_back(Value::string(str_sub(v.str(), b[k], b[k + 1])));
                return out;
            }
            default: at(line)(std::string("'") + kind_name(v) + "' object is not iterable");
        }
    }

    Flow exec_for(const Stmt& s) {
        std::vector<Value> items = iterate(eval(*s.expr), s.line);
        frames_.emplace_back();
        auto bind = [&](const Value& item) {
            if (s.targets.size() == 1) {
                frames_.back()[s.targets[0]] = item;
                return;
            }
            std::vector<Value> parts = iterate(item, s.line);
            if (parts.size() != s.targets.size()) at(s.line)("cannot unpack " + std::to_string(parts.size()) + " values into " + std::to_string(s.targets.size()) + " names");
            for (size_t k = 0; k < parts.size(); ++k) frames_.back()[s.targets[k]] = parts[k];
        };
        if (s.filter) {
            std::vector<Value> kept;
            for (const Value& it : items) {
                bind(it);
                if (truthy(eval(*s.filter))) kept.push_back(it);
            }
            items.swap(kept);
        }
        const size_t n = items.size();
        for (size_t k = 0; k < n; ++k) {
            bind(items[k]);
            Value loop = Value::dict();
            loop.set("index", Value::integer(static_cast<int64_t>(k + 1)));
            loop.set("index0", Value::integer(static_cast<int64_t>(k)));
            loop.set("revindex", Value::integer(static_cast<int64_t>(n - k)));
            loop.set("revindex0", Value::integer(static_cast<int64_t>(n - k - 1)));
            loop.set("first", Value::boolean(k == 0));
            loop.set("last", Value::boolean(k + 1 == n));
            loop.set("length", Value::integer(static_cast<int64_t>(n)));
            loop.set("depth", Value::integer(1));
            loop.set("depth0", Value::integer(0));
            loop.set("previtem", k > 0 ? items[k - 1] : Value::undefined("previtem"));
            loop.set("nextitem", k + 1 < n ? items[k + 1] : Value::undefined("nextitem"));
            loop.set("cycle", Value::callable(fn("cycle", [k](const Args& a) {
                return a.pos.empty() ? Value::undefined() : a.pos[k % a.pos.size()];
            })));
            frames_.back()["loop"] = loop;
            Flow f = exec(s.bodies[0]);
            if (f == Flow::kBreak) break;
        }
        frames_.pop_back();
        if (n == 0 && s.has_else) return exec(s.bodies[1]);
        return Flow::kNormal;
    }

    // ---- expressions
    [[noreturn]] void undefined_error(const Value& v, int line) {
        at(line)(v.undefined_name().empty() ? std::string("a value is undefined") : "'" + v.undefined_name() + "' is undefined");
    }

    Value getattr(const Value& obj, const std::string& attr, int line) {
        if (obj.is_undefined()) undefined_error(obj, line);
        if (obj.kind() == K::kDict) {
            if (const Value* v = obj.find(attr)) return *v;
        }
        return Value::undefined(attr);
    }

    Value getitem(const Value& obj, const Value& key, int line) {
        if (obj.is_undefined()) undefined_error(obj, line);
        if (obj.kind() == K::kDict) {
            if (key.is_string())
                if (const Value* v = obj.find(key.text())) return *v;
            return Value::undefined(key.is_string() ? key.text() : py_str(key));
        }
        if (obj.kind() == K::kList || obj.is_string()) {
            if (!key.is_number()) {
                if (key.is_string()) return Value::undefined(key.text());
                at(line)("indices must be integers");
            }
            int64_t i = key.as_int();
            if (obj.kind() == K::kList) {
                const auto n = static_cast<int64_t>(obj.list_ref().size());
                if (i < 0) i += n;
                if (i < 0 || i >= n) return Value::undefined("[" + std::to_string(key.as_int()) + "]");
                return obj.list_ref()[static_cast<size_t>(i)];
            }
            std::vector<size_t> b = cp_bounds(obj.text());
            const auto n = static_cast<int64_t>(b.size() - 1);
            if (i < 0) i += n;
            if (i < 0 || i >= n) return Value::undefined("[" + std::to_string(key.as_int()) + "]");
            return Value::string(str_sub(obj.str(), b[static_cast<size_t>(i)], b[static_cast<size_t>(i) + 1]));
        }
        return Value::undefined();
    }

    Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step_v, int line) {
        if (obj.is_undefined()) undefined_error(obj, line);
        int64_t step = step_v.is_undefined() || step_v.is_none() ? 1 : step_v.as_int();
        if (step == 0) at(line)("slice step cannot be zero");
        int64_t n;
        std::vector<size_t> b;
        if (obj.kind() == K::kList) n = static_cast<int64_t>(obj.list_ref().size());
        else if (obj.is_string()) {
            b = cp_bounds(obj.text());
            n = static_cast<int64_t>(b.size() - 1);
        } else at(line)(std::string("cannot slice a ") + kind_name(obj));
        auto norm = [&](const Value& v, int64_t dflt, bool is_stop) {
            if (v.is_undefined() || v.is_none()) return dflt;
            int64_t i = v.as_int();
            if (i < 0) i += n;
            if (step > 0) return std::clamp<int64_t>(i, 0, n);
            (void)is_stop;
            return std::clamp<int64_t>(i, -1, n - 1);
        };
        int64_t lo = norm(start, step > 0 ? 0 : n - 1, false), hi = norm(stop, step > 0 ? n : -1, true);
        std::vector<int64_t> idx;
        for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) idx.push_back(i);
        if (obj.kind() == K::kList) {
            List out;
            for (int64_t i : idx) out.push_back(obj.list_ref()[static_cast<size_t>(i)]);
            return Value::list(std::move(out));
        }
        if (step == 1) return Value::string(str_sub(obj.str(), b[static_cast<size_t>(lo)], b[static_cast<size_t>(std::max(lo, hi))]));
        Str out;
        for (int64_t i : idx) str_append(out, str_sub(obj.str(), b[static_cast<size_t>(i)], b[static_cast<size_t>(i) + 1]));
        return Value::string(std::move(out));
    }

    Args eval_args(const Expr& e, size_t first) {
        Args a;
        const size_t n_kw = e.kw.size();
        const size_t n_pos = e.a.size() - first - n_kw;
        for (size_t k = 0; k < n_pos; ++k) a.pos.push_back(eval(*e.a[first + k]));
        for (size_t k = 0; k < n_kw; ++k) a.kw.push_back({e.kw[k], eval(*e.a[first + n_pos + k])});
        return a;
    }

    Value eval(const Expr& e) {
        switch (e.k) {
            case Expr::K::kLit: return e.lit;
            case Expr::K::kName: return lookup(e.s);
            case Expr::K::kList:
            case Expr::K::kTuple: {
                List l;
                for (const auto& x : e.a) l.push_back(eval(*x));
                return e.k == Expr::K::kTuple ? Value::tuple(std::move(l)) : Value::list(std::move(l));
            }
            case Expr::K::kDict: {
                Value d = Value::dict();
                for (size_t k = 0; k + 1 < e.a.size(); k += 2) {
                    Value key = eval(*e.a[k]);
                    if (!key.is_string()) at(e.line)("only string keys are supported in dict literals");
                    d.set(key.text(), eval(*e.a[k + 1]));
                }
                return d;
            }
            case Expr::K::kAttr: return getattr(eval(*e.a[0]), e.s, e.line);
            case Expr::K::kIndex: return getitem(eval(*e.a[0]), eval(*e.a[1]), e.line);
            case Expr::K::kSlice: {
                auto opt = [&](size_t k) { return e.a[k] ? eval(*e.a[k]) : Value::none(); };
                return slice(eval(*e.a[0]), opt(1), opt(2), opt(3), e.line);
            }
            case Expr::K::kCall: return call(e);
            case Expr::K::kFilter: {
                Value v = eval(*e.a[0]);
                return filter(e.s, v, eval_args(e, 1), e.line);
            }
            case Expr::K::kTest: {
                Value v = eval(*e.a[0]);
                bool r = test(e.s, v, eval_args(e, 1), e.line);
                return Value::boolean(e.negated ? !r : r);
            }
            case Expr::K::kNeg:
            case Expr::K::kPos: {
                Value v = eval(*e.a[0]);
                if (v.is_undefined()) undefined_error(v, e.line);
                if (!v.is_number()) at(e.line)(std::string("bad operand type for unary ") + (e.k == Expr::K::kNeg ? "-" : "+") + ": " + kind_name(v));
                if (e.k == Expr::K::kPos) return v.kind() == K::kBool ? Value::integer(v.as_int()) : v;
                return v.kind() == K::kFloat ? Value::number(-v.as_float()) : Value::integer(-v.as_int());
            }
            case Expr::K::kNot: return Value::boolean(!truthy(eval(*e.a[0])));
            case Expr::K::kAnd: {
                Value a = eval(*e.a[0]);
                return truthy(a) ? eval(*e.a[1]) : a;
            }
            case Expr::K::kOr: {
                Value a = eval(*e.a[0]);
                return truthy(a) ? a : eval(*e.a[1]);
            }
            case Expr::K::kCond: {
                if (truthy(eval(*e.a[1]))) return eval(*e.a[0]);
                return e.a[2] ? eval(*e.a[2]) : Value::undefined();
            }
            case Expr::K::kBin: return binary(e.s, eval(*e.a[0]), eval(*e.a[1]), e.line);
            case Expr::K::kCompare: {
                Value left = eval(*e.a[0]);
                for (size_t k = 0; k < e.ops.size(); ++k) {
                    Value right = eval(*e.a[k + 1]);
                    if (!compare(e.ops[k], left, right, e.line)) return Value::boolean(false);
                    left = right;
                }
                return Value::boolean(true);
            }
        }
        return Value::undefined();
    }

    bool contains(const Value& hay, const Value& needle, int line) {
        switch (hay.kind()) {
            case K::kString:
                if (!needle.is_string()) at(line)("'in <string>' requires a string as left operand");
                return hay.text().find(needle.text()) != std::string::npos;
            case K::kList:
                for (const Value& x : hay.list_ref())
                    if (equal(x, needle)) return true;
                return false;
            case K::kDict: return needle.is_string() && hay.find(needle.text()) != nullptr;
            case K::kUndefined: return false;
            default: at(line)(std::string("argument of type '") + kind_name(hay) + "' is not iterable");
        }
    }

    bool compare(const std::string& op, const Value& a, const Value& b, int line) {
        if (op == "==") return equal(a, b);
        if (op == "!=") return !equal(a, b);
        if (op == "in") return contains(b, a, line);
        if (op == "notin") return !contains(b, a, line);
        if (a.is_undefined()) undefined_error(a, line);
        if (b.is_undefined()) undefined_error(b, line);
        int c = order(a, b, at(line));
        if (op == "<") return c < 0;
        if (op == ">") return c > 0;
        if (op == "<=") return c <= 0;
        return c >= 0;
    }

    Value binary(const std::string& op, const Value& a, const Value& b, int line) {
        if (op == "~") {
            Str s = to_str(a);
            str_append(s, to_str(b));
            return Value::string(std::move(s));
        }
        if (a.is_undefined()) undefined_error(a, line);
        if (b.is_undefined()) undefined_error(b, line);
        if (op == "+") {
            if (a.is_string() && b.is_string()) {
                Str s = a.str();
                str_append(s, b.str());
                return Value::string(std::move(s));
            }
            if (a.kind() == K::kList && b.kind() == K::kList) {
                List l = a.list_ref();
                l.insert(l.end(), b.list_ref().begin(), b.list_ref().end());
                return Value::list(std::move(l));
            }
        }
        if (op == "*" && ((a.is_string() && b.kind() == K::kInt) || (b.is_string() && a.kind() == K::kInt))) {
            const Value& s = a.is_string() ? a : b;
            int64_t n = a.is_string() ? b.as_int() : a.as_int();
            Str out;
            for (int64_t k = 0; k < n; ++k) str_append(out, s.str());
            return Value::string(std::move(out));
        }
        if (op == "%" && a.is_string()) at(line)("unsupported construct: string formatting with %");
        if (!a.is_number() || !b.is_number())
            at(line)("unsupported operand types for " + op + ": '" + kind_name(a) + "' and '" + kind_name(b) + "'");
        const bool fl = a.kind() == K::kFloat || b.kind() == K::kFloat;
        const double x = a.as_float(), y = b.as_float();
        const int64_t i = a.as_int(), j = b.as_int();
        if (op == "+") return fl ? Value::number(x + y) : Value::integer(i + j);
        if (op == "-") return fl ? Value::number(x - y) : Value::integer(i - j);
        if (op == "*") return fl ? Value::number(x * y) : Value::integer(i * j);
        if (op == "/") {
            if (y == 0) at(line)("division by zero");
            return Value::number(x / y);
        }
        if (op == "//") {
            if (y == 0) at(line)("division by zero");
            if (fl) return Value::number(std::floor(x / y));
            int64_t q = i / j;
            if ((i % j != 0) && ((i < 0) != (j < 0))) --q;
            return Value::integer(q);
        }
        if (op == "%") {
            if (y == 0) at(line)("modulo by zero");
            if (fl) {
                double r = std::fmod(x, y);
                if (r != 0 && ((r < 0) != (y < 0))) r += y;
                return Value::number(r);
            }
            int64_t r = i % j;
            if (r != 0 && ((r < 0) != (j < 0))) r += j;
            return Value::integer(r);
        }
        if (op == "**") {
            if (!fl && j >= 0) {
                int64_t r = 1;
                for (int64_t k = 0; k < j; ++k) r *= i;
                return Value::integer(r);
            }
            return Value::number(std::pow(x, y));
        }
        at(line)("unknown operator " + op);
    }

    Value call(const Expr& e) {
        const Expr& callee = *e.a[0];
        if (callee.k == Expr::K::kName && callee.s == "raise_exception") {
            Args a = eval_args(e, 1);
            at(e.line)("raise_exception: " + (a.pos.empty() ? std::string() : py_str(a.pos[0])));
        }
        if (callee.k == Expr::K::kAttr) {
            Value obj = eval(*callee.a[0]);
            if (obj.is_undefined()) undefined_error(obj, e.line);
            Args a = eval_args(e, 1);
            if (obj.kind() == K::kDict) {
                if (const Value* v = obj.find(callee.s); v && v->kind() == K::kCallable) return v->fn()->call(a);
            }
            return method(obj, callee.s, a, e.line);
        }
        Value f = eval(callee);
        if (f.kind() != K::kCallable) {
            if (f.is_undefined()) undefined_error(f, e.line);
            at(e.line)(std::string("'") + kind_name(f) + "' object is not callable");
        }
        return f.fn()->call(eval_args(e, 1));
    }

    // ---- methods of str and dict
    static const Value* arg(const Args& a, size_t pos, const char* kw) {
        if (pos < a.pos.size()) return &a.pos[pos];
        for (const auto& [k, v] : a.kw)
            if (k == kw) return &v;
        return nullptr;
    }

    Value split(const Str& s, const Value* sep, int64_t maxsplit, bool from_right, int line) {
        List out;
        const std::string& t = s.text;
        if (!sep || sep->is_none()) {
            // Runs of whitespace, no empty pieces.
            std::vector<std::pair<size_t, size_t>> pieces;
            size_t k = 0, n;
            while (k < t.size()) {
                while (k < t.size() && py_space(cp_at(t, k, &n))) k += n;
                if (k >= t.size()) break;
                size_t b = k;
                while (k < t.size() && !py_space(cp_at(t, k, &n))) k += n;
                pieces.push_back({b, k});
            }
            if (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) > maxsplit + 1) {
                if (from_right) {
                    size_t keep = pieces.size() - static_cast<size_t>(maxsplit);
                    pieces[0] = {pieces[0].first, pieces[keep - 1].second};
                    pieces.erase(pieces.begin() + 1, pieces.begin() + static_cast<long>(keep));
                } else {
                    size_t m = static_cast<size_t>(maxsplit);
                    // The rest after the m-th split keeps its inner whitespace, trailing whitespace stripped.
                    pieces[m] = {pieces[m].first, pieces.back().second};
                    pieces.resize(m + 1);
                }
            }
            for (auto [b, e] : pieces) out.push_back(Value::string(str_sub(s, b, e)));
            return Value::list(std::move(out));
        }
        if (!sep->is_string()) at(line)("split(): the separator must be a string");
        const std::string& d = sep->text();
        if (d.empty()) at(line)("split(): empty separator");
        std::vector<size_t> cuts;  // positions of separators used
        if (!from_right) {
            size_t k = 0;
            while (maxsplit < 0 || static_cast<int64_t>(cuts.size()) < maxsplit) {
                size_t p = t.find(d, k);
                if (p == std::string::npos) break;
                cuts.push_back(p);
                k = p + d.size();
            }
        } else {
            size_t end = t.size();
            std::vector<size_t> rc;
            while (maxsplit < 0 || static_cast<int64_t>(rc.size()) < maxsplit) {
                if (end < d.size()) break;
                size_t p = t.rfind(d, end - d.size());
                if (p == std::string::npos) break;
                rc.push_back(p);
                if (p == 0) break;
                end = p;
            }
            cuts.assign(rc.rbegin(), rc.rend());
        }
        size_t b = 0;
        for (size_t c : cuts) {
            out.push_back(Value::string(str_sub(s, b, c)));
            b = c + d.size();
        }
        out.push_back(Value::string(str_sub(s, b, t.size())));
        return Value::list(std::move(out));
    }

    static std::string map_case(const std::string& s, int mode) {  // 0 upper, 1 lower
        std::string out;
        for (uint32_t c : cps_of(s))
            out += utf8_of(static_cast<uint32_t>(mode == 0 ? utf8proc_toupper(static_cast<utf8proc_int32_t>(c))
                                                           : utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
        return out;
    }
    static std::string title_case(const std::string& s) {
        std::string out;
        bool prev_cased = false;
        for (uint32_t c : cps_of(s)) {
            auto ci = static_cast<utf8proc_int32_t>(c);
            bool cased = utf8proc_toupper(ci) != ci || utf8proc_tolower(ci) != ci;
            out += utf8_of(static_cast<uint32_t>(prev_cased ? utf8proc_tolower(ci) : utf8proc_totitle(ci)));
            prev_cased = cased;
        }
        return out;
    }
    static std::string capitalize(const std::string& s) {
        std::string out;
        bool first = true;
        for (uint32_t c : cps_of(s)) {
            auto ci = static_cast<utf8proc_int32_t>(c);
            out += utf8_of(static_cast<uint32_t>(first ? utf8proc_totitle(ci) : utf8proc_tolower(ci)));
            first = false;
        }
        return out;
    }

    Value replace(const Str& s, const std::string& old, const std::string& rep, int64_t count) {
        Str out;
        const std::string& t = s.text;
        if (old.empty()) {
            // Python inserts `rep` between every character and at both ends.
            std::vector<size_t> b = cp_bounds(t);
            int64_t done = 0;
            for (size_t k = 0; k + 1 < b.size(); ++k) {
                if (count < 0 || done < count) {
                    str_append(out, rep);
                    ++done;
                }
                str_append(out, str_sub(s, b[k], b[k + 1]));
            }
            if (count < 0 || done < count) str_append(out, rep);
            return Value::string(std::move(out));
        }
        size_t k = 0;
        int64_t done = 0;
        while (count < 0 || done < count) {
            size_t p = t.find(old, k);
            if (p == std::string::npos) break;
            str_append(out, str_sub(s, k, p));
            str_append(out, rep);
            k = p + old.size();
            ++done;
        }
        str_append(out, str_sub(s, k, t.size()));
        return Value::string(std::move(out));
    }

    static int64_t cp_index(const std::string& s, size_t byte) {
        return static_cast<int64_t>(cp_count(s.substr(0, byte)));
    }

    Value method(const Value& obj, const std::string& m, const Args& a, int line) {
        if (obj.is_string()) {
            const Str& s = obj.str();
            const std::string& t = s.text;
            auto str_arg = [&](size_t pos, const char* kw) -> const std::string* {
                const Value* v = arg(a, pos, kw);
                if (!v || v->is_none()) return nullptr;
                if (!v->is_string()) at(line)(m + "(): the argument must be a string");
                return &v->text();
            };
            if (m == "strip") return Value::string(py_strip(s, str_arg(0, "chars"), true, true));
            if (m == "lstrip") return Value::string(py_strip(s, str_arg(0, "chars"), true, false));
            if (m == "rstrip") return Value::string(py_strip(s, str_arg(0, "chars"), false, true));
            if (m == "split" || m == "rsplit") {
                const Value* mx = arg(a, 1, "maxsplit");
                return split(s, arg(a, 0, "sep"), mx ? mx->as_int() : -1, m == "rsplit", line);
            }
            if (m == "startswith" || m == "endswith") {
                const Value* p = arg(a, 0, "prefix");
                if (!p) at(line)(m + "() takes one argument");
                std::vector<std::string> cands;
                if (p->kind() == K::kList)
                    for (const Value& x : p->list_ref()) cands.push_back(py_str(x));
                else if (p->is_string())
                    cands.push_back(p->text());
                else
                    at(line)(m + "(): the argument must be a string or a tuple of strings");
                for (const std::string& c : cands) {
                    if (m == "startswith" ? t.compare(0, c.size(), c) == 0 && t.size() >= c.size()
                                          : t.size() >= c.size() && t.compare(t.size() - c.size(), c.size(), c) == 0)
                        return Value::boolean(true);
                }
                return Value::boolean(false);
            }
            if (m == "replace") {
                const std::string* o = str_arg(0, "old");
                const std::string* r = str_arg(1, "new");
                if (!o || !r) at(line)("replace() takes two string arguments");
                const Value* c = arg(a, 2, "count");
                return replace(s, *o, *r, c ? c->as_int() : -1);
            }
            if (m == "upper") return Value::string(map_case(t, 0));
            if (m == "lower") return Value::string(map_case(t, 1));
            if (m == "title") return Value::string(title_case(t));
            if (m == "capitalize") return Value::string(capitalize(t));
            if (m == "find" || m == "rfind" || m == "count") {
                const std::string* sub = str_arg(0, "sub");
                if (!sub) at(line)(m + "() takes a string argument");
                if (a.pos.size() > 1) at(line)("unsupported construct: " + m + "() with start/end");
                if (m == "count") {
                    if (sub->empty()) return Value::integer(static_cast<int64_t>(cp_count(t)) + 1);
                    int64_t n = 0;
                    for (size_t k = t.find(*sub); k != std::string::npos; k = t.find(*sub, k + sub->size())) ++n;
                    return Value::integer(n);
                }
                size_t p = m == "find" ? t.find(*sub) : t.rfind(*sub);
                return Value::integer(p == std::string::npos ? -1 : cp_index(t, p));
            }
            if (m == "join") {
                const Value* it = arg(a, 0, "iterable");
                if (!it) at(line)("join() takes one argument");
                Str out;
                std::vector<Value> items = iterate(*it, line);
                for (size_t k = 0; k < items.size(); ++k) {
                    if (k) str_append(out, s);
                    if (!items[k].is_string()) at(line)("join(): sequence item is not a string");
                    str_append(out, items[k].str());
                }
                return Value::string(std::move(out));
            }
            if (m == "splitlines") {
                List out;
                size_t b = 0;
                for (size_t k = 0; k < t.size(); ++k) {
                    if (t[k] == '\n' || t[k] == '\r') {
                        out.push_back(Value::string(str_sub(s, b, k)));
                        if (t[k] == '\r' && k + 1 < t.size() && t[k + 1] == '\n') ++k;
                        b = k + 1;
                    }
                }
                if (b < t.size()) out.push_back(Value::string(str_sub(s, b, t.size())));
                return Value::list(std::move(out));
            }
            if (m == "isdigit" || m == "isspace" || m == "isalpha" || m == "isalnum" || m == "isupper" || m == "islower") {
                std::vector<uint32_t> cps = cps_of(t);
                if (cps.empty()) return Value::boolean(false);
                bool any_cased = false;
                for (uint32_t c : cps) {
                    auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
                    bool letter = cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO;
                    bool digit = cat == UTF8PROC_CATEGORY_ND;
                    if (m == "isdigit" && !digit) return Value::boolean(false);
                    if (m == "isspace" && !py_space(c)) return Value::boolean(false);
                    if (m == "isalpha" && !letter) return Value::boolean(false);
                    if (m == "isalnum" && !letter && !digit && cat != UTF8PROC_CATEGORY_NL && cat != UTF8PROC_CATEGORY_NO) return Value::boolean(false);
                    if (m == "isupper" && cat == UTF8PROC_CATEGORY_LL) return Value::boolean(false);
                    if (m == "islower" && cat == UTF8PROC_CATEGORY_LU) return Value::boolean(false);
                    any_cased = any_cased || cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT;
                }
                if (m == "isupper" || m == "islower") return Value::boolean(any_cased);
                return Value::boolean(true);
            }
        } else if (obj.kind() == K::kDict && !obj.is_namespace()) {
            if (m == "items") {
                List out;
                for (const auto& [k, v] : obj.dict_ref()) out.push_back(Value::tuple({Value::string(k), v}));
                return Value::list(std::move(out));
            }
            if (m == "keys") {
                List out;
                for (const auto& kv : obj.dict_ref()) out.push_back(Value::string(kv.first));
                return Value::list(std::move(out));
            }
            if (m == "values") {
                List out;
                for (const auto& kv : obj.dict_ref()) out.push_back(kv.second);
                return Value::list(std::move(out));
            }
            if (m == "get") {
                const Value* k = arg(a, 0, "key");
                if (!k) at(line)("get() takes a key");
                if (k->is_string())
                    if (const Value* v = obj.find(k->text())) return *v;
                const Value* d = arg(a, 1, "default");
                return d ? *d : Value::none();
            }
        }
        at(line)(std::string("'") + kind_name(obj) + "' object has no method '" + m + "'");
    }

    // ---- filters
    Value attr_path(const Value& v, const std::string& path, int line) {
        Value cur = v;
        size_t b = 0;
        while (true) {
            size_t d = path.find('.', b);
            std::string part = path.substr(b, d == std::string::npos ? std::string::npos : d - b);
            if (cur.is_undefined()) return cur;
            bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
            cur = digits && cur.kind() == K::kList ? getitem(cur, Value::integer(std::stoll(part)), line) : getattr(cur, part, line);
            if (d == std::string::npos) return cur;
            b = d + 1;
        }
    }

    Value filter(const std::string& f, const Value& v, const Args& a, int line) {
        const Fail fail = at(line);
        auto need_str = [&]() -> Str {
            if (v.is_undefined()) return Str{};
            return to_str(v);
        };
        if (f == "tojson") {
            JsonOpts o;
            if (const Value* x = arg(a, 0, "indent"); x && !x->is_none()) {
                o.indent = static_cast<int>(x->as_int());
                o.item_sep = ",";
            }
            if (const Value* x = arg(a, 99, "ensure_ascii")) o.ensure_ascii = truthy(*x);
            if (const Value* x = arg(a, 99, "sort_keys")) o.sort_keys = truthy(*x);
            if (const Value* x = arg(a, 99, "separators"); x && x->kind() == K::kList && x->list_ref().size() == 2) {
                o.item_sep = py_str(x->list_ref()[0]);
                o.key_sep = py_str(x->list_ref()[1]);
            }
            std::string out;
            to_json(v, o, 0, out, fail);
            return Value::string(out);
        }
        if (f == "trim") {
            const Value* chars = arg(a, 0, "chars");
            std::string c = chars && chars->is_string() ? chars->text() : "";
            return Value::string(py_strip(need_str(), chars && chars->is_string() ? &c : nullptr, true, true));
        }
        if (f == "length" || f == "count") {
            switch (v.kind()) {
                case K::kUndefined: return Value::integer(0);
                case K::kString: return Value::integer(static_cast<int64_t>(cp_count(v.text())));
                case K::kList: return Value::integer(static_cast<int64_t>(v.list_ref().size()));
                case K::kDict: return Value::integer(static_cast<int64_t>(v.dict_ref().size()));
                default: fail(std::string("object of type '") + kind_name(v) + "' has no len()");
            }
        }
        if (f == "string") return Value::string(to_str(v));
        if (f == "safe") return v;
        if (f == "escape" || f == "e") {
            std::string out;
            for (char c : py_str(v)) {
                switch (c) {
                    case '&': out += "&amp;"; break;
                    case '<': out += "&lt;"; break;
                    case '>': out += "&gt;"; break;
                    case '"': out += "&#34;"; break;
                    case '\'': out += "&#39;"; break;
                    default: out += c;
                }
            }
            return Value::string(out);
        }
        if (f == "list") return Value::list(iterate(v, line));
        if (f == "upper") return Value::string(map_case(py_str(v), 0));
        if (f == "lower") return Value::string(map_case(py_str(v), 1));
        if (f == "title") return Value::string(title_case(py_str(v)));
        if (f == "capitalize") return Value::string(capitalize(py_str(v)));
        if (f == "replace") {
            const Value* o = arg(a, 0, "old");
            const Value* r = arg(a, 1, "new");
            if (!o || !r) fail("replace takes two arguments");
            const Value* c = arg(a, 2, "count");
            return replace(need_str(), py_str(*o), py_str(*r), c && !c->is_none() ? c->as_int() : -1);
        }
        if (f == "default" || f == "d") {
            const Value* b = arg(a, 1, "boolean");
            const bool use = v.is_undefined() || (b && truthy(*b) && !truthy(v));
            if (!use) return v;
            const Value* d = arg(a, 0, "default_value");
            return d ? *d : Value::string("");
        }
        if (f == "join") {
            const Value* sep = arg(a, 0, "d");
            const Value* attr = arg(a, 1, "attribute");
            Str out;
            std::vector<Value> items = iterate(v, line);
            for (size_t k = 0; k < items.size(); ++k) {
                if (k && sep) str_append(out, to_str(*sep));
                str_append(out, to_str(attr ? attr_path(items[k], py_str(*attr), line) : items[k]));
            }
            return Value::string(std::move(out));
        }
        if (f == "first" || f == "last") {
            std::vector<Value> items = iterate(v, line);
            if (items.empty()) return Value::undefined(f);
            return f == "first" ? items.front() : items.back();
        }
        if (f == "reverse") {
            if (v.is_string()) {
                std::vector<size_t> b = cp_bounds(v.text());
                Str out;
                for (size_t k = b.size() - 1; k-- > 0;) str_append(out, str_sub(v.str(), b[k], b[k + 1]));
                return Value::string(std::move(out));
            }
            std::vector<Value> items = iterate(v, line);
            std::reverse(items.begin(), items.end());
            return Value::list(std::move(items));
        }
        if (f == "map") {
            std::vector<Value> items = iterate(v, line);
            List out;
            if (const Value* at_ = arg(a, 99, "attribute")) {
                const Value* dflt = arg(a, 99, "default");
                for (const Value& x : items) {
                    Value r = attr_path(x, py_str(*at_), line);
                    out.push_back(r.is_undefined() && dflt ? *dflt : r);
                }
                return Value::list(std::move(out));
            }
            if (a.pos.empty() || !a.pos[0].is_string()) fail("map needs a filter name or attribute=");
            const std::string name = a.pos[0].text();
            if (!detail::supported_filter(name)) fail("unsupported construct: filter '" + name + "' in map()");
            Args rest;
            rest.pos.assign(a.pos.begin() + 1, a.pos.end());
            rest.kw = a.kw;
            for (const Value& x : items) out.push_back(filter(name, x, rest, line));
            return Value::list(std::move(out));
        }
        if (f == "selectattr" || f == "rejectattr" || f == "select" || f == "reject") {
            const bool by_attr = f == "selectattr" || f == "rejectattr";
            const bool keep_if = f == "selectattr" || f == "select";
            std::vector<Value> items = iterate(v, line);
            size_t k0 = by_attr ? 1 : 0;
            if (by_attr && (a.pos.empty() || !a.pos[0].is_string())) fail(f + " needs an attribute name");
            std::string tname = a.pos.size() > k0 ? py_str(a.pos[k0]) : "";
            if (!tname.empty() && !detail::supported_test(tname)) fail("unsupported construct: test '" + tname + "' in " + f + "()");
            Args targs;
            if (a.pos.size() > k0 + 1) targs.pos.assign(a.pos.begin() + static_cast<long>(k0) + 1, a.pos.end());
            List out;
            for (const Value& x : items) {
                Value t = by_attr ? attr_path(x, a.pos[0].text(), line) : x;
                bool r = tname.empty() ? truthy(t) : test(tname, t, targs, line);
                if (r == keep_if) out.push_back(x);
            }
            return Value::list(std::move(out));
        }
        if (f == "items") {
            if (v.is_undefined()) return Value::list();
            if (v.kind() != K::kDict) fail("items: not a mapping");
            return method(v, "items", Args{}, line);
        }
        if (f == "dictsort") {
            if (v.kind() != K::kDict) fail("dictsort: not a mapping");
            const Value* by = arg(a, 1, "by");
            const Value* rev = arg(a, 2, "reverse");
            List out = method(v, "items", Args{}, line).list_ref();
            const bool by_value = by && py_str(*by) == "value";
            std::stable_sort(out.begin(), out.end(), [&](const Value& x, const Value& y) {
                const Value &p = x.list_ref()[by_value ? 1 : 0], &q = y.list_ref()[by_value ? 1 : 0];
                if (p.is_string() && q.is_string()) return map_case(p.text(), 1) < map_case(q.text(), 1);
                return order(p, q, fail) < 0;
            });
            if (rev && truthy(*rev)) std::reverse(out.begin(), out.end());
            return Value::list(std::move(out));
        }
        if (f == "sort" || f == "unique" || f == "min" || f == "max") {
            std::vector<Value> items = iterate(v, line);
            const Value* attr = arg(a, f == "sort" ? 2 : 1, "attribute");
            const Value* cs = arg(a, f == "sort" ? 1 : 0, "case_sensitive");
            const bool case_sensitive = cs && truthy(*cs);
            auto key = [&](const Value& x) {
                Value k = attr ? attr_path(x, py_str(*attr), line) : x;
                if (!case_sensitive && k.is_string()) return Value::string(map_case(k.text(), 1));
                return k;
            };
            if (f == "unique") {
                List out;
                std::vector<Value> seen;
                for (const Value& x : items) {
                    Value k = key(x);
                    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, k); })) {
                        seen.push_back(k);
                        out.push_back(x);
                    }
                }
                return Value::list(std::move(out));
            }
            if (f == "sort") {
                const Value* rev = arg(a, 0, "reverse");
                std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) { return order(key(x), key(y), fail) < 0; });
                if (rev && truthy(*rev)) std::reverse(items.begin(), items.end());
                return Value::list(std::move(items));
            }
            if (items.empty()) return Value::undefined(f);
            size_t best = 0;
            for (size_t k = 1; k < items.size(); ++k) {
                int c = order(key(items[k]), key(items[best]), fail);
                if (f == "min" ? c < 0 : c > 0) best = k;
            }
            return items[best];
        }
        if (f == "sum") {
            const Value* attr = arg(a, 0, "attribute");
            const Value* start = arg(a, 1, "start");
            Value acc = start ? *start : Value::integer(0);
            for (const Value& x : iterate(v, line)) acc = binary("+", acc, attr ? attr_path(x, py_str(*attr), line) : x, line);
            return acc;
        }
        if (f == "int") {
            const Value* d = arg(a, 0, "default");
            Value dflt = d ? *d : Value::integer(0);
            if (v.is_number()) return Value::integer(v.as_int());
            if (v.is_string()) {
                try {
                    size_t used = 0;
                    std::string t = py_strip(v.str(), nullptr, true, true).text;
                    long long r = std::stoll(t, &used, 10);
                    if (used == t.size()) return Value::integer(r);
                    double fl = std::stod(t, &used);
                    if (used == t.size()) return Value::integer(static_cast<int64_t>(fl));
                } catch (const std::exception&) {
                }
            }
            return dflt;
        }
        if (f == "float") {
            const Value* d = arg(a, 0, "default");
            if (v.is_number()) return Value::number(v.as_float());
            if (v.is_string()) {
                try {
                    size_t used = 0;
                    std::string t = py_strip(v.str(), nullptr, true, true).text;
                    double r = std::stod(t, &used);
                    if (used == t.size()) return Value::number(r);
                } catch (const std::exception&) {
                }
            }
            return d ? *d : Value::number(0.0);
        }
        if (f == "abs") {
            if (!v.is_number()) fail("abs: not a number");
            return v.kind() == K::kFloat ? Value::number(std::fabs(v.as_float())) : Value::integer(std::llabs(v.as_int()));
        }
        if (f == "round") {
            const Value* p = arg(a, 0, "precision");
            const Value* m = arg(a, 1, "method");
            int prec = p ? static_cast<int>(p->as_int()) : 0;
            std::string method_name = m ? py_str(*m) : "common";
            double scale = std::pow(10.0, prec), x = v.as_float() * scale;
            // "common" is Python's round(): halves to even.
            double r = method_name == "floor" ? std::floor(x) : method_name == "ceil" ? std::ceil(x) : std::nearbyint(x);
            return Value::number(r / scale);
        }
        if (f == "indent") {
            const Value* w = arg(a, 0, "width");
            const Value* first = arg(a, 1, "first");
            const Value* blank = arg(a, 2, "blank");
            std::string pad = w ? (w->is_string() ? w->text() : std::string(static_cast<size_t>(w->as_int()), ' ')) : "    ";
            std::string t = py_str(v), out;
            std::vector<std::string> lines;
            size_t b = 0;
            for (size_t k = 0; k <= t.size(); ++k)
                if (k == t.size() || t[k] == '\n') {
                    lines.push_back(t.substr(b, k - b));
                    b = k + 1;
                }
            for (size_t k = 0; k < lines.size(); ++k) {
                if (k) out += '\n';
                const bool do_pad = (k > 0 || (first && truthy(*first))) && (!lines[k].empty() || (blank && truthy(*blank)));
                out += (do_pad ? pad : "") + lines[k];
            }
            return Value::string(out);
        }
        if (f == "attr") {
            if (a.pos.empty()) fail("attr needs a name");
            return getattr(v, py_str(a.pos[0]), line);
        }
        fail("unsupported construct: filter '" + f + "'");
    }

    // ---- tests
    bool test(const std::string& t, const Value& v, const Args& a, int line) {
        const Fail fail = at(line);
        auto other = [&]() -> const Value& {
            if (a.pos.empty()) fail("test '" + t + "' needs an argument");
            return a.pos[0];
        };
        if (t == "defined") return !v.is_undefined();
        if (t == "undefined") return v.is_undefined();
        if (t == "none") return v.is_none();
        if (t == "string") return v.is_string();
        if (t == "number") return v.kind() == K::kInt || v.kind() == K::kFloat;
        if (t == "integer") return v.kind() == K::kInt;
        if (t == "float") return v.kind() == K::kFloat;
        if (t == "boolean") return v.kind() == K::kBool;
        if (t == "true") return v.kind() == K::kBool && v.as_bool();
        if (t == "false") return v.kind() == K::kBool && !v.as_bool();
        if (t == "mapping") return v.kind() == K::kDict;
        if (t == "iterable") return v.kind() == K::kList || v.kind() == K::kDict || v.is_string() || v.is_undefined();
        if (t == "sequence") return v.kind() == K::kList || v.kind() == K::kDict || v.is_string() || v.is_undefined();
        if (t == "callable") return v.kind() == K::kCallable;
        if (t == "in") return contains(other(), v, line);
        if (t == "eq" || t == "equalto" || t == "==") return equal(v, other());
        if (t == "ne" || t == "!=") return !equal(v, other());
        if (t == "sameas") {
            const Value& o = other();
            if (v.kind() != o.kind()) return false;
            if (v.kind() == K::kNone || v.kind() == K::kUndefined) return true;
            if (v.kind() == K::kBool) return v.as_bool() == o.as_bool();
            if (v.kind() == K::kList) return &v.list_ref() == &o.list_ref();
            if (v.kind() == K::kDict) return &v.dict_ref() == &o.dict_ref();
            return equal(v, o);
        }
        if (t == "lt" || t == "<") return compare("<", v, other(), line);
        if (t == "gt" || t == ">") return compare(">", v, other(), line);
        if (t == "le" || t == "<=") return compare("<=", v, other(), line);
        if (t == "ge" || t == ">=") return compare(">=", v, other(), line);
        if (t == "odd" || t == "even" || t == "divisibleby") {
            if (!v.is_number()) fail("test '" + t + "' needs a number");
            int64_t n = v.as_int();
            if (t == "odd") return n % 2 != 0;
            if (t == "even") return n % 2 == 0;
            int64_t d = other().as_int();
            if (d == 0) fail("divisibleby 0");
            return n % d == 0;
        }
        if (t == "lower") return v.is_string() && map_case(v.text(), 1) == v.text();
        if (t == "upper") return v.is_string() && map_case(v.text(), 0) == v.text();
        fail("unsupported construct: test '" + t + "'");
    }
};

const char* const kFilters[] = {"tojson", "trim", "length", "count", "string", "safe", "escape", "e", "list",
                                "upper", "lower", "title", "capitalize", "replace", "default", "d", "join",
                                "first", "last", "reverse", "map", "selectattr", "rejectattr", "select", "reject",
                                "items", "dictsort", "sort", "unique", "min", "max", "sum", "int", "float", "abs",
                                "round", "indent", "attr"};
const char* const kTests[] = {"defined", "undefined", "none", "string", "number", "integer", "float", "boolean",
                              "true", "false", "mapping", "iterable", "sequence", "callable", "in", "eq",
                              "equalto", "==", "ne", "!=", "sameas", "lt", "<", "gt", ">", "le", "<=", "ge", ">=",
                              "odd", "even", "divisibleby", "lower", "upper"};
const char* const kGlobals[] = {"range", "namespace", "dict", "strftime_now", "raise_exception"};
const char* const kMethods[] = {"strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith",
                                "replace", "upper", "lower", "title", "capitalize", "find", "rfind", "count",
                                "join", "splitlines", "isdigit", "isspace", "isalpha", "isalnum", "isupper",
                                "islower", "items", "keys", "values", "get", "cycle"};

template <size_t N>
bool in_list(const char* const (&l)[N], const std::string& n) {
    for (const char* x : l)
        if (n == x) return true;
    return false;
}

}  // namespace

namespace detail {
bool supported_filter(const std::string& n) { return in_list(kFilters, n); }
bool supported_test(const std::string& n) { return in_list(kTests, n); }
bool supported_global(const std::string& n) { return in_list(kGlobals, n); }
bool supported_method(const std::string& n) { return in_list(kMethods, n); }
}  // namespace detail

Template::Template(const std::string& source, std::string name) : name_(std::move(name)) {
    prog_ = std::make_shared<const detail::Program>(detail::parse(source, name_));
}

Output Template::render(const Value& context) const {
    Interp in(name_, context);
    return in.run(prog_->body);
}

bool Template::has_generation() const { return prog_->has_generation; }

}  // namespace cuset::jinja
