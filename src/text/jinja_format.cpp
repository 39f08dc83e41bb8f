// Python's view of template values for the Jinja evaluator: str() and repr(), truth, equality and
// order, json.dumps (transformers' tojson), markupsafe's escaping, `%` formatting and str.format
// with its format-spec mini-language. Output sizes are checked as they grow (Interp::check_size).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "cuset/core/error.h"
#include "jinja_eval.h"

namespace cuset::jinja::detail {

namespace {
constexpr int kMaxValueDepth = 256;  // nesting of lists and dicts that printing, JSON and == follow
}

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

std::string py_repr_str(std::string_view s) {
    const bool dq = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
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

const char* type_name(const Value& v) {
    switch (v.kind()) {
        case K::kUndefined: return "Undefined";
        case K::kNone: return "NoneType";
        case K::kBool: return "bool";
        case K::kInt: return "int";
        case K::kFloat: return "float";
        case K::kString: return v.is_markup() ? "Markup" : "str";
        case K::kList: return v.is_group() ? "_GroupTuple" : v.is_tuple() ? "tuple" : "list";
        case K::kDict: return v.is_namespace() ? "Namespace" : "dict";
        case K::kCallable: return "function";
        case K::kIterator: return v.iter().type_name.c_str();
    }
    return "object";
}

bool truthy(const Value& v) {
    switch (v.kind()) {
        case K::kUndefined:
        case K::kNone: return false;
        case K::kBool:
        case K::kInt: return v.as_int() != 0;
        case K::kFloat: return v.as_float() != 0.0;
        case K::kString: return !v.text().empty();
        case K::kList: return !v.list_ref().empty();
        case K::kDict: return v.is_namespace() || !v.dict_ref().empty();
        case K::kCallable:
        case K::kIterator: return true;
    }
    return false;
}

namespace {

bool equal_at(const Value& a, const Value& b, int depth) {
    if (a.is_number() && b.is_number()) {
        if (a.kind() == K::kFloat || b.kind() == K::kFloat) return a.as_float() == b.as_float();
        return a.as_int() == b.as_int();
    }
    if (a.kind() != b.kind()) return false;
    if (depth > kMaxValueDepth) return false;
    switch (a.kind()) {
        case K::kUndefined:
        case K::kNone: return true;
        case K::kString: return a.text() == b.text();
        case K::kList: {
            if (a.is_tuple() != b.is_tuple()) return false;
            const List &x = a.list_ref(), &y = b.list_ref();
            if (x.size() != y.size()) return false;
            for (size_t k = 0; k < x.size(); ++k)
                if (!equal_at(x[k], y[k], depth + 1)) return false;
            return true;
        }
        case K::kDict: {
            if (a.is_namespace() || b.is_namespace()) return &a.dict_ref() == &b.dict_ref();
            if (a.dict_ref().size() != b.dict_ref().size()) return false;
            for (const auto& [k, v] : a.dict_ref()) {
                const Value* o = b.dict_ref().find(k);
                if (!o || !equal_at(v, *o, depth + 1)) return false;
            }
            return true;
        }
        case K::kCallable: return a.fn() == b.fn();
        case K::kIterator: return &a.iter() == &b.iter();
        default: return false;
    }
}

bool hashable_at(const Value& v, int depth) {
    if (v.kind() == K::kDict) return v.is_namespace();
    if (v.kind() != K::kList) return true;
    if (!v.is_tuple() || depth > kMaxValueDepth) return false;
    for (const Value& x : v.list_ref())
        if (!hashable_at(x, depth + 1)) return false;
    return true;
}

}  // namespace

bool equal(const Value& a, const Value& b) { return equal_at(a, b, 0); }
bool hashable(const Value& v) { return hashable_at(v, 0); }

int Interp::order(const Value& a, const Value& b, int line) {
    if (a.is_number() && b.is_number()) {
        if (a.kind() != K::kFloat && b.kind() != K::kFloat) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
        const double x = a.as_float(), y = b.as_float();
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (a.is_string() && b.is_string()) {
        const int c = a.text().compare(b.text());  // UTF-8 byte order is code point order
        return c < 0 ? -1 : c > 0;
    }
    if (a.kind() == K::kList && b.kind() == K::kList && a.is_tuple() == b.is_tuple()) {
        DepthGuard g(*this, line);
        const List &x = a.list_ref(), &y = b.list_ref();
        for (size_t k = 0; k < x.size() && k < y.size(); ++k) {
            step();
            if (!equal(x[k], y[k])) {
                const int c = order(x[k], y[k], line);
                if (c == 2) fail(line, std::string("'<' not supported between instances of '") + type_name(x[k]) + "' and '" + type_name(y[k]) + "'");
                return c;
            }
        }
        return x.size() < y.size() ? -1 : x.size() > y.size();
    }
    return 2;
}

// ---------------------------------------------------------------- str() and repr()

namespace {
void repr_into(Interp& in, const Value& v, std::string& out, int depth, int line);

void str_into(Interp& in, const Value& v, std::string& out, int depth, int line) {
    switch (v.kind()) {
        case K::kUndefined: return;
        case K::kNone: out += "None"; return;
        case K::kBool: out += v.as_bool() ? "True" : "False"; return;
        case K::kInt: out += std::to_string(v.as_int()); return;
        case K::kFloat: out += py_float(v.as_float()); return;
        case K::kString: out += v.text(); return;
        case K::kList: {
            if (depth > kMaxValueDepth) in.fail(line, "maximum recursion depth exceeded while getting the repr of an object");
            const List& l = v.list_ref();
            out += v.is_tuple() ? "(" : "[";
            for (size_t k = 0; k < l.size(); ++k) {
                if (k) out += ", ";
                repr_into(in, l[k], out, depth + 1, line);
                in.check_size(out.size(), line);
            }
            out += v.is_tuple() ? (l.size() == 1 ? ",)" : ")") : "]";
            return;
        }
        case K::kDict: {
            if (depth > kMaxValueDepth) in.fail(line, "maximum recursion depth exceeded while getting the repr of an object");
            if (v.is_namespace()) out += "<Namespace ";
            out += "{";
            bool first = true;
            for (const auto& [k, x] : v.dict_ref()) {
                if (!first) out += ", ";
                first = false;
                repr_into(in, k, out, depth + 1, line);
                out += ": ";
                repr_into(in, x, out, depth + 1, line);
                in.check_size(out.size(), line);
            }
            out += "}";
            if (v.is_namespace()) out += ">";
            return;
        }
        case K::kCallable: out += "<function " + v.fn()->name + ">"; return;
        case K::kIterator: out += "<" + v.iter().type_name + " object>"; return;
    }
}

void repr_into(Interp& in, const Value& v, std::string& out, int depth, int line) {
    if (v.is_undefined()) {
        out += "Undefined";  // repr(Undefined); str() of it is empty
    } else if (v.is_markup()) {
        out += "Markup(" + py_repr_str(v.text()) + ")";
    } else if (v.is_string()) {
        out += py_repr_str(v.text());
    } else {
        str_into(in, v, out, depth, line);
    }
}
}  // namespace

std::string Interp::py_str(const Value& v, int line) {
    std::string out;
    str_into(*this, v, out, 0, line);
    return out;
}

std::string Interp::py_repr(const Value& v, int line) {
    std::string out;
    repr_into(*this, v, out, 0, line);
    return out;
}

Str Interp::to_str(const Value& v, int line) {
    if (v.is_string()) return v.str();
    Str s;
    s.text = py_str(v, line);
    use_bytes(s.text.size(), line);
    return s;
}

// ---------------------------------------------------------------- json.dumps

namespace {
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
std::string json_float(double f) {
    return std::isnan(f) ? "NaN" : std::isinf(f) ? (f > 0 ? "Infinity" : "-Infinity") : py_float(f);
}
}  // namespace

void Interp::to_json(const Value& v, const JsonOpts& o, int level, std::string& out, int line) {
    step();
    check_size(out.size(), line);
    if (level > kMaxValueDepth) fail(line, "tojson: Circular reference detected or nesting too deep");
    auto nl = [&](int lv) {
        if (o.indent < 0) return;
        out += '\n';
        const size_t n = o.indent_text.size() * static_cast<size_t>(lv);
        check_size(out.size() + n, line);
        for (int k = 0; k < lv; ++k) out += o.indent_text;
    };
    switch (v.kind()) {
        case K::kNone: out += "null"; return;
        case K::kBool: out += v.as_bool() ? "true" : "false"; return;
        case K::kInt: out += std::to_string(v.as_int()); return;
        case K::kFloat: out += json_float(v.as_float()); return;
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
                to_json(l[k], o, level + 1, out, line);
            }
            nl(level);
            out += ']';
            return;
        }
        case K::kDict: {
            if (v.is_namespace()) break;
            std::vector<const Dict::Item*> items;
            for (const auto& kv : v.dict_ref()) items.push_back(&kv);
            if (o.sort_keys)
                std::stable_sort(items.begin(), items.end(), [&](const Dict::Item* a, const Dict::Item* b) {
                    const int c = order(a->first, b->first, line);
                    if (c == 2)
                        fail(line, std::string("'<' not supported between instances of '") + type_name(b->first) + "' and '" +
                                       type_name(a->first) + "'");
                    return c < 0;
                });
            if (items.empty()) {
                out += "{}";
                return;
            }
            out += '{';
            for (size_t k = 0; k < items.size(); ++k) {
                if (k) out += o.item_sep;
                nl(level + 1);
                const Value& key = items[k]->first;
                switch (key.kind()) {
                    case K::kString: json_str(key.text(), o.ensure_ascii, out); break;
                    case K::kInt: out += "\"" + std::to_string(key.as_int()) + "\""; break;
                    case K::kBool: out += key.as_bool() ? "\"true\"" : "\"false\""; break;
                    case K::kNone: out += "\"null\""; break;
                    case K::kFloat: out += "\"" + json_float(key.as_float()) + "\""; break;
                    default: fail(line, std::string("keys must be str, int, float, bool or None, not ") + type_name(key));
                }
                out += o.key_sep;
                to_json(items[k]->second, o, level + 1, out, line);
            }
            nl(level);
            out += '}';
            return;
        }
        default: break;
    }
    fail(line, std::string("Object of type ") + type_name(v) + " is not JSON serializable");
}

// ---------------------------------------------------------------- Markup

Str Interp::html_escape(const Value& v, int line) {
    if (v.is_markup()) return v.str();
    Str s = v.is_string() ? v.str() : to_str(v, line);
    if (s.text.find_first_of("&<>\"'") == std::string::npos) return s;
    Str out;
    size_t run = 0;
    for (size_t k = 0; k < s.text.size(); ++k) {
        const char* rep = nullptr;
        switch (s.text[k]) {
            case '&': rep = "&amp;"; break;
            case '<': rep = "&lt;"; break;
            case '>': rep = "&gt;"; break;
            case '"': rep = "&#34;"; break;
            case '\'': rep = "&#39;"; break;
            default: continue;
        }
        str_append(out, str_sub(s, run, k));  // the unchanged run keeps its provenance
        str_append(out, std::string_view(rep));
        run = k + 1;
    }
    str_append(out, str_sub(s, run, s.text.size()));
    check_size(out.text.size(), line);
    use_bytes(out.text.size(), line);
    return out;
}

Value Interp::markup_arg(const Value& v, int line) {
    if (v.is_string() && !v.is_markup()) return Value::markup(html_escape(v, line));
    return v;
}

// ---------------------------------------------------------------- format specs

namespace {

struct Spec {
    std::string fill = " ";
    char align = 0;  // < > ^ =
    char sign = 0;   // + - ' '
    bool alt = false, zero = false;
    int64_t width = -1, precision = -1;
    char grouping = 0;  // , _
    char type = 0;
};

size_t cp_len(const std::string& s) { return cp_count(s); }

std::string pad(const std::string& body, const Spec& s, char default_align, size_t sign_len = 0) {
    const size_t n = cp_len(body);
    if (s.width < 0 || static_cast<size_t>(s.width) <= n) return body;
    const size_t fill_n = static_cast<size_t>(s.width) - n;
    std::string fill;
    for (size_t k = 0; k < fill_n; ++k) fill += s.fill;
    const char a = s.align ? s.align : default_align;
    if (a == '<') return body + fill;
    if (a == '>') return fill + body;
    if (a == '=') return body.substr(0, sign_len) + fill + body.substr(sign_len);
    std::string left, right;
    for (size_t k = 0; k < fill_n / 2; ++k) left += s.fill;
    for (size_t k = 0; k < fill_n - fill_n / 2; ++k) right += s.fill;
    return left + body + right;
}

std::string group(const std::string& digits, char sep, size_t every) {
    std::string out;
    const size_t n = digits.size();
    for (size_t k = 0; k < n; ++k) {
        if (k && (n - k) % every == 0) out += sep;
        out += digits[k];
    }
    return out;
}

}  // namespace

// format(v, spec) for str, int, bool and float (Python's format-spec mini-language).
// A format spec of Python's mini-language ([[fill]align][sign][z][#][0][width][,|_][.precision][type]),
// read; widths and precisions bounded as strings are.
static Spec parse_spec(Interp& in, const std::string& spec_text, int line) {
    Spec s;
    size_t p = 0;
    const std::string& t = spec_text;
    auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
    {
        size_t n0;
        cp_at(t, 0, &n0);
        if (t.size() > n0 && is_align(t[n0])) {
            s.fill = t.substr(0, n0);
            s.align = t[n0];
            p = n0 + 1;
        } else if (is_align(t[0])) {
            s.align = t[0];
            p = 1;
        }
    }
    if (p < t.size() && (t[p] == '+' || t[p] == '-' || t[p] == ' ')) s.sign = t[p++];
    if (p < t.size() && t[p] == 'z') ++p;
    if (p < t.size() && t[p] == '#') s.alt = true, ++p;
    if (p < t.size() && t[p] == '0') {
        s.zero = true;
        ++p;
    }
    auto number = [&](int64_t* out) {
        int64_t v = 0;
        bool any = false;
        while (p < t.size() && std::isdigit(static_cast<unsigned char>(t[p]))) {
            v = v * 10 + (t[p++] - '0');
            any = true;
            if (v > 1'000'000'000) in.fail(line, "Too many decimal digits in format string");
        }
        if (any) *out = v;
    };
    number(&s.width);
    if (s.zero && s.width < 0) s.width = 0;
    if (p < t.size() && (t[p] == ',' || t[p] == '_')) s.grouping = t[p++];
    if (p < t.size() && t[p] == '.') {
        ++p;
        s.precision = 0;
        number(&s.precision);
    }
    if (p < t.size()) s.type = t[p++];
    if (p != t.size()) in.fail(line, "Invalid format specifier '" + t + "'");
    if (s.width >= 0) in.check_size(static_cast<size_t>(s.width), line);
    if (s.precision >= 0) in.check_size(static_cast<size_t>(s.precision), line);
    if (s.zero && !s.align) {
        s.fill = "0";
        s.align = '=';
    }
    return s;
}

static std::string format_value(Interp& in, const Value& v, const std::string& spec_text, int line) {
    if (spec_text.empty()) return in.py_str(v, line);
    const Spec s = parse_spec(in, spec_text, line);
    if (v.is_string()) {
        if (s.type && s.type != 's') in.fail(line, std::string("Unknown format code '") + s.type + "' for object of type 'str'");
        if (s.sign) in.fail(line, "Sign not allowed in string format specifier");
        std::string body = v.text();
        if (s.precision >= 0) {
            std::vector<size_t> b = cp_bounds(body);
            if (static_cast<size_t>(s.precision) < b.size() - 1) body = body.substr(0, b[static_cast<size_t>(s.precision)]);
        }
        if (s.align == '=') in.fail(line, "'=' alignment not allowed in string format specifier");
        return pad(body, s, '<');
    }
    const bool is_int = v.kind() == K::kInt || v.kind() == K::kBool;
    if (!is_int && v.kind() != K::kFloat)
        in.fail(line, std::string("unsupported format string passed to ") + type_name(v) + ".__format__");
    if (v.kind() == K::kBool && !s.type) return pad(in.py_str(v, line), s, '<');
    char ty = s.type;
    if (is_int && (ty == 0 || ty == 'd' || ty == 'n' || ty == 'b' || ty == 'o' || ty == 'x' || ty == 'X' || ty == 'c')) {
        if (s.precision >= 0) in.fail(line, "Precision not allowed in integer format specifier");
        const int64_t i = v.as_int();
        if (ty == 'c') return pad(utf8_of(static_cast<uint32_t>(i)), s, '<');
        const bool neg = i < 0;
        uint64_t u = neg ? 0 - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
        std::string digits;
        const int base = ty == 'b' ? 2 : ty == 'o' ? 8 : (ty == 'x' || ty == 'X') ? 16 : 10;
        do {
            const int d = static_cast<int>(u % static_cast<uint64_t>(base));
            digits.insert(digits.begin(), static_cast<char>(d < 10 ? '0' + d : (ty == 'X' ? 'A' : 'a') + d - 10));
            u /= static_cast<uint64_t>(base);
        } while (u);
        if (s.grouping) digits = group(digits, s.grouping, base == 10 ? 3 : 4);
        std::string prefix = neg ? "-" : s.sign == '+' ? "+" : s.sign == ' ' ? " " : "";
        if (s.alt && base != 10) prefix += std::string("0") + (ty == 'b' ? 'b' : ty == 'o' ? 'o' : ty);
        return pad(prefix + digits, s, '>', prefix.size());
    }
    // Floats (and ints formatted as floats).
    if (ty && !std::strchr("eEfFgG%", ty))
        in.fail(line, std::string("Unknown format code '") + ty + "' for object of type '" + type_name(v) + "'");
    double f = v.as_float();
    std::string body;
    const bool neg = std::signbit(f) && !std::isnan(f);
    const double a = std::fabs(f);
    if (ty == 0 && s.precision < 0) {
        body = is_int ? std::to_string(static_cast<uint64_t>(a)) : py_float(a);
    } else {
        int prec = s.precision < 0 ? 6 : static_cast<int>(std::min<int64_t>(s.precision, 400));
        std::string fmt = "%";
        if (s.alt) fmt += '#';
        fmt += "." + std::to_string(prec);
        double x = a;
        char c = ty ? ty : 'g';
        if (c == '%') {
            x *= 100;
            c = 'f';
        }
        fmt += c;
        std::vector<char> buf(static_cast<size_t>(prec) + 400);
        std::snprintf(buf.data(), buf.size(), fmt.c_str(), x);
        body = buf.data();
        if (ty == 0) {  // Python's None type: like 'g' but always with a digit after the point when no exponent
            if (body.find_first_of(".en") == std::string::npos) body += ".0";
        }
        if (ty == '%') body += '%';
    }
    if (s.grouping) {
        size_t dot = body.find_first_of(".e%");
        if (dot == std::string::npos) dot = body.size();
        body = group(body.substr(0, dot), s.grouping, 3) + body.substr(dot);
    }
    std::string prefix = neg ? "-" : s.sign == '+' ? "+" : s.sign == ' ' ? " " : "";
    return pad(prefix + body, s, '>', prefix.size());
}

// ---------------------------------------------------------------- str.format

// The value of one replacement field of str.format: an argument by position (automatic or
// manual numbering, never both: `auto_index` and `manual` carry that across the fields) or by
// keyword, then its .attr and [key] parts.
static Value format_field(Interp& in, const std::string& field, const Args& args, int& auto_index, bool& manual, int line) {
    // arg_name ("" | digits | identifier) then .attr / [key] parts
    size_t p = 0;
    while (p < field.size() && field[p] != '.' && field[p] != '[') ++p;
    const std::string name = field.substr(0, p);
    Value v;
    if (name.empty()) {
        if (manual) in.fail(line, "cannot switch from manual field specification to automatic field numbering");
        const auto k = static_cast<size_t>(auto_index++);
        if (k >= args.pos.size()) in.fail(line, "Replacement index " + std::to_string(k) + " out of range for positional args tuple");
        v = args.pos[k];
    } else if (std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        if (auto_index > 0) in.fail(line, "cannot switch from automatic field numbering to manual field specification");
        manual = true;
        const size_t k = name.size() > 9 ? SIZE_MAX : std::stoul(name);
        if (k >= args.pos.size()) in.fail(line, "Replacement index " + name + " out of range for positional args tuple");
        v = args.pos[k];
    } else {
        const Value* x = nullptr;
        for (const auto& [kname, kv] : args.kw)
            if (kname == name) x = &kv;
        if (!x) in.fail(line, "KeyError: '" + name + "'");
        v = *x;
    }
    while (p < field.size()) {
        if (field[p] == '.') {
            size_t e = p + 1;
            while (e < field.size() && field[e] != '.' && field[e] != '[') ++e;
            v = in.getattr(v, field.substr(p + 1, e - p - 1), line);
            p = e;
        } else {
            size_t e = field.find(']', p);
            if (e == std::string::npos) in.fail(line, "Missing ']' in format string");
            const std::string key = field.substr(p + 1, e - p - 1);
            const bool digits = !key.empty() && key.size() < 18 &&
                                std::all_of(key.begin(), key.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
            v = in.getitem(v, digits ? Value::integer(std::stoll(key)) : Value::string(key), line);
            p = e + 1;
        }
    }
    if (v.is_undefined() && !v.undefined_hint().empty()) in.undefined_error(v, line);
    return v;
}

Value Interp::str_format(const Value& fmt, const Args& args, int line, int nesting) {
    if (nesting > 1) fail(line, "Max string recursion exceeded");
    const std::string& t = fmt.text();
    const bool markup = fmt.is_markup();
    std::string out;
    int auto_index = 0;  // -1 once a manual index was used
    bool manual = false;
    for (size_t k = 0; k < t.size(); ++k) {
        step();
        const char c = t[k];
        if (c == '}') {
            if (k + 1 < t.size() && t[k + 1] == '}') {
                out += '}';
                ++k;
                continue;
            }
            fail(line, "Single '}' encountered in format string");
        }
        if (c != '{') {
            out += c;
            continue;
        }
        if (k + 1 < t.size() && t[k + 1] == '{') {
            out += '{';
            ++k;
            continue;
        }
        // {field!conv:spec}, the spec possibly holding one level of nested {fields}
        size_t e = k + 1;
        int depth = 1;
        while (e < t.size() && depth > 0) {
            if (t[e] == '{') ++depth;
            else if (t[e] == '}') --depth;
            if (depth > 0) ++e;
        }
        if (e >= t.size()) fail(line, "expected '}' before end of string");
        std::string inner = t.substr(k + 1, e - k - 1);
        size_t colon = std::string::npos, bang = std::string::npos;
        for (size_t q = 0, br = 0; q < inner.size(); ++q) {
            if (inner[q] == '[') ++br;
            else if (inner[q] == ']' && br) --br;
            else if (!br && inner[q] == '!' && bang == std::string::npos && colon == std::string::npos) bang = q;
            else if (!br && inner[q] == ':') {
                colon = q;
                break;
            }
        }
        std::string field = inner.substr(0, std::min(bang, colon));
        std::string conv = bang != std::string::npos ? inner.substr(bang + 1, (colon == std::string::npos ? inner.size() : colon) - bang - 1) : "";
        std::string spec = colon != std::string::npos ? inner.substr(colon + 1) : "";
        if (spec.find('{') != std::string::npos) {  // nested fields in the spec
            Value nested = str_format(Value::string(spec), args, line, nesting + 1);
            spec = nested.text();
        }
        Value v = format_field(*this, field, args, auto_index, manual, line);
        if (!conv.empty()) {
            if (conv == "r" || conv == "a") v = Value::string(py_repr(v, line));
            else if (conv == "s") v = Value::string(py_str(v, line));
            else fail(line, "Unknown conversion specifier " + conv);
        }
        std::string piece = format_value(*this, v, spec, line);
        if (markup && !(v.is_markup() && spec.empty())) piece = html_escape(Value::string(piece), line).text;
        check_size(out.size() + piece.size(), line);
        out += piece;
        k = e;
    }
    Str s;
    s.text = std::move(out);
    return str_value(std::move(s), line, markup);
}

// ---------------------------------------------------------------- % formatting

// One conversion of a %-format: `v` converted by `c` (s r a, d i u x X o c, e E f F g G) with the
// flags, width and precision of `s`; Markup's format escapes what it converts (but a Markup %s).
static std::string percent_piece(Interp& in, const Spec& s, char c, const Value& v, bool markup, int line) {
    std::string piece;
    if (c == 's' || c == 'r' || c == 'a') {
        piece = c == 's' ? in.py_str(v, line) : in.py_repr(v, line);
        if (markup && !(c == 's' && v.is_markup())) piece = in.html_escape(Value::string(piece), line).text;
        if (s.precision >= 0) {
            std::vector<size_t> b = cp_bounds(piece);
            if (static_cast<size_t>(s.precision) < b.size() - 1) piece = piece.substr(0, b[static_cast<size_t>(s.precision)]);
        }
        Spec ps;
        ps.width = s.width;
        ps.align = s.align == '<' ? '<' : '>';
        piece = pad(piece, ps, '>');
    } else if (std::strchr("diuxXoc", c)) {
        if (!v.is_number()) in.fail(line, std::string("%") + c + " format: a real number is required, not " + type_name(v));
        if (v.kind() == K::kFloat && std::strchr("xXoc", c)) in.fail(line, std::string("%") + c + " format: an integer is required, not float");
        if (v.kind() == K::kFloat && (std::isnan(v.as_float()) || std::fabs(v.as_float()) >= 9.2e18))
            in.fail(line, "cannot convert float to integer (cuset's integers are 64-bit)");
        const int64_t i = v.kind() == K::kFloat ? static_cast<int64_t>(v.as_float()) : v.as_int();
        if (c == 'c') {
            piece = utf8_of(static_cast<uint32_t>(i));
        } else {
            Spec ps;
            ps.type = c == 'i' || c == 'u' ? 'd' : c;
            ps.sign = s.sign;
            ps.alt = s.alt;
            piece = format_value(in, Value::integer(i), std::string(s.sign ? std::string(1, s.sign) : "") + (s.alt ? "#" : "") +
                                                              std::string(1, ps.type), line);
            if (s.alt && c == 'o') piece.replace(piece.find("0o"), 2, "0o");
            if (s.precision >= 0) {  // minimum digits
                const size_t sign_len = (piece[0] == '-' || piece[0] == '+' || piece[0] == ' ') ? 1 : 0;
                const size_t prefix_len = sign_len + (s.alt && c != 'd' && c != 'i' && c != 'u' ? 2 : 0);
                const size_t digits = piece.size() - prefix_len;
                if (static_cast<size_t>(s.precision) > digits)
                    piece.insert(prefix_len, static_cast<size_t>(s.precision) - digits, '0');
            }
        }
        Spec ps;
        ps.width = s.width;
        if (s.align == '<') ps.align = '<';
        else if (s.zero && c != 'c') {
            ps.fill = "0";
            ps.align = '=';
        }
        const size_t sign_len = (piece[0] == '-' || piece[0] == '+' || piece[0] == ' ') ? 1 : 0;
        piece = pad(piece, ps, '>', sign_len + (s.alt && (c == 'x' || c == 'X' || c == 'o') ? 2 : 0));
    } else if (std::strchr("eEfFgG", c)) {
        if (!v.is_number()) in.fail(line, std::string("must be real number, not ") + type_name(v));
        std::string spec;
        if (s.sign) spec += s.sign;
        if (s.alt) spec += '#';
        spec += "." + std::to_string(s.precision < 0 ? 6 : s.precision) + c;
        piece = format_value(in, Value::number(v.as_float()), spec, line);
        Spec ps;
        ps.width = s.width;
        if (s.align == '<') ps.align = '<';
        else if (s.zero) {
            ps.fill = "0";
            ps.align = '=';
        }
        const size_t sign_len = (piece[0] == '-' || piece[0] == '+' || piece[0] == ' ') ? 1 : 0;
        piece = pad(piece, ps, '>', sign_len);
    } else {
        in.fail(line, std::string("unsupported format character '") + c + "'");
    }
    return piece;
}

Value Interp::percent_format(const Value& fmt, const Value& args, int line) {
    const std::string& t = fmt.text();
    const bool markup = fmt.is_markup();
    std::vector<Value> pos;
    const Value* mapping = nullptr;
    if (args.is_tuple()) pos = args.list_ref();
    else {
        pos.push_back(args);
        if (args.kind() == K::kDict && !args.is_namespace()) mapping = &args;
    }
    size_t next = 0;
    bool used_mapping = false;
    std::string out;
    auto take = [&]() -> Value {
        if (next >= pos.size()) fail(line, "not enough arguments for format string");
        return pos[next++];
    };
    for (size_t k = 0; k < t.size(); ++k) {
        step();
        if (t[k] != '%') {
            out += t[k];
            continue;
        }
        if (++k >= t.size()) fail(line, "incomplete format");
        Value v;
        bool have = false;
        if (t[k] == '(') {
            size_t e = t.find(')', k);
            if (e == std::string::npos) fail(line, "incomplete format key");
            if (!mapping) fail(line, "format requires a mapping");
            const Value* x = mapping->dict_ref().find(std::string_view(t).substr(k + 1, e - k - 1));
            if (!x) fail(line, "KeyError: '" + t.substr(k + 1, e - k - 1) + "'");
            v = *x;
            have = used_mapping = true;
            k = e + 1;
        }
        Spec s;
        for (; k < t.size() && std::strchr("-+ #0", t[k]); ++k) {
            if (t[k] == '-') s.align = '<';
            else if (t[k] == '+') s.sign = '+';
            else if (t[k] == ' ') {
                if (s.sign != '+') s.sign = ' ';
            } else if (t[k] == '#') s.alt = true;
            else s.zero = true;
        }
        auto num = [&](int64_t* out_v) {
            if (k < t.size() && t[k] == '*') {
                Value w = take();
                if (w.kind() != K::kInt && w.kind() != K::kBool) fail(line, "* wants int");
                *out_v = w.as_int();
                ++k;
                return;
            }
            int64_t n = -1;
            while (k < t.size() && std::isdigit(static_cast<unsigned char>(t[k]))) {
                n = (n < 0 ? 0 : n) * 10 + (t[k++] - '0');
                if (n > 1'000'000'000) fail(line, "width too big");
            }
            if (n >= 0) *out_v = n;
        };
        num(&s.width);
        if (s.width < 0 && s.width != -1) {
            s.align = '<';
            s.width = -s.width;
        }
        if (k < t.size() && t[k] == '.') {
            ++k;
            s.precision = 0;
            num(&s.precision);
        }
        while (k < t.size() && (t[k] == 'h' || t[k] == 'l' || t[k] == 'L')) ++k;
        if (k >= t.size()) fail(line, "incomplete format");
        const char c = t[k];
        if (c == '%') {
            out += '%';
            continue;
        }
        if (!have) v = take();
        if (s.width >= 0) check_size(static_cast<size_t>(s.width), line);
        const std::string piece = percent_piece(*this, s, c, v, markup, line);
        check_size(out.size() + piece.size(), line);
        out += piece;
    }
    if (!used_mapping && next < pos.size() && !(mapping && next == 0))
        fail(line, "not all arguments converted during string formatting");
    Str s;
    s.text = std::move(out);
    return str_value(std::move(s), line, markup);
}

}  // namespace cuset::jinja::detail
