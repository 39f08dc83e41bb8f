// The Jinja evaluator's builtins as transformers' environment has them: Jinja2's filters and
// tests (map, select and the like return one-pass iterators, as Jinja2's generators), the
// methods of str, list and dict that the immutable sandbox allows (those that modify a list or
// dict are refused when called), Markup's methods, and the globals (range bounded as the
// sandbox bounds it, namespace, dict, cycler, joiner, strftime_now, raise_exception). A filter
// Jinja2 has but cuset does not implement is refused when it is evaluated, naming it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <unordered_map>

#include <utf8proc.h>

#include "cuset/core/error.h"
#include "jinja_eval.h"

namespace cuset::jinja::detail {

namespace {

constexpr int64_t kMaxRange = 100000;  // Jinja2's sandbox MAX_RANGE

std::string map_case(const std::string& s, int mode) {  // 0 upper, 1 lower, 2 swapcase
    std::string out;
    out.reserve(s.size());
    for (uint32_t c : cps_of(s)) {
        auto ci = static_cast<utf8proc_int32_t>(c);
        utf8proc_int32_t r = mode == 0 ? utf8proc_toupper(ci) : mode == 1 ? utf8proc_tolower(ci)
                             : (utf8proc_toupper(ci) != ci ? utf8proc_toupper(ci) : utf8proc_tolower(ci));
        out += utf8_of(static_cast<uint32_t>(r));
    }
    return out;
}
bool cased(uint32_t c) {
    auto ci = static_cast<utf8proc_int32_t>(c);
    return utf8proc_toupper(ci) != ci || utf8proc_tolower(ci) != ci;
}
// str.title(): a cased character after an uncased one starts a word.
std::string py_title(const std::string& s) {
    std::string out;
    bool prev_cased = false;
    for (uint32_t c : cps_of(s)) {
        auto ci = static_cast<utf8proc_int32_t>(c);
        out += utf8_of(static_cast<uint32_t>(prev_cased ? utf8proc_tolower(ci) : utf8proc_totitle(ci)));
        prev_cased = cased(c);
    }
    return out;
}
std::string py_capitalize(const std::string& s) {
    std::string out;
    bool first = true;
    for (uint32_t c : cps_of(s)) {
        auto ci = static_cast<utf8proc_int32_t>(c);
        out += utf8_of(static_cast<uint32_t>(first ? utf8proc_totitle(ci) : utf8proc_tolower(ci)));
        first = false;
    }
    return out;
}
// Jinja2's title filter: words begin after runs of -, whitespace, (, {, [ and <.
std::string jinja_title(const std::string& s) {
    std::string out;
    bool start = true;
    for (uint32_t c : cps_of(s)) {
        const bool sep = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || py_space(c);
        auto ci = static_cast<utf8proc_int32_t>(c);
        if (sep) out += utf8_of(c);
        else out += utf8_of(static_cast<uint32_t>(start ? utf8proc_toupper(ci) : utf8proc_tolower(ci)));
        start = sep;
    }
    return out;
}
bool is_alpha(uint32_t c) {
    auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
    return cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO;
}
bool is_decimal(uint32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_ND; }
bool is_numeric(uint32_t c) {
    auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
    return cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
}

// str.splitlines() boundaries: \n \r \r\n \v \f \x1c \x1d \x1e \x85 \u2028 \u2029.
std::vector<std::pair<size_t, size_t>> line_spans(const std::string& t, std::vector<size_t>* ends_with_break = nullptr) {
    std::vector<std::pair<size_t, size_t>> out;
    size_t b = 0, k = 0;
    while (k < t.size()) {
        size_t n;
        const uint32_t c = cp_at(t, k, &n);
        const bool brk = c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || c == 0x1c || c == 0x1d || c == 0x1e ||
                         c == 0x85 || c == 0x2028 || c == 0x2029;
        if (!brk) {
            k += n;
            continue;
        }
        out.push_back({b, k});
        size_t e = k + n;
        if (c == '\r' && e < t.size() && t[e] == '\n') ++e;
        if (ends_with_break) ends_with_break->push_back(e);
        b = k = e;
    }
    if (b < t.size()) {
        out.push_back({b, t.size()});
        if (ends_with_break) ends_with_break->push_back(t.size());
    }
    return out;
}

Str py_strip(const Str& s, const std::string* chars, bool left, bool right) {
    std::vector<uint32_t> set;
    if (chars) set = cps_of(*chars);
    auto strip_cp = [&](uint32_t c) { return chars ? std::find(set.begin(), set.end(), c) != set.end() : py_space(c); };
    std::vector<size_t> b = cp_bounds(s.text);
    size_t lo = 0, hi = b.size() - 1;
    size_t n;
    if (left)
        while (lo < hi && strip_cp(cp_at(s.text, b[lo], &n))) ++lo;
    if (right)
        while (hi > lo && strip_cp(cp_at(s.text, b[hi - 1], &n))) --hi;
    return str_sub(s, b[lo], b[hi]);
}

int64_t as_index(Interp& in, const Value& v, int line, const char* what) {
    if (v.kind() != K::kInt && v.kind() != K::kBool)
        in.fail(line, std::string("'") + type_name(v) + "' object cannot be interpreted as an integer (" + what + ")");
    return v.as_int();
}

// Python's int(str): optional sign, digits with single underscores between them, whitespace around.
bool parse_int(const std::string& raw, int64_t* out) {
    std::string t = py_strip(Str{raw, {}}, nullptr, true, true).text;
    size_t p = 0;
    bool neg = false;
    if (p < t.size() && (t[p] == '+' || t[p] == '-')) neg = t[p++] == '-';
    if (p >= t.size()) return false;
    uint64_t v = 0;
    bool prev_digit = false;
    for (; p < t.size(); ++p) {
        if (t[p] == '_' && prev_digit && p + 1 < t.size() && std::isdigit(static_cast<unsigned char>(t[p + 1]))) {
            prev_digit = false;
            continue;
        }
        if (!std::isdigit(static_cast<unsigned char>(t[p]))) return false;
        v = v * 10 + static_cast<uint64_t>(t[p] - '0');
        if (v > static_cast<uint64_t>(INT64_MAX) + (neg ? 1 : 0)) return false;
        prev_digit = true;
    }
    *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
    return true;
}
// Python's float(str).
bool parse_float(const std::string& raw, double* out) {
    std::string t = py_strip(Str{raw, {}}, nullptr, true, true).text;
    std::string s;
    for (size_t k = 0; k < t.size(); ++k) {
        if (t[k] == '_' && k > 0 && k + 1 < t.size() && std::isdigit(static_cast<unsigned char>(t[k - 1])) &&
            std::isdigit(static_cast<unsigned char>(t[k + 1])))
            continue;
        s += t[k];
    }
    if (s.empty()) return false;
    std::string low = map_case(s, 1);
    for (const char* w : {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan", "+nan", "-nan"})
        if (low == w) {
            *out = low.find("nan") != std::string::npos ? NAN : (low[0] == '-' ? -INFINITY : INFINITY);
            return true;
        }
    if (s.find_first_not_of("0123456789+-.eE") != std::string::npos) return false;
    char* end = nullptr;
    *out = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size();
}

double py_round(double x, int64_t ndigits) {
    if (std::isnan(x) || std::isinf(x)) return x;
    if (ndigits > 308) return x;
    if (ndigits < -308) return 0.0 * x;
    char buf[512];
    if (ndigits >= 0) {  // correctly rounded decimal, half to even, as CPython's round()
        std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(ndigits), x);
        return std::strtod(buf, nullptr);
    }
    const double p = std::pow(10.0, static_cast<double>(-ndigits));
    return std::nearbyint(x / p) * p;
}

}  // namespace

// ---------------------------------------------------------------- globals

namespace {

// range(stop) / range(start, stop[, step]) as Python's, bounded as the sandbox bounds it.
Value range_of(Interp& in, const Args& a) {
    const int l = in.line();
    if (a.pos.empty() || a.pos.size() > 3) in.fail(l, "range expected 1 to 3 arguments, got " + std::to_string(a.pos.size()));
    int64_t start = 0, stop = 0, st = 1;
    if (a.pos.size() == 1) stop = as_index(in, a.pos[0], l, "range");
    else {
        start = as_index(in, a.pos[0], l, "range");
        stop = as_index(in, a.pos[1], l, "range");
        if (a.pos.size() == 3) st = as_index(in, a.pos[2], l, "range");
    }
    if (st == 0) in.fail(l, "range() arg 3 must not be zero");
    // The length, computed without overflow.
    const __int128 span = st > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
    const __int128 step_abs = st > 0 ? st : -static_cast<__int128>(st);
    const __int128 n = span <= 0 ? 0 : (span + step_abs - 1) / step_abs;
    if (n > kMaxRange) in.fail(l, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    List out;
    out.reserve(static_cast<size_t>(n));
    for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) out.push_back(Value::integer(start + k * st));
    in.step(static_cast<int64_t>(n));
    return in.make_list(std::move(out), l);
}

// dict(...)'s and namespace(...)'s items: a mapping or an iterable of pairs, then the keywords.
Dict dict_of(Interp& in, const Args& a, const char* what) {
    const int l = in.line();
    if (a.pos.size() > 1) in.fail(l, std::string(what) + " expected at most 1 argument, got " + std::to_string(a.pos.size()));
    Dict d;
    if (!a.pos.empty()) {
        const Value& src = a.pos[0];
        if (src.kind() == K::kDict && !src.is_namespace()) {
            for (const auto& [k, v] : src.dict_ref()) d.set(k, v);
        } else {
            for (const Value& item : in.iterate(src, l)) {
                std::vector<Value> kv = in.iterate(item, l);
                if (kv.size() != 2) in.fail(l, "dictionary update sequence element has length " + std::to_string(kv.size()) + "; 2 is required");
                if (!hashable(kv[0])) in.fail(l, std::string("unhashable type: '") + type_name(kv[0]) + "'");
                d.set(kv[0], kv[1]);
            }
        }
    }
    for (const auto& [k, v] : a.kw) d.set(Value::string(k), v);
    in.use_bytes(d.size() * 2 * sizeof(Value), l);
    return d;
}

}  // namespace

void Interp::install_globals() {
    auto& g = frames_[0].vars;
    g["range"] = Value::callable(fn("range", [this](const Args& a) { return range_of(*this, a); }));
    auto dict_of = [this](const Args& a, const char* what) { return detail::dict_of(*this, a, what); };
    g["namespace"] = Value::callable(fn("namespace", [this, dict_of](const Args& a) {
        Dict d = dict_of(a, "namespace");
        for (const auto& [k, v] : d)
            if (k.is_string() && !k.text().empty() && k.text()[0] == '_')
                fail(line_, "Chat templates cannot store underscore-prefixed attributes on a namespace, but got '" + k.text() + "'");
        return Value::namespace_(std::move(d));
    }));
    auto dict_fn = fn("dict", [dict_of](const Args& a) { return Value::dict(dict_of(a, "dict")); });
    dict_fn->attributes.push_back({"fromkeys", Value::callable(fn("fromkeys", [this](const Args& a) {
                                       if (a.pos.empty()) fail(line_, "fromkeys expected at least 1 argument, got 0");
                                       Dict d;
                                       const Value fill = a.pos.size() > 1 ? a.pos[1] : Value::none();
                                       for (const Value& k : iterate(a.pos[0], line_)) {
                                           if (!hashable(k)) fail(line_, std::string("unhashable type: '") + type_name(k) + "'");
                                           d.set(k, fill);
                                       }
                                       use_bytes(d.size() * 2 * sizeof(Value), line_);
                                       return Value::dict(std::move(d));
                                   }))});
    g["dict"] = Value::callable(dict_fn);
    g["strftime_now"] = Value::callable(fn("strftime_now", [this](const Args& a) {
        std::time_t t = std::time(nullptr);
        std::tm tm{};
        localtime_r(&t, &tm);
        std::string f = a.pos.empty() ? "" : py_str(a.pos[0], line_);
        if (f.size() > 1000) fail(line_, "strftime_now: format too long");
        std::vector<char> buf(f.size() * 16 + 256);
        size_t n = std::strftime(buf.data(), buf.size(), f.c_str(), &tm);
        return Value::string(std::string(buf.data(), n));
    }));
    g["raise_exception"] = Value::callable(fn("raise_exception", [this](const Args& a) -> Value {
        fail(line_, "raise_exception: " + (a.pos.empty() ? std::string() : py_str(a.pos[0], line_)));
    }));
    g["joiner"] = Value::callable(fn("joiner", [this](const Args& a) {
        Value sep = a.pos.empty() ? Value::string(", ") : a.pos[0];
        auto used = std::make_shared<bool>(false);
        return Value::callable(fn("joiner", [sep, used](const Args&) {
            if (!*used) {
                *used = true;
                return Value::string("");
            }
            return sep;
        }));
    }));
    g["cycler"] = Value::callable(fn("cycler", [this](const Args& a) {
        if (a.pos.empty()) fail(line_, "at least one item has to be provided");
        auto items = std::make_shared<List>(a.pos);
        Value c = Value::namespace_(Dict());
        auto pos = std::make_shared<size_t>(0);
        Value self = c;  // the namespace holds its current item
        c.set("current", (*items)[0]);
        c.set("next", Value::callable(fn("next", [items, pos, self](const Args&) {
                  Value r = (*items)[*pos];
                  *pos = (*pos + 1) % items->size();
                  self.set("current", (*items)[*pos]);
                  return r;
              })));
        c.set("reset", Value::callable(fn("reset", [items, pos, self](const Args&) {
                  *pos = 0;
                  self.set("current", (*items)[0]);
                  return Value::none();
              })));
        return c;
    }));
    g["lipsum"] = Value::callable(fn("lipsum", [this](const Args&) -> Value {
        fail(line_, "unsupported construct: lipsum() (random text)");
    }));
}

// ---------------------------------------------------------------- methods

namespace {
// One call of a str method: the string, its arguments (Markup's escaped where markupsafe escapes
// them; `a0` as written), and what the methods share: the result made a string of the receiver's
// kind, a str or int argument by position or keyword.
struct StrCall {
    Interp& in;
    const Value& obj;
    const std::string& m;
    const Args& a;
    const Args& a0;
    int line;
    bool markup;
    const Str& s;
    const std::string& t;

    Value result(Str r) const { return in.str_value(std::move(r), line, markup); }
    Value plain(std::string r) const {
        Str x;
        x.text = std::move(r);
        return result(std::move(x));
    }
    const std::string* str_arg(size_t pos, const char* kw) const {
        const Value* v = arg(a, pos, kw);
        if (!v || v->is_none()) return nullptr;
        if (!v->is_string()) in.fail(line, m + "() argument must be str, not " + type_name(*v));
        return &v->text();
    }
    int64_t int_arg(size_t pos, const char* kw, int64_t dflt) const {
        const Value* v = arg(a, pos, kw);
        if (!v || v->is_none()) return dflt;
        return as_index(in, *v, line, m.c_str());
    }
};

Value str_strip(const StrCall& q) {
    return q.result(py_strip(q.s, q.str_arg(0, "chars"), q.m != "rstrip", q.m != "lstrip"));
}

Value str_split(const StrCall& q) {
    Value r = q.in.split(q.s, arg(q.a, 0, "sep"), q.int_arg(1, "maxsplit", -1), q.m == "rsplit", q.line);
    if (!q.markup) return r;
    List l;
    for (const Value& x : r.list_ref()) l.push_back(Value::markup(x.str()));
    return q.in.make_list(std::move(l), q.line);
}

Value str_splitlines(const StrCall& q) {
    const Value* keep = arg(q.a, 0, "keepends");
    std::vector<size_t> ends;
    List out;
    auto spans = line_spans(q.t, &ends);
    for (size_t k = 0; k < spans.size(); ++k) {
        Str piece = str_sub(q.s, spans[k].first, keep && truthy(*keep) ? ends[k] : spans[k].second);
        out.push_back(q.markup ? Value::markup(piece) : Value::string(piece));
    }
    return q.in.make_list(std::move(out), q.line);
}

Value str_startswith(const StrCall& q) {
    const Value* p = arg(q.a, 0, "prefix");
    if (!p) q.in.fail(q.line, q.m + "() takes at least 1 argument (0 given)");
    std::vector<std::string> cands;
    if (p->is_tuple()) {
        for (const Value& x : p->list_ref()) {
            if (!x.is_string()) q.in.fail(q.line, std::string("tuple for ") + q.m + " must only contain str, not " + type_name(x));
            cands.push_back(x.text());
        }
    } else if (p->is_string()) {
        cands.push_back(p->text());
    } else {
        q.in.fail(q.line, q.m + " first arg must be str or a tuple of str, not " + type_name(*p));
    }
    // start / end arguments, in code points
    std::string sub = q.t;
    if (q.a.pos.size() > 1) {
        std::vector<size_t> b = cp_bounds(q.t);
        const auto n = static_cast<int64_t>(b.size() - 1);
        auto norm = [&](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
        const int64_t lo = norm(q.int_arg(1, "start", 0)), hi = norm(q.int_arg(2, "end", n));
        sub = lo <= hi ? q.t.substr(b[static_cast<size_t>(lo)], b[static_cast<size_t>(hi)] - b[static_cast<size_t>(lo)]) : std::string();
        if (lo > n) return Value::boolean(false);
    }
    for (const std::string& c : cands)
        if (q.m == "startswith" ? sub.compare(0, c.size(), c) == 0 && sub.size() >= c.size()
                              : sub.size() >= c.size() && sub.compare(sub.size() - c.size(), c.size(), c) == 0)
            return Value::boolean(true);
    return Value::boolean(false);
}

Value str_replace(const StrCall& q) {
    const std::string* o = q.str_arg(0, "old");
    const std::string* r = q.str_arg(1, "new");
    if (!o || !r) q.in.fail(q.line, "replace() takes at least 2 arguments");
    return q.in.replace(q.obj, *o, *r, q.int_arg(2, "count", -1), q.line);
}

Value str_upper(const StrCall& q) {
    return q.plain(map_case(q.t, 0));
}

Value str_lower(const StrCall& q) {
    return q.plain(map_case(q.t, 1));
}

Value str_swapcase(const StrCall& q) {
    return q.plain(map_case(q.t, 2));
}

Value str_title(const StrCall& q) {
    return q.plain(py_title(q.t));
}

Value str_capitalize(const StrCall& q) {
    return q.plain(py_capitalize(q.t));
}

Value str_find(const StrCall& q) {
    const std::string* sub = q.str_arg(0, "sub");
    if (!sub) q.in.fail(q.line, q.m + "() takes at least 1 argument");
    std::vector<size_t> b = cp_bounds(q.t);
    const auto n = static_cast<int64_t>(b.size() - 1);
    auto norm = [&](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
    const int64_t lo = norm(q.int_arg(1, "start", 0)), hi = norm(q.int_arg(2, "end", n));
    if (lo > hi) {
        if (q.m == "index" || q.m == "rindex") q.in.fail(q.line, "substring not found");
        return Value::integer(q.m == "count" ? 0 : -1);
    }
    const size_t bl = b[static_cast<size_t>(lo)], bh = b[static_cast<size_t>(hi)];
    const std::string_view view(q.t.data() + bl, bh - bl);
    if (q.m == "count") {
        if (sub->empty()) return Value::integer(hi - lo + 1);
        int64_t c = 0;
        for (size_t k = view.find(*sub); k != std::string_view::npos; k = view.find(*sub, k + sub->size())) ++c;
        return Value::integer(c);
    }
    const size_t p = (q.m == "find" || q.m == "index") ? view.find(*sub) : view.rfind(*sub);
    if (p == std::string_view::npos) {
        if (q.m == "index" || q.m == "rindex") q.in.fail(q.line, "substring not found");
        return Value::integer(-1);
    }
    return Value::integer(static_cast<int64_t>(cp_count(q.t.substr(0, bl + p))));
}

Value str_join(const StrCall& q) {
    const Value* it = arg(q.a0, 0, "iterable");
    if (!it) q.in.fail(q.line, "join() takes exactly one argument (0 given)");
    Str out;
    std::vector<Value> items = q.in.iterate(*it, q.line);
    for (size_t k = 0; k < items.size(); ++k) {
        if (!items[k].is_string())
            q.in.fail(q.line, "sequence item " + std::to_string(k) + ": expected str instance, " + type_name(items[k]) + " found");
        if (k) str_append(out, q.s);
        Str piece = q.markup ? q.in.html_escape(items[k], q.line) : items[k].str();
        q.in.check_size(out.text.size() + piece.text.size(), q.line);
        str_append(out, piece);
    }
    return q.result(std::move(out));
}

Value str_format(const StrCall& q) {
    return q.in.str_format(q.obj, q.a0, q.line);
}

Value str_isdigit(const StrCall& q) {
    std::vector<uint32_t> cps = cps_of(q.t);
    if (q.m == "isascii") return Value::boolean(std::all_of(cps.begin(), cps.end(), [](uint32_t c) { return c < 0x80; }));
    if (cps.empty()) return Value::boolean(false);
    if (q.m == "istitle") {
        bool prev = false, any = false;
        for (uint32_t c : cps) {
            auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
            const bool up = cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LT, lo = cat == UTF8PROC_CATEGORY_LL;
            if (up) {
                if (prev) return Value::boolean(false);
                prev = any = true;
            } else if (lo) {
                if (!prev) return Value::boolean(false);
                any = true;
            } else {
                prev = false;
            }
        }
        return Value::boolean(any);
    }
    bool any_cased = false;
    for (uint32_t c : cps) {
        auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
        if ((q.m == "isdigit" || q.m == "isdecimal") && !is_decimal(c)) return Value::boolean(false);
        if (q.m == "isnumeric" && !is_numeric(c)) return Value::boolean(false);
        if (q.m == "isspace" && !py_space(c)) return Value::boolean(false);
        if (q.m == "isalpha" && !is_alpha(c)) return Value::boolean(false);
        if (q.m == "isalnum" && !is_alpha(c) && !is_numeric(c)) return Value::boolean(false);
        if (q.m == "isupper" && (cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT)) return Value::boolean(false);
        if (q.m == "islower" && (cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LT)) return Value::boolean(false);
        any_cased = any_cased || cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT;
    }
    if (q.m == "isupper" || q.m == "islower") return Value::boolean(any_cased);
    return Value::boolean(true);
}

Value str_center(const StrCall& q) {
    const int64_t width = q.int_arg(0, "width", -1);
    if (!arg(q.a, 0, "width")) q.in.fail(q.line, q.m + "() takes at least 1 argument (0 given)");
    std::string fill = " ";
    if (q.m != "zfill")
        if (const std::string* f = q.str_arg(1, "fillchar")) {
            if (cp_count(*f) != 1) q.in.fail(q.line, "The fill character must be exactly one character long");
            fill = *f;
        }
    const auto n = static_cast<int64_t>(cp_count(q.t));
    if (width <= n) return q.obj;
    q.in.check_size(q.t.size() + static_cast<size_t>(width - n) * fill.size(), q.line);
    const int64_t pad = width - n;
    std::string left, right;
    if (q.m == "zfill") {
        const bool sign = !q.t.empty() && (q.t[0] == '+' || q.t[0] == '-');
        std::string r = q.t;
        r.insert(sign ? 1 : 0, static_cast<size_t>(pad), '0');
        return q.plain(r);
    }
    int64_t nl = q.m == "ljust" ? 0 : q.m == "rjust" ? pad : pad / 2 + (pad & width & 1);
    for (int64_t k = 0; k < nl; ++k) left += fill;
    for (int64_t k = 0; k < pad - nl; ++k) right += fill;
    return q.plain(left + q.t + right);
}

Value str_partition(const StrCall& q) {
    const std::string* sep = q.str_arg(0, "sep");
    if (!sep) q.in.fail(q.line, q.m + "() takes exactly one argument (0 given)");
    if (sep->empty()) q.in.fail(q.line, "empty separator");
    const size_t p = q.m == "partition" ? q.t.find(*sep) : q.t.rfind(*sep);
    List l;
    auto mk = [&](Str x) { return q.markup ? Value::markup(std::move(x)) : Value::string(std::move(x)); };
    if (p == std::string::npos) {
        if (q.m == "partition") l = {q.obj, mk(Str{}), mk(Str{})};
        else l = {mk(Str{}), mk(Str{}), q.obj};
    } else {
        l = {mk(str_sub(q.s, 0, p)), mk(str_sub(q.s, p, p + sep->size())), mk(str_sub(q.s, p + sep->size(), q.t.size()))};
    }
    return q.in.make_list(std::move(l), q.line, /*tuple=*/true);
}

Value str_removeprefix(const StrCall& q) {
    const std::string* x = q.str_arg(0, q.m == "removeprefix" ? "prefix" : "suffix");
    if (!x) q.in.fail(q.line, q.m + "() takes exactly one argument (0 given)");
    if (q.m == "removeprefix" && q.t.compare(0, x->size(), *x) == 0 && q.t.size() >= x->size())
        return q.result(str_sub(q.s, x->size(), q.t.size()));
    if (q.m == "removesuffix" && !x->empty() && q.t.size() >= x->size() && q.t.compare(q.t.size() - x->size(), x->size(), *x) == 0)
        return q.result(str_sub(q.s, 0, q.t.size() - x->size()));
    return q.obj;
}

// The methods of str a template may call, one row each: the name and its function (`q.m` is the
// name, so one function serves several).
using StrMethodFn = Value (*)(const StrCall& q);
struct StrMethodRow {
    const char* name;
    StrMethodFn fn;
};
const StrMethodRow kStrMethods[] = {
    {"strip", str_strip},
    {"lstrip", str_strip},
    {"rstrip", str_strip},
    {"split", str_split},
    {"rsplit", str_split},
    {"splitlines", str_splitlines},
    {"startswith", str_startswith},
    {"endswith", str_startswith},
    {"replace", str_replace},
    {"upper", str_upper},
    {"lower", str_lower},
    {"casefold", str_lower},
    {"swapcase", str_swapcase},
    {"title", str_title},
    {"capitalize", str_capitalize},
    {"find", str_find},
    {"rfind", str_find},
    {"index", str_find},
    {"rindex", str_find},
    {"count", str_find},
    {"join", str_join},
    {"format", str_format},
    {"isdigit", str_isdigit},
    {"isspace", str_isdigit},
    {"isalpha", str_isdigit},
    {"isalnum", str_isdigit},
    {"isupper", str_isdigit},
    {"islower", str_isdigit},
    {"isdecimal", str_isdigit},
    {"isnumeric", str_isdigit},
    {"isascii", str_isdigit},
    {"istitle", str_isdigit},
    {"center", str_center},
    {"ljust", str_center},
    {"rjust", str_center},
    {"zfill", str_center},
    {"partition", str_partition},
    {"rpartition", str_partition},
    {"removeprefix", str_removeprefix},
    {"removesuffix", str_removeprefix},
};

StrMethodFn find_str_method(const std::string& name) {
    for (const StrMethodRow& r : kStrMethods)
        if (name == r.name) return r.fn;
    return nullptr;
}
const char* const kListMethods[] = {"count", "index", "copy"};
const char* const kListUnsafe[] = {"append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"};
const char* const kDictMethods[] = {"copy", "fromkeys", "get", "items", "keys", "values"};
const char* const kDictUnsafe[] = {"clear", "pop", "popitem", "setdefault", "update"};
// Python's attributes of these types that cuset does not model: found (so not an item lookup),
// but refused when called.
const char* const kStrOther[] = {"encode", "expandtabs", "format_map", "isidentifier", "isprintable", "maketrans", "translate"};

template <size_t N>
bool in(const char* const (&l)[N], const std::string& n) {
    for (const char* x : l)
        if (n == x) return true;
    return false;
}
}  // namespace

bool Interp::method(const Value& obj, const std::string& name, int line, Value* out) {
    (void)line;
    if (obj.is_group() && (name == "grouper" || name == "list")) {
        *out = obj.list_ref()[name == "grouper" ? 0 : 1];
        return true;
    }
    enum { kNone, kStr, kList, kDict } kind = kNone;
    if (obj.is_string() && (find_str_method(name) || in(kStrOther, name))) kind = kStr;
    else if (obj.kind() == K::kList && (in(kListMethods, name) || in(kListUnsafe, name))) kind = kList;
    else if (obj.kind() == K::kDict && !obj.is_namespace() && (in(kDictMethods, name) || in(kDictUnsafe, name))) kind = kDict;
    else if (obj.kind() == K::kCallable) {
        for (const auto& [k, v] : obj.fn()->attributes)
            if (k == name) {
                *out = v;
                return true;
            }
        return false;
    } else {
        return false;
    }
    if (in(kListUnsafe, name) && kind == kList) {
        *out = Value::undefined(name, "access to attribute '" + name + "' of '" + type_name(obj) + "' object is unsafe");
        return true;
    }
    if (in(kDictUnsafe, name) && kind == kDict) {
        *out = Value::undefined(name, "access to attribute '" + name + "' of 'dict' object is unsafe");
        return true;
    }
    if (kind == kList && obj.is_tuple() && name == "copy") return false;
    *out = Value::callable(fn(name, [this, obj, name, kind](const Args& a) {
        if (kind == kStr) return str_method(obj, name, a, line_);
        if (kind == kList) return list_method(obj, name, a, line_);
        return dict_method(obj, name, a, line_);
    }));
    return true;
}

Value Interp::split(const Str& s, const Value* sep, int64_t maxsplit, bool from_right, int line) {
    List out;
    const std::string& t = s.text;
    step(static_cast<int64_t>(t.size() >> 4));
    if (!sep || sep->is_none()) {
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
                // The rest before the last maxsplit pieces keeps its inner whitespace, leading whitespace stripped.
                pieces[0] = {pieces[0].first, pieces[keep - 1].second};
                pieces.erase(pieces.begin() + 1, pieces.begin() + static_cast<long>(keep));
            } else {
                size_t m = static_cast<size_t>(maxsplit);
                pieces[m] = {pieces[m].first, pieces.back().second};
                pieces.resize(m + 1);
            }
        }
        for (auto [b, e] : pieces) out.push_back(Value::string(str_sub(s, b, e)));
        return make_list(std::move(out), line);
    }
    if (!sep->is_string()) fail(line, std::string("must be str or None, not ") + type_name(*sep));
    const std::string& d = sep->text();
    if (d.empty()) fail(line, "empty separator");
    std::vector<size_t> cuts;
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
    return make_list(std::move(out), line);
}

Value Interp::replace(const Value& sv, const std::string& old, const std::string& rep, int64_t count, int line) {
    const Str& s = sv.str();
    const std::string& t = s.text;
    Str out;
    if (old.empty()) {
        // Python inserts `rep` before every character and at the end.
        const size_t n = cp_count(t);
        const size_t n_rep = count < 0 ? n + 1 : std::min<size_t>(n + 1, static_cast<size_t>(count));
        size_t total;
        if (__builtin_mul_overflow(n_rep, rep.size(), &total) || __builtin_add_overflow(total, t.size(), &total)) total = SIZE_MAX;
        check_size(total, line);
        std::vector<size_t> b = cp_bounds(t);
        size_t done = 0;
        for (size_t k = 0; k + 1 < b.size(); ++k) {
            if (done < n_rep) {
                str_append(out, std::string_view(rep));
                ++done;
            }
            str_append(out, str_sub(s, b[k], b[k + 1]));
        }
        if (done < n_rep) str_append(out, std::string_view(rep));
        return str_value(std::move(out), line, sv.is_markup());
    }
    size_t k = 0;
    int64_t done = 0;
    while (count < 0 || done < count) {
        size_t p = t.find(old, k);
        if (p == std::string::npos) break;
        str_append(out, str_sub(s, k, p));
        check_size(out.text.size() + rep.size() + (t.size() - p), line);
        str_append(out, std::string_view(rep));
        k = p + old.size();
        ++done;
        step();
    }
    str_append(out, str_sub(s, k, t.size()));
    return str_value(std::move(out), line, sv.is_markup());
}

Value Interp::str_method(const Value& obj, const std::string& m, const Args& a0, int line) {
    const bool markup = obj.is_markup();
    // Markup's methods return Markup; replace() escapes its replacement and the justifiers
    // their fill character (markupsafe 3), join() its items.
    Args a = a0;
    if (markup) {
        const size_t escaped = m == "replace" ? 1 : (m == "center" || m == "ljust" || m == "rjust") ? 1 : SIZE_MAX;
        const char* kw = m == "replace" ? "new" : "fillchar";
        if (escaped < a.pos.size()) a.pos[escaped] = markup_arg(a.pos[escaped], line);
        for (auto& [k, v] : a.kw)
            if (escaped != SIZE_MAX && k == kw) v = markup_arg(v, line);
    }
    const Str& s = obj.str();
    step(static_cast<int64_t>(s.text.size() >> 6));
    if (const StrMethodFn fn = find_str_method(m)) return fn(StrCall{*this, obj, m, a, a0, line, markup, s, s.text});
    fail(line, "unsupported construct: str." + m + "()");
}

Value Interp::list_method(const Value& obj, const std::string& m, const Args& a, int line) {
    const List& l = obj.list_ref();
    step(static_cast<int64_t>(l.size()));
    if (m == "copy") return make_list(l, line);
    const Value* x = arg(a, 0, "value");
    if (!x) fail(line, m + "() takes at least 1 argument (0 given)");
    if (m == "count") return Value::integer(std::count_if(l.begin(), l.end(), [&](const Value& v) { return equal(v, *x); }));
    const auto n = static_cast<int64_t>(l.size());
    auto norm = [&](const Value* v, int64_t dflt) {
        if (!v) return dflt;
        int64_t i = as_index(*this, *v, line, "index");
        return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n);
    };
    const int64_t lo = norm(arg(a, 1, "start"), 0), hi = norm(arg(a, 2, "stop"), n);
    for (int64_t k = lo; k < hi; ++k)
        if (equal(l[static_cast<size_t>(k)], *x)) return Value::integer(k);
    fail(line, py_repr(*x, line) + " is not in " + type_name(obj));
}

Value Interp::dict_method(const Value& obj, const std::string& m, const Args& a, int line) {
    const Dict& d = obj.dict_ref();
    step(static_cast<int64_t>(d.size()));
    if (m == "items" || m == "keys" || m == "values") {
        List out;
        for (const auto& [k, v] : d) out.push_back(m == "items" ? Value::tuple({k, v}) : m == "keys" ? k : v);
        return make_list(std::move(out), line);
    }
    if (m == "get") {
        const Value* k = arg(a, 0, "key");
        if (!k) fail(line, "get expected at least 1 argument, got 0");
        if (!hashable(*k)) fail(line, std::string("unhashable type: '") + type_name(*k) + "'");
        if (const Value* v = d.find(*k)) return *v;
        const Value* dflt = arg(a, 1, "default");
        return dflt ? *dflt : Value::none();
    }
    if (m == "copy") {
        Dict c = d;
        use_bytes(c.size() * 2 * sizeof(Value), line);
        return Value::dict(std::move(c));
    }
    if (m == "fromkeys") {
        if (a.pos.empty()) fail(line, "fromkeys expected at least 1 argument, got 0");
        Dict out;
        const Value fill = a.pos.size() > 1 ? a.pos[1] : Value::none();
        for (const Value& k : iterate(a.pos[0], line)) {
            if (!hashable(k)) fail(line, std::string("unhashable type: '") + type_name(k) + "'");
            out.set(k, fill);
        }
        use_bytes(out.size() * 2 * sizeof(Value), line);
        return Value::dict(std::move(out));
    }
    fail(line, "unsupported construct: dict." + m + "()");
}

// ---------------------------------------------------------------- pprint

namespace {

// Python's pprint.pformat with its defaults (width 80, indent 1, dicts by sorted key), which is
// Jinja2's pprint filter: a value whose repr fits the line is written as it is, a wider list,
// tuple or dict gets one item a line, and a wider string is cut at its line breaks and spaces into
// adjacent literals. Widths are counted in code points, as Python's len().
class Pformat {
public:
    Pformat(Interp& in, int line) : in_(in), line_(line) {}
    std::string operator()(const Value& v) {
        format(v, 0, 0, 0);
        return std::move(out_);
    }

private:
    static constexpr int64_t kWidth = 80;
    static constexpr int kMaxDepth = 256;  // nesting followed, as repr follows it
    Interp& in_;
    int line_;
    std::string out_;

    static bool is_dict(const Value& v) { return v.kind() == K::kDict && !v.is_namespace(); }
    static int64_t width(const std::string& s) { return static_cast<int64_t>(cp_count(s)); }
    void write(const std::string& s) {
        in_.check_size(out_.size() + s.size(), line_);
        out_ += s;
    }

    // sorted(d.items(), key=_safe_tuple): by key; keys that do not compare (int and str) by the
    // name of their type, as _safe_key orders them.
    std::vector<const Dict::Item*> sorted_items(const Value& d) {
        std::vector<const Dict::Item*> items;
        for (const Dict::Item& it : d.dict_ref()) items.push_back(&it);
        std::stable_sort(items.begin(), items.end(), [&](const Dict::Item* x, const Dict::Item* y) {
            in_.step();
            const int c = in_.order(x->first, y->first, line_);
            if (c != 2) return c < 0;
            return std::strcmp(type_name(x->first), type_name(y->first)) < 0;
        });
        return items;
    }

    // pprint's _safe_repr: repr() with every dict's items sorted. A groupby item has a __repr__ of
    // its own (tuple's, called from _GroupTuple), which pprint neither sorts inside nor breaks.
    std::string safe_repr(const Value& v, int depth) {
        in_.step();
        if (depth > kMaxDepth) in_.fail(line_, "maximum recursion depth exceeded while getting the repr of an object");
        if (v.is_undefined()) return "Undefined";
        std::string out;
        if (is_dict(v)) {
            out += "{";
            bool first = true;
            for (const Dict::Item* it : sorted_items(v)) {
                if (!first) out += ", ";
                first = false;
                out += safe_repr(it->first, depth + 1);
                out += ": ";
                out += safe_repr(it->second, depth + 1);
                in_.check_size(out.size(), line_);
            }
            return out + "}";
        }
        if (v.kind() == K::kList && !v.is_group()) {
            const List& l = v.list_ref();
            out += v.is_tuple() ? "(" : "[";
            for (size_t k = 0; k < l.size(); ++k) {
                if (k) out += ", ";
                out += safe_repr(l[k], depth + 1);
                in_.check_size(out.size(), line_);
            }
            return out + (v.is_tuple() ? (l.size() == 1 ? ",)" : ")") : "]");
        }
        return in_.py_repr(v, line_);
    }

    void format(const Value& v, int64_t indent, int64_t allowance, int level) {
        const std::string rep = safe_repr(v, level);
        const bool breakable = is_dict(v) || (v.kind() == K::kList && !v.is_group()) || (v.is_string() && !v.is_markup());
        if (!breakable || width(rep) <= kWidth - indent - allowance) {
            write(rep);
            return;
        }
        if (level > kMaxDepth) in_.fail(line_, "maximum recursion depth exceeded while getting the repr of an object");
        if (v.is_string()) return format_str(v.text(), indent, allowance, level + 1);
        if (is_dict(v)) {
            write("{");
            const std::vector<const Dict::Item*> items = sorted_items(v);
            const std::string delim = ",\n" + std::string(static_cast<size_t>(indent + 1), ' ');
            for (size_t k = 0; k < items.size(); ++k) {
                const bool last = k + 1 == items.size();
                const std::string key = safe_repr(items[k]->first, level + 1);
                write(key);
                write(": ");
                format(items[k]->second, indent + 1 + width(key) + 2, last ? allowance + 1 : 1, level + 1);
                if (!last) write(delim);
            }
            write("}");
            return;
        }
        const List& l = v.list_ref();
        const std::string end = !v.is_tuple() ? "]" : l.size() == 1 ? ",)" : ")";
        write(v.is_tuple() ? "(" : "[");
        const std::string delim = ",\n" + std::string(static_cast<size_t>(indent + 1), ' ');
        for (size_t k = 0; k < l.size(); ++k) {
            if (k) write(delim);
            format(l[k], indent + 1, k + 1 == l.size() ? allowance + width(end) : 1, level + 1);
        }
        write(end);
    }

    // _pprint_str: each line (keeping its break) one literal, a line too wide cut after runs of
    // whitespace; the pieces of a string that is the whole value are parenthesised.
    void format_str(const std::string& s, int64_t indent, int64_t allowance, int level) {
        if (s.empty()) return write(py_repr_str(s));
        std::vector<size_t> ends;
        const std::vector<std::pair<size_t, size_t>> spans = line_spans(s, &ends);
        if (level == 1) {
            ++indent;
            ++allowance;
        }
        const int64_t max_width = kWidth - indent;
        int64_t max_width1 = max_width;
        std::vector<std::string> chunks;
        std::string rep;
        for (size_t i = 0; i < spans.size(); ++i) {
            const bool last_line = i + 1 == spans.size();
            const std::string line = s.substr(spans[i].first, ends[i] - spans[i].first);
            rep = py_repr_str(line);
            if (last_line) max_width1 -= allowance;
            if (width(rep) <= max_width1) {
                chunks.push_back(rep);
                continue;
            }
            // re.findall(r'\S*\s*', line) without its final empty match.
            std::vector<std::string> parts;
            for (size_t k = 0; k < line.size();) {
                const size_t b = k;
                size_t n;
                while (k < line.size() && !py_space(cp_at(line, k, &n))) k += n;
                while (k < line.size() && py_space(cp_at(line, k, &n))) k += n;
                parts.push_back(line.substr(b, k - b));
            }
            int64_t max_width2 = max_width;
            std::string current;
            for (size_t j = 0; j < parts.size(); ++j) {
                in_.step();
                const std::string candidate = current + parts[j];
                if (j + 1 == parts.size() && last_line) max_width2 -= allowance;
                if (width(py_repr_str(candidate)) > max_width2) {
                    if (!current.empty()) chunks.push_back(py_repr_str(current));
                    current = parts[j];
                } else {
                    current = candidate;
                }
            }
            if (!current.empty()) chunks.push_back(py_repr_str(current));
        }
        if (chunks.size() == 1) return write(rep);
        if (level == 1) write("(");
        for (size_t i = 0; i < chunks.size(); ++i) {
            if (i) write("\n" + std::string(static_cast<size_t>(indent), ' '));
            write(chunks[i]);
        }
        if (level == 1) write(")");
    }
};

}  // namespace

// ---------------------------------------------------------------- filters

Value Interp::attr_path(const Value& v, const std::string& path, int line) {
    // Jinja2's make_attrgetter: dotted parts, each an integer index when it is digits.
    Value cur = v;
    size_t b = 0;
    while (true) {
        size_t d = path.find('.', b);
        std::string part = path.substr(b, d == std::string::npos ? std::string::npos : d - b);
        const bool digits = !part.empty() && part.size() < 18 &&
                            std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
        cur = getitem(cur, digits ? Value::integer(std::stoll(part)) : Value::string(part), line);
        if (d == std::string::npos) return cur;
        b = d + 1;
    }
}

Value Interp::select_family(const std::string& f, const Value& v, const Args& a, int line) {
    const bool by_attr = f == "selectattr" || f == "rejectattr";
    const bool keep_if = f == "selectattr" || f == "select";
    // Jinja2's select_or_reject: a false value (None, undefined, empty) yields nothing.
    if (!truthy(v)) return make_iterator({}, line);
    std::vector<Value> items = iterate(v, line);
    size_t k0 = 0;
    std::string attr;
    if (by_attr) {
        if (a.pos.empty()) fail(line, "Missing parameter for attribute name");
        attr = py_str(a.pos[0], line);
        k0 = 1;
    }
    std::string tname;
    Args targs;
    if (a.pos.size() > k0) {
        tname = py_str(a.pos[k0], line);
        targs.pos.assign(a.pos.begin() + static_cast<long>(k0) + 1, a.pos.end());
        targs.kw = a.kw;
    }
    std::vector<Value> out;
    for (const Value& x : items) {
        step();
        Value t = by_attr ? attr_path(x, attr, line) : x;
        const bool r = tname.empty() ? truthy(t) : test(tname, t, targs, line);
        if (r == keep_if) out.push_back(x);
    }
    return make_iterator(std::move(out), line);
}

namespace {

// A filter's input as text: a string (Markup stays Markup) as it is, anything else as str() prints it.
Value soft_str(Interp& in, const Value& v, int line) { return v.is_string() ? v : Value::string(in.to_str(v, line)); }

// `text` made a string of the same kind as `src` (Markup when src is Markup).
Value same_kind(Interp& in, const Value& src, int line, std::string text) {
    Str s;
    s.text = std::move(text);
    return in.str_value(std::move(s), line, src.is_markup());
}

Value filter_tojson(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    // transformers' tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False): json.dumps.
    Interp::JsonOpts o;
    if (const Value* x = arg(a, 0, "ensure_ascii")) o.ensure_ascii = truthy(*x);
    if (const Value* x = arg(a, 1, "indent"); x && !x->is_none()) {
        if (x->is_string()) o.indent_text = x->text();
        else if (x->kind() == K::kInt || x->kind() == K::kBool) {
            const int64_t n = std::max<int64_t>(0, x->as_int());
            in.check_size(static_cast<size_t>(n), line);
            o.indent_text.assign(static_cast<size_t>(n), ' ');
        } else {
            in.fail(line, std::string("tojson: indent must be an integer or a string, not ") + type_name(*x));
        }
        o.indent = 1;
        o.item_sep = ",";
    }
    if (const Value* x = arg(a, 2, "separators"); x && !x->is_none()) {
        if (x->kind() != K::kList || x->list_ref().size() != 2 || !x->list_ref()[0].is_string() || !x->list_ref()[1].is_string())
            in.fail(line, "tojson: separators must be a pair of strings");
        o.item_sep = x->list_ref()[0].text();
        o.key_sep = x->list_ref()[1].text();
    }
    if (const Value* x = arg(a, 3, "sort_keys")) o.sort_keys = truthy(*x);
    std::string out;
    in.to_json(v, o, 0, out, line);
    Str s;
    s.text = std::move(out);
    return in.str_value(std::move(s), line);
}

Value filter_trim(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    const Value* chars = arg(a, 0, "chars");
    if (chars && !chars->is_none() && !chars->is_string()) in.fail(line, std::string("strip arg must be None or str"));
    Value s = soft_str(in, v, line);
    const std::string* c = chars && chars->is_string() ? &chars->text() : nullptr;
    return in.str_value(py_strip(s.str(), c, true, true), line, s.is_markup());
}

Value filter_length(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    switch (v.kind()) {
        case K::kUndefined: return Value::integer(0);
        case K::kString: return Value::integer(static_cast<int64_t>(cp_count(v.text())));
        case K::kList: return Value::integer(static_cast<int64_t>(v.list_ref().size()));
        case K::kDict:
            if (v.is_namespace()) break;
            return Value::integer(static_cast<int64_t>(v.dict_ref().size()));
        default: break;
    }
    in.fail(line, std::string("object of type '") + type_name(v) + "' has no len()");
}

Value filter_string(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    return soft_str(in, v, line);
}

Value filter_safe(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    return v.is_markup() ? v : in.str_value(in.to_str(v, line), line, true);
}

Value filter_escape(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    return v.is_undefined() ? Value::markup(Str{}) : in.str_value(in.html_escape(v, line), line, true);
}

Value filter_forceescape(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    return in.str_value(in.html_escape(Value::string(in.to_str(v, line)), line), line, true);
}

Value filter_list(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    return in.make_list(in.iterate(v, line), line);
}

Value filter_upper(Interp& in, const std::string& f, const Value& v, const Args& a, int line) {
    Value s = soft_str(in, v, line);
    return same_kind(in, s, line, map_case(s.text(), f == "upper" ? 0 : 1));
}

Value filter_title(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    Value s = soft_str(in, v, line);
    return same_kind(in, s, line, jinja_title(s.text()));
}

Value filter_capitalize(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    Value s = soft_str(in, v, line);
    return same_kind(in, s, line, py_capitalize(s.text()));
}

Value filter_replace(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    const Value* o = arg(a, 0, "old");
    const Value* r = arg(a, 1, "new");
    if (!o || !r) in.fail(line, "do_replace() missing required arguments 'old' and 'new'");
    const Value* c = arg(a, 2, "count");
    const int64_t count = c && !c->is_none() ? as_index(in, *c, line, "replace count") : -1;
    return in.replace(Value::string(in.to_str(v, line)), in.py_str(*o, line), in.py_str(*r, line), count, line);
}

Value filter_default(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    const Value* b = arg(a, 1, "boolean");
    const bool use = v.is_undefined() || (b && truthy(*b) && !truthy(v));
    if (!use) return v;
    const Value* d = arg(a, 0, "default_value");
    return d ? *d : Value::string("");
}

Value filter_join(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    const Value* sep = arg(a, 0, "d");
    const Value* attr = arg(a, 1, "attribute");
    Str out;
    Str sep_s = sep ? in.to_str(*sep, line) : Str{};
    std::vector<Value> items = in.iterate(v, line);
    for (size_t k = 0; k < items.size(); ++k) {
        if (k) str_append(out, sep_s);
        Str piece = in.to_str(attr && !attr->is_none() ? in.attr_path(items[k], in.py_str(*attr, line), line) : items[k], line);
        in.check_size(out.text.size() + piece.text.size(), line);
        str_append(out, piece);
    }
    return in.str_value(std::move(out), line);
}

Value filter_first(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    if (v.kind() == K::kIterator) {
        Value x;
        if (v.iter().next(&x)) return x;
        return Value::undefined("", "No first item, sequence was empty.");
    }
    std::vector<Value> items = in.iterate(v, line);
    if (items.empty()) return Value::undefined("", "No first item, sequence was empty.");
    return items.front();
}

Value filter_last(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    if (v.kind() == K::kIterator) in.fail(line, std::string("'") + type_name(v) + "' object is not reversible");
    std::vector<Value> items = in.iterate(v, line);
    if (items.empty()) return Value::undefined("", "No last item, sequence was empty.");
    return items.back();
}

Value filter_reverse(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    if (v.is_string()) {
        std::vector<size_t> b = cp_bounds(v.text());
        Str out;
        for (size_t k = b.size() - 1; k-- > 0;) str_append(out, str_sub(v.str(), b[k], b[k + 1]));
        return in.str_value(std::move(out), line, v.is_markup());
    }
    std::vector<Value> items = in.iterate(v, line);
    std::reverse(items.begin(), items.end());
    if (v.kind() == K::kIterator) return in.make_list(std::move(items), line);
    Value it = in.make_iterator(std::move(items), line);
    it.iter().type_name = v.kind() == K::kDict ? "dict_reversekeyiterator" : "list_reverseiterator";
    return it;
}

Value filter_map(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    std::vector<Value> items = truthy(v) || v.kind() == K::kIterator ? in.iterate(v, line) : std::vector<Value>{};
    std::vector<Value> out;
    if (const Value* at = arg(a, 99, "attribute")) {
        const Value* dflt = arg(a, 99, "default");
        for (const Value& x : items) {
            in.step();
            Value r = in.attr_path(x, in.py_str(*at, line), line);
            out.push_back(r.is_undefined() && dflt ? *dflt : r);
        }
        return in.make_iterator(std::move(out), line);
    }
    if (!items.empty()) {
        if (a.pos.empty()) in.fail(line, "map requires a filter argument");
        const std::string name = in.py_str(a.pos[0], line);
        Args rest;
        rest.pos.assign(a.pos.begin() + 1, a.pos.end());
        rest.kw = a.kw;
        for (const Value& x : items) {
            in.step();
            out.push_back(in.filter(name, x, rest, line));
        }
    }
    return in.make_iterator(std::move(out), line);
}

Value filter_selectattr(Interp& in, const std::string& f, const Value& v, const Args& a, int line) {
    return in.select_family(f, v, a, line);
}

Value filter_items(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    if (v.is_undefined()) return in.make_iterator({}, line);
    if (v.kind() != K::kDict || v.is_namespace()) in.fail(line, "Can only get item pairs from a mapping.");
    return in.make_iterator(in.dict_method(v, "items", Args{}, line).list_ref(), line);
}

Value filter_dictsort(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    if (v.kind() != K::kDict || v.is_namespace()) in.fail(line, "You can only sort by either \"key\" or \"value\"");
    const Value* cs = arg(a, 0, "case_sensitive");
    const Value* by = arg(a, 1, "by");
    const Value* rev = arg(a, 2, "reverse");
    const bool case_sensitive = cs && truthy(*cs);
    const std::string by_s = by ? in.py_str(*by, line) : "key";
    if (by_s != "key" && by_s != "value") in.fail(line, "You can only sort by either \"key\" or \"value\"");
    List out = in.dict_method(v, "items", Args{}, line).list_ref();
    const size_t pos = by_s == "value" ? 1 : 0;
    auto key = [&](const Value& x) {
        const Value& k = x.list_ref()[pos];
        return !case_sensitive && k.is_string() ? Value::string(map_case(k.text(), 1)) : k;
    };
    std::stable_sort(out.begin(), out.end(), [&](const Value& x, const Value& y) {
        const int c = in.order(key(x), key(y), line);
        if (c == 2) in.fail(line, "'<' not supported between these dictionary entries");
        return rev && truthy(*rev) ? c > 0 : c < 0;
    });
    return in.make_list(std::move(out), line);
}

Value filter_sort(Interp& in, const std::string& f, const Value& v, const Args& a, int line) {
    std::vector<Value> items = in.iterate(v, line);
    const Value* attr = arg(a, f == "sort" ? 2 : f == "unique" ? 1 : 1, "attribute");
    const Value* cs = arg(a, f == "sort" ? 1 : 0, "case_sensitive");
    const bool case_sensitive = cs && truthy(*cs);
    auto key = [&](const Value& x) {
        Value k = attr && !attr->is_none() ? in.attr_path(x, in.py_str(*attr, line), line) : x;
        if (!case_sensitive && k.is_string()) return Value::string(map_case(k.text(), 1));
        return k;
    };
    auto less = [&](const Value& x, const Value& y) {
        in.step();
        const int c = in.order(x, y, line);
        if (c == 2) in.fail(line, std::string("'<' not supported between instances of '") + type_name(x) + "' and '" + type_name(y) + "'");
        return c < 0;
    };
    if (f == "unique") {
        std::vector<Value> out, seen;
        for (const Value& x : items) {
            Value k = key(x);
            if (!hashable(k)) in.fail(line, std::string("unhashable type: '") + type_name(k) + "'");
            in.step(static_cast<int64_t>(seen.size()));
            if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, k); })) {
                seen.push_back(k);
                out.push_back(x);
            }
        }
        return in.make_iterator(std::move(out), line);
    }
    std::vector<Value> keys;
    for (const Value& x : items) keys.push_back(key(x));
    if (f == "sort") {
        const Value* rev = arg(a, 0, "reverse");
        const bool reverse = rev && truthy(*rev);
        std::vector<size_t> idx(items.size());
        for (size_t k = 0; k < idx.size(); ++k) idx[k] = k;
        std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) { return reverse ? less(keys[y], keys[x]) : less(keys[x], keys[y]); });
        List out;
        for (size_t k : idx) out.push_back(items[k]);
        return in.make_list(std::move(out), line);
    }
    if (items.empty()) return Value::undefined("", "No aggregated item, sequence was empty.");
    size_t best = 0;
    for (size_t k = 1; k < items.size(); ++k)
        if (f == "min" ? less(keys[k], keys[best]) : less(keys[best], keys[k])) best = k;
    return items[best];
}

Value filter_groupby(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    // Jinja2's groupby: the items sorted by the attribute (a dotted path whose digit parts are
    // indexes, or one index), then runs of equal keys as (grouper, list) tuples; without
    // case_sensitive, strings compare lowered and the grouper is the first item's own value.
    const Value* attribute = arg(a, 0, "attribute");
    if (!attribute) in.fail(line, "sync_do_groupby() missing 1 required positional argument: 'attribute'");
    const Value* dflt = arg(a, 1, "default");
    const Value* cs = arg(a, 2, "case_sensitive");
    const bool case_sensitive = cs && truthy(*cs);
    std::vector<Value> parts;
    if (attribute->is_string()) {
        const std::string& path = attribute->text();
        for (size_t b = 0;;) {
            const size_t d = path.find('.', b);
            const std::string part = path.substr(b, d == std::string::npos ? std::string::npos : d - b);
            const bool digits = !part.empty() && part.size() < 18 &&
                                std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
            parts.push_back(digits ? Value::integer(std::stoll(part)) : Value::string(part));
            if (d == std::string::npos) break;
            b = d + 1;
        }
    } else if (!attribute->is_none()) {
        parts.push_back(*attribute);
    }
    std::vector<Value> items = in.iterate(v, line), keys, sort_keys;
    for (const Value& x : items) {
        Value k = x;
        for (const Value& p : parts) {
            k = in.getitem(k, p, line);
            if (dflt && !dflt->is_none() && k.is_undefined()) k = *dflt;
        }
        sort_keys.push_back(!case_sensitive && k.is_string() ? Value::string(map_case(k.text(), 1)) : k);
        keys.push_back(std::move(k));
    }
    if (items.size() > 1)  // sorting compares every key; an undefined one fails as Jinja2's Undefined does
        for (const Value& k : sort_keys)
            if (k.is_undefined()) in.undefined_error(k, line);
    std::vector<size_t> idx(items.size());
    for (size_t k = 0; k < idx.size(); ++k) idx[k] = k;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
        in.step();
        const int c = in.order(sort_keys[x], sort_keys[y], line);
        if (c == 2)
            in.fail(line, std::string("'<' not supported between instances of '") + type_name(sort_keys[x]) + "' and '" +
                           type_name(sort_keys[y]) + "'");
        return c < 0;
    });
    List groups;
    for (size_t k = 0; k < idx.size();) {
        List members;
        size_t e = k;
        while (e < idx.size() && (e == k || equal(sort_keys[idx[e]], sort_keys[idx[k]]))) {
            in.step();
            members.push_back(items[idx[e++]]);
        }
        groups.push_back(Value::group(case_sensitive ? sort_keys[idx[k]] : keys[idx[k]], in.make_list(std::move(members), line)));
        k = e;
    }
    return in.make_list(std::move(groups), line);
}

Value filter_pprint(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    if (a.pos.size() + a.kw.size() > 0) in.fail(line, "do_pprint() takes 1 positional argument");
    Str s;
    s.text = Pformat(in, line)(v);
    return in.str_value(std::move(s), line);
}

Value filter_sum(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    const Value* attr = arg(a, 0, "attribute");
    const Value* start = arg(a, 1, "start");
    Value acc = start ? *start : Value::integer(0);
    for (const Value& x : in.iterate(v, line))
        acc = in.binary("+", acc, attr && !attr->is_none() ? in.attr_path(x, in.py_str(*attr, line), line) : x, line);
    return acc;
}

Value filter_int(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    const Value* d = arg(a, 0, "default");
    const Value* base_v = arg(a, 1, "base");
    Value dflt = d ? *d : Value::integer(0);
    if (v.is_undefined()) in.undefined_error(v, line);
    if (v.kind() == K::kInt || v.kind() == K::kBool) return Value::integer(v.as_int());
    if (v.kind() == K::kFloat) {
        const double x = v.as_float();
        if (std::isnan(x) || std::isinf(x)) return dflt;
        if (std::fabs(x) >= 9.2e18) in.fail(line, "int: the value is beyond cuset's 64-bit integers");
        return Value::integer(static_cast<int64_t>(x));
    }
    if (v.is_string()) {
        int64_t r;
        if ((!base_v || (base_v->kind() == K::kInt && base_v->as_int() == 10)) && parse_int(v.text(), &r)) return Value::integer(r);
        double x;
        if (parse_float(v.text(), &x) && !std::isnan(x) && !std::isinf(x)) {
            if (std::fabs(x) >= 9.2e18) in.fail(line, "int: the value is beyond cuset's 64-bit integers");
            return Value::integer(static_cast<int64_t>(x));
        }
    }
    return dflt;
}

Value filter_float(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    const Value* d = arg(a, 0, "default");
    if (v.is_undefined()) in.undefined_error(v, line);
    if (v.is_number()) return Value::number(v.as_float());
    double x;
    if (v.is_string() && parse_float(v.text(), &x)) return Value::number(x);
    return d ? *d : Value::number(0.0);
}

Value filter_abs(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    if (!v.is_number()) in.fail(line, std::string("bad operand type for abs(): '") + type_name(v) + "'");
    if (v.kind() == K::kFloat) return Value::number(std::fabs(v.as_float()));
    if (v.as_int() == INT64_MIN) in.fail(line, "integer overflow (cuset's integers are 64-bit)");
    return Value::integer(std::llabs(v.as_int()));
}

Value filter_round(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    const Value* p = arg(a, 0, "precision");
    const Value* m = arg(a, 1, "method");
    const int64_t prec = p ? as_index(in, *p, line, "round precision") : 0;
    const std::string method_name = m ? in.py_str(*m, line) : "common";
    if (method_name != "common" && method_name != "ceil" && method_name != "floor")
        in.fail(line, "method must be common, ceil or floor");
    if (!v.is_number()) in.fail(line, std::string("type ") + type_name(v) + " doesn't define __round__ method");
    const double x = v.as_float();
    if (method_name == "common") {
        if (v.kind() != K::kFloat && !p) return Value::integer(v.as_int());  // round(int) is the int
        return Value::number(py_round(x, prec));
    }
    const double scale = std::pow(10.0, static_cast<double>(prec));
    return Value::number((method_name == "floor" ? std::floor(x * scale) : std::ceil(x * scale)) / scale);
}

Value filter_indent(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    const Value* w = arg(a, 0, "width");
    const Value* first = arg(a, 1, "first");
    const Value* blank = arg(a, 2, "blank");
    std::string pad;
    if (!w) pad = "    ";
    else if (w->is_string()) pad = w->text();
    else {
        const int64_t n = std::max<int64_t>(0, as_index(in, *w, line, "indent width"));
        in.check_size(static_cast<size_t>(n), line);
        pad.assign(static_cast<size_t>(n), ' ');
    }
    Value sv = soft_str(in, v, line);
    Str s = sv.str();
    str_append(s, std::string_view("\n"));  // Jinja2 adds a newline before splitting lines
    const auto lines = line_spans(s.text);
    in.check_size(s.text.size() + lines.size() * (pad.size() + 1), line);
    Str out;
    for (size_t k = 0; k < lines.size(); ++k) {
        Str ln = str_sub(s, lines[k].first, lines[k].second);
        if (k) str_append(out, std::string_view("\n"));
        const bool do_pad = (blank && truthy(*blank)) ? k > 0 : (k > 0 && !ln.text.empty());
        if (do_pad) str_append(out, std::string_view(pad));
        str_append(out, ln);
    }
    if (first && truthy(*first)) {
        Str o2;
        str_append(o2, std::string_view(pad));
        str_append(o2, out);
        out = std::move(o2);
    }
    return in.str_value(std::move(out), line, sv.is_markup());
}

Value filter_attr(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    if (a.pos.empty()) in.fail(line, "attr needs a name");
    const std::string name = in.py_str(a.pos[0], line);
    if (v.is_undefined()) in.undefined_error(v, line);
    if (name.compare(0, 2, "__") == 0) return Value::undefined(name, "access to attribute '" + name + "' is unsafe");
    if (v.is_namespace()) {
        if (name[0] == '_') return Value::undefined(name, "access to attribute '" + name + "' is unsafe");
        if (const Value* x = v.find(name)) return *x;
        return Value::undefined(name);
    }
    Value m;
    if (in.method(v, name, line, &m)) return m;
    return Value::undefined(name);
}

Value filter_center(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    Args ca;
    ca.pos.push_back(arg(a, 0, "width") ? *arg(a, 0, "width") : Value::integer(80));
    return in.str_method(soft_str(in, v, line), "center", ca, line);
}

Value filter_format(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    Value s = soft_str(in, v, line);
    if (!a.pos.empty() && !a.kw.empty()) in.fail(line, "can't handle positional and keyword arguments at the same time");
    if (!a.kw.empty()) {
        Dict d;
        for (const auto& [k, x] : a.kw) d.set(Value::string(k), x);
        return in.percent_format(s, Value::dict(std::move(d)), line);
    }
    return in.percent_format(s, Value::tuple(a.pos), line);
}

Value filter_wordcount(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    int64_t n = 0;
    bool in_word = false;
    for (uint32_t c : cps_of(in.py_str(v, line))) {
        const bool w = c == '_' || is_alpha(c) || is_numeric(c);
        if (w && !in_word) ++n;
        in_word = w;
    }
    return Value::integer(n);
}

Value filter_truncate(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    Value sv = soft_str(in, v, line);
    const std::string& s = sv.text();
    const int64_t length = arg(a, 0, "length") ? as_index(in, *arg(a, 0, "length"), line, "truncate length") : 255;
    const bool killwords = arg(a, 1, "killwords") && truthy(*arg(a, 1, "killwords"));
    const std::string end = arg(a, 2, "end") ? in.py_str(*arg(a, 2, "end"), line) : "...";
    const int64_t leeway = arg(a, 3, "leeway") && !arg(a, 3, "leeway")->is_none() ? as_index(in, *arg(a, 3, "leeway"), line, "leeway") : 5;
    const auto n_end = static_cast<int64_t>(cp_count(end));
    if (length < n_end) in.fail(line, "expected length >= " + std::to_string(n_end) + ", got " + std::to_string(length));
    if (leeway < 0) in.fail(line, "expected leeway >= 0, got " + std::to_string(leeway));
    std::vector<size_t> b = cp_bounds(s);
    const auto n = static_cast<int64_t>(b.size() - 1);
    if (n <= length + leeway) return sv;
    std::string head = s.substr(0, b[static_cast<size_t>(length - n_end)]);
    if (!killwords) {
        const size_t sp = head.rfind(' ');
        if (sp != std::string::npos) head = head.substr(0, sp);
    }
    Str out;
    out.text = head + end;
    return in.str_value(std::move(out), line);
}

Value filter_batch(Interp& in, const std::string& f, const Value& v, const Args& a, int line) {
    std::vector<Value> items = in.iterate(v, line);
    const int64_t n = as_index(in, a.pos.empty() ? Value::integer(1) : a.pos[0], line, f.c_str());
    if (n <= 0) in.fail(line, f + ": the count must be positive");
    const Value* fill = arg(a, 1, "fill_with");
    std::vector<Value> out;
    if (f == "batch") {
        List cur;
        for (const Value& x : items) {
            cur.push_back(x);
            if (static_cast<int64_t>(cur.size()) == n) {
                out.push_back(in.make_list(std::move(cur), line));
                cur.clear();
            }
        }
        if (!cur.empty()) {
            if (fill && !fill->is_none())
                while (static_cast<int64_t>(cur.size()) < n) cur.push_back(*fill);
            out.push_back(in.make_list(std::move(cur), line));
        }
    } else {
        const auto len = static_cast<int64_t>(items.size());
        const int64_t per = len / n, extra = len % n;
        int64_t offset = 0;
        for (int64_t k = 0; k < n; ++k) {
            const int64_t start = offset + k * per;
            if (k < extra) ++offset;
            const int64_t end = offset + (k + 1) * per;
            List cur(items.begin() + start, items.begin() + end);
            if (fill && !fill->is_none() && k >= extra) cur.push_back(*fill);
            out.push_back(in.make_list(std::move(cur), line));
        }
    }
    return in.make_iterator(std::move(out), line);
}

Value filter_striptags(Interp& in, const std::string& /*name*/, const Value& v, const Args& a, int line) {
    // Jinja2's Markup.striptags(): comments and tags removed, whitespace collapsed, entities unescaped.
    std::string s = in.py_str(v, line), t, out;
    for (size_t k = 0; k < s.size();) {
        if (s.compare(k, 4, "<!--") == 0) {
            size_t e = s.find("-->", k + 4);
            if (e == std::string::npos) {
                t += s.substr(k);
                break;
            }
            k = e + 3;
        } else if (s[k] == '<') {
            size_t e = s.find('>', k + 1);
            if (e == std::string::npos) {
                t += s.substr(k);
                break;
            }
            k = e + 1;
        } else {
            t += s[k++];
        }
    }
    Value words = in.split(Str{t, {}}, nullptr, -1, false, line);
    for (size_t k = 0; k < words.list_ref().size(); ++k) out += (k ? " " : "") + words.list_ref()[k].text();
    const std::pair<const char*, const char*> ents[] = {{"&lt;", "<"}, {"&gt;", ">"}, {"&#34;", "\""}, {"&#39;", "'"},
                                                        {"&quot;", "\""}, {"&amp;", "&"}};
    for (const auto& [from, to] : ents)
        for (size_t p = out.find(from); p != std::string::npos; p = out.find(from, p + std::strlen(to))) out.replace(p, std::strlen(from), to);
    Str r;
    r.text = std::move(out);
    return in.str_value(std::move(r), line);
}

// The filters cuset implements, one row each: the name a template writes and its function (`name`
// is passed on, so one function can serve several names). Jinja2's other filters are refused by
// name when they run (jinja2_filters() in jinja_parse.cpp lists Jinja2's).
using FilterFn = Value (*)(Interp& in, const std::string& name, const Value& v, const Args& a, int line);
struct FilterRow {
    const char* name;
    FilterFn fn;
};
const FilterRow kFilters[] = {
    {"tojson", filter_tojson},
    {"trim", filter_trim},
    {"length", filter_length},
    {"count", filter_length},
    {"string", filter_string},
    {"safe", filter_safe},
    {"escape", filter_escape},
    {"e", filter_escape},
    {"forceescape", filter_forceescape},
    {"list", filter_list},
    {"upper", filter_upper},
    {"lower", filter_upper},
    {"title", filter_title},
    {"capitalize", filter_capitalize},
    {"replace", filter_replace},
    {"default", filter_default},
    {"d", filter_default},
    {"join", filter_join},
    {"first", filter_first},
    {"last", filter_last},
    {"reverse", filter_reverse},
    {"map", filter_map},
    {"selectattr", filter_selectattr},
    {"rejectattr", filter_selectattr},
    {"select", filter_selectattr},
    {"reject", filter_selectattr},
    {"items", filter_items},
    {"dictsort", filter_dictsort},
    {"sort", filter_sort},
    {"unique", filter_sort},
    {"min", filter_sort},
    {"max", filter_sort},
    {"groupby", filter_groupby},
    {"pprint", filter_pprint},
    {"sum", filter_sum},
    {"int", filter_int},
    {"float", filter_float},
    {"abs", filter_abs},
    {"round", filter_round},
    {"indent", filter_indent},
    {"attr", filter_attr},
    {"center", filter_center},
    {"format", filter_format},
    {"wordcount", filter_wordcount},
    {"truncate", filter_truncate},
    {"batch", filter_batch},
    {"slice", filter_batch},
    {"striptags", filter_striptags},
};

FilterFn find_filter(const std::string& name) {
    for (const FilterRow& r : kFilters)
        if (name == r.name) return r.fn;
    return nullptr;
}

}  // namespace

std::vector<std::string> filter_names() {
    std::vector<std::string> out;
    for (const FilterRow& r : kFilters) out.emplace_back(r.name);
    return out;
}

Value Interp::filter(const std::string& f, const Value& v, const Args& a, int line) {
    line_ = line;
    step();
    if (const FilterFn fn = find_filter(f)) return fn(*this, f, v, a, line);
    if (jinja2_filter(f)) fail(line, "unsupported construct: filter '" + f + "' (Jinja2 has it; cuset does not implement it)");
    fail(line, "No filter named '" + f + "'.");
}


// ---------------------------------------------------------------- tests

bool Interp::test(const std::string& t, const Value& v, const Args& a, int line) {
    step();
    auto other = [&]() -> const Value& {
        if (a.pos.empty()) {
            if (!a.kw.empty()) return a.kw[0].second;
            fail(line, "test '" + t + "' needs an argument");
        }
        return a.pos[0];
    };
    if (t == "defined") return !v.is_undefined();
    if (t == "undefined") return v.is_undefined();
    if (t == "none") return v.is_none();
    if (t == "string") return v.is_string();
    if (t == "number") return v.is_number();
    if (t == "integer") return v.kind() == K::kInt;
    if (t == "float") return v.kind() == K::kFloat;
    if (t == "boolean") return v.kind() == K::kBool;
    if (t == "true") return v.kind() == K::kBool && v.as_bool();
    if (t == "false") return v.kind() == K::kBool && !v.as_bool();
    if (t == "mapping") return v.kind() == K::kDict && !v.is_namespace();
    if (t == "iterable")
        return v.kind() == K::kList || (v.kind() == K::kDict && !v.is_namespace()) || v.is_string() || v.is_undefined() ||
               v.kind() == K::kIterator;
    if (t == "sequence") return v.kind() == K::kList || (v.kind() == K::kDict && !v.is_namespace()) || v.is_string() || v.is_undefined();
    if (t == "callable") return v.kind() == K::kCallable || v.is_undefined();
    if (t == "escaped") return v.is_markup();
    if (t == "in") return contains(other(), v, line);
    if (t == "eq" || t == "equalto" || t == "==") return equal(v, other());
    if (t == "ne" || t == "!=") return !equal(v, other());
    if (t == "sameas") {
        const Value& o = other();
        if (v.kind() != o.kind()) return false;
        switch (v.kind()) {
            case K::kNone: return true;
            case K::kUndefined: return false;
            case K::kBool: return v.as_bool() == o.as_bool();
            case K::kInt: return v.as_int() == o.as_int() && v.as_int() >= -5 && v.as_int() <= 256;  // CPython's small ints
            case K::kList: return &v.list_ref() == &o.list_ref();
            case K::kDict: return &v.dict_ref() == &o.dict_ref();
            case K::kString: return &v.str() == &o.str();
            case K::kCallable: return v.fn() == o.fn();
            case K::kIterator: return &v.iter() == &o.iter();
            default: return false;
        }
    }
    if (t == "lt" || t == "<" || t == "lessthan") return compare("<", v, other(), line);
    if (t == "gt" || t == ">" || t == "greaterthan") return compare(">", v, other(), line);
    if (t == "le" || t == "<=") return compare("<=", v, other(), line);
    if (t == "ge" || t == ">=") return compare(">=", v, other(), line);
    if (t == "odd" || t == "even" || t == "divisibleby") {
        if (v.is_undefined()) undefined_error(v, line);
        if (!v.is_number()) fail(line, std::string("unsupported operand type(s) for %: '") + type_name(v) + "' and 'int'");
        const Value d = t == "divisibleby" ? other() : Value::integer(2);
        const Value r = binary("%", v, d, line);
        const double rem = r.as_float();
        return t == "odd" ? rem == 1 : rem == 0;
    }
    if (t == "lower") return map_case(py_str(v, line), 1) == py_str(v, line) && map_case(py_str(v, line), 0) != py_str(v, line);
    if (t == "upper") return map_case(py_str(v, line), 0) == py_str(v, line) && map_case(py_str(v, line), 1) != py_str(v, line);
    if (t == "filter") return v.is_string() && jinja2_filter(v.text());
    if (t == "test") return v.is_string() && jinja2_test(v.text());
    fail(line, "No test named '" + t + "'.");
}

}  // namespace cuset::jinja::detail
