// The Jinja lexer and parser: template source -> syntax tree (jinja_ast.h), with the whitespace
// rules of transformers' environment (trim_blocks, lstrip_blocks, no kept trailing newline) and
// the `-`/`+` modifiers, and Jinja2's grammar (its parser's precedence and tuple rules). Like
// Jinja2's compiler it refuses a filter or test of no known name outside a conditional; a name
// only looked up at run time (a method, a function) is the evaluator's. Nesting is bounded
// (kMaxParseDepth), so that a hostile template cannot exhaust the stack.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cuset/core/error.h"
#include "cuset/core/utf8_text.h"
#include "jinja_ast.h"

namespace cuset::jinja::detail {

std::string error_text(std::string_view what) {
    constexpr size_t kMax = 300;
    std::string out;
    for (size_t k = 0; k < what.size() && out.size() < 4 * kMax; ++k) {
        const unsigned char c = static_cast<unsigned char>(what[k]);
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", c);
            out += b;
        } else out += static_cast<char>(c);
    }
    return utf8_sanitize(out, kMax);
}

namespace {

struct Tok {
    enum class T { kText, kVarBegin, kVarEnd, kBlockBegin, kBlockEnd, kName, kString, kInt, kFloat, kOp, kEof };
    T t = T::kEof;
    std::string s;
    int64_t i = 0;
    double f = 0;
    int line = 1;
};

[[noreturn]] void fail(const std::string& name, int line, const std::string& what) {
    throw InputError(name + ":" + std::to_string(line) + ": " + error_text(what));
}

void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

class Lexer {
public:
    Lexer(const std::string& src, const std::string& name) : name_(name) {
        // Jinja joins the source's lines with "\n" and drops one trailing newline.
        src_.reserve(src.size());
        for (size_t k = 0; k < src.size(); ++k) {
            if (src[k] == '\r') {
                src_ += '\n';
                if (k + 1 < src.size() && src[k + 1] == '\n') ++k;
            } else {
                src_ += src[k];
            }
        }
        if (!src_.empty() && src_.back() == '\n') src_.pop_back();
        for (size_t k = 0; k < src_.size(); ++k)
            if (src_[k] == '\n') newlines_.push_back(k);
    }

    std::vector<Tok> run() {
        size_t pos = 0;
        bool strip_next = false, trim_next = false;  // `-` after the last tag; trim_blocks' newline
        while (pos <= src_.size()) {
            size_t open = find_open(pos);
            std::string text = src_.substr(pos, open - pos);
            const bool line_start = pos == 0 || src_[pos - 1] == '\n';
            if (strip_next) {
                size_t k = 0;
                while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
                text.erase(0, k);
            } else if (trim_next && !text.empty() && text[0] == '\n') {
                text.erase(0, 1);
            }
            strip_next = trim_next = false;
            if (open == src_.size()) {
                push_text(text, pos);
                break;
            }
            const char kind = src_[open + 1];  // '{' '%' '#'
            size_t p = open + 2;
            char left = 0;
            if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) left = src_[p++];
            if (left == '-') {
                size_t e = text.size();
                while (e > 0 && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
                text.erase(e);
            } else if (kind != '{' && left != '+') {
                // lstrip_blocks: the spaces and tabs between a line start and a block or comment tag.
                size_t e = open;
                while (e > pos && (src_[e - 1] == ' ' || src_[e - 1] == '\t')) --e;
                const bool at_line_start = e == pos ? line_start : src_[e - 1] == '\n';
                if (at_line_start) text.erase(text.size() - std::min(open - e, text.size()));
            }
            push_text(text, pos);
            const int line = line_at(open);
            if (kind == '#') {
                size_t close = src_.find("#}", p);
                if (close == std::string::npos) fail(name_, line, "unterminated comment");
                char right = close > p && (src_[close - 1] == '-' || src_[close - 1] == '+') ? src_[close - 1] : 0;
                strip_next = right == '-';
                trim_next = right != '+' && right != '-';
                pos = close + 2;
                continue;
            }
            toks_.push_back(tok(kind == '{' ? Tok::T::kVarBegin : Tok::T::kBlockBegin, line));
            const size_t first_tok = toks_.size();
            char right = 0;
            pos = lex_tag(p, kind, &right);
            if (kind == '%' && toks_.size() > first_tok && toks_[first_tok].t == Tok::T::kName &&
                toks_[first_tok].s == "raw" && toks_.size() == first_tok + 2) {
                pos = lex_raw(pos, right, line);
                right = raw_right_;
            }
            strip_next = right == '-';
            trim_next = kind == '%' && right != '+' && right != '-';
        }
        toks_.push_back(tok(Tok::T::kEof, line_at(src_.size())));
        return std::move(toks_);
    }

private:
    std::string src_;
    const std::string& name_;
    std::vector<Tok> toks_;
    char raw_right_ = 0;

    std::vector<size_t> newlines_;
    int line_at(size_t pos) const {
        return 1 + static_cast<int>(std::lower_bound(newlines_.begin(), newlines_.end(), pos) - newlines_.begin());
    }
    Tok tok(Tok::T t, int line, std::string s = "") {
        Tok k;
        k.t = t;
        k.line = line;
        k.s = std::move(s);
        return k;
    }
    void push_text(const std::string& text, size_t pos) {
        if (text.empty()) return;
        toks_.push_back(tok(Tok::T::kText, line_at(pos), text));
    }
    size_t find_open(size_t pos) const {
        for (size_t k = pos; k + 1 < src_.size(); ++k)
            if (src_[k] == '{' && (src_[k + 1] == '{' || src_[k + 1] == '%' || src_[k + 1] == '#')) return k;
        return src_.size();
    }

    // Tokens of one tag from `p` to its end; returns the position after the end delimiter.
    size_t lex_tag(size_t p, char kind, char* right) {
        int depth = 0;
        const int line0 = line_at(p);
        while (true) {
            while (p < src_.size() && std::isspace(static_cast<unsigned char>(src_[p]))) ++p;
            if (p >= src_.size()) fail(name_, line0, kind == '{' ? "unterminated {{ ... }}" : "unterminated {% ... %}");
            const char c = src_[p];
            const char close = kind == '{' ? '}' : '%';
            // The end: [-+]?(}}|%}) outside brackets.
            auto at_end = [&](size_t q) { return q + 1 < src_.size() && src_[q] == close && src_[q + 1] == '}'; };
            if (depth == 0 && (c == '-' || c == '+') && at_end(p + 1)) {
                *right = c;
                toks_.push_back(tok(kind == '{' ? Tok::T::kVarEnd : Tok::T::kBlockEnd, line_at(p)));
                return p + 3;
            }
            if (depth == 0 && at_end(p)) {
                *right = 0;
                toks_.push_back(tok(kind == '{' ? Tok::T::kVarEnd : Tok::T::kBlockEnd, line_at(p)));
                return p + 2;
            }
            const int line = line_at(p);
            if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
                size_t e = p;
                while (e < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
                toks_.push_back(tok(Tok::T::kName, line, src_.substr(p, e - p)));
                p = e;
            } else if (std::isdigit(static_cast<unsigned char>(c))) {
                p = lex_number(p, line);
            } else if (c == '\'' || c == '"') {
                std::string out;
                size_t q = p + 1;
                while (true) {
                    if (q >= src_.size()) fail(name_, line, "unterminated string literal");
                    char d = src_[q];
                    if (d == c) break;
                    if (d == '\\' && q + 1 < src_.size()) {
                        q = unescape(q, &out, line);
                        continue;
                    }
                    out += d;
                    ++q;
                }
                toks_.push_back(tok(Tok::T::kString, line, out));
                p = q + 1;
            } else {
                static const char* const kOps2[] = {"**", "//", "==", "!=", "<=", ">="};
                std::string op;
                for (const char* o : kOps2)
                    if (src_.compare(p, 2, o) == 0) op = o;
                if (op.empty()) {
                    if (!std::strchr("+-*/%~<>=()[]{},.:|", c)) fail(name_, line, std::string("unexpected character '") + c + "'");
                    op = std::string(1, c);
                }
                if (op == "(" || op == "[" || op == "{") ++depth;
                if (op == ")" || op == "]" || op == "}") --depth;
                toks_.push_back(tok(Tok::T::kOp, line, op));
                p += op.size();
            }
        }
    }

    // Python's string-literal escapes (what Jinja's "unicode-escape" decoding accepts).
    size_t unescape(size_t q, std::string* out, int line) {
        char e = src_[q + 1];
        auto hex = [&](size_t from, int n) {
            if (from + static_cast<size_t>(n) > src_.size()) fail(name_, line, "truncated escape in string literal");
            uint32_t v = 0;
            for (int k = 0; k < n; ++k) {
                char h = src_[from + static_cast<size_t>(k)];
                if (!std::isxdigit(static_cast<unsigned char>(h))) fail(name_, line, "bad escape in string literal");
                v = v * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
            }
            return v;
        };
        switch (e) {
            case 'n': *out += '\n'; return q + 2;
            case 't': *out += '\t'; return q + 2;
            case 'r': *out += '\r'; return q + 2;
            case '\\': *out += '\\'; return q + 2;
            case '\'': *out += '\''; return q + 2;
            case '"': *out += '"'; return q + 2;
            case 'a': *out += '\a'; return q + 2;
            case 'b': *out += '\b'; return q + 2;
            case 'f': *out += '\f'; return q + 2;
            case 'v': *out += '\v'; return q + 2;
            case '\n': return q + 2;
            case 'x': append_utf8(*out, hex(q + 2, 2)); return q + 4;
            case 'u': append_utf8(*out, hex(q + 2, 4)); return q + 6;
            case 'U': append_utf8(*out, hex(q + 2, 8)); return q + 10;
            case 'N': fail(name_, line, "\\N{...} escapes in string literals are not supported");
            default:
                if (e >= '0' && e <= '7') {  // up to three octal digits
                    uint32_t v = 0;
                    size_t k = q + 1;
                    for (int n = 0; n < 3 && k < src_.size() && src_[k] >= '0' && src_[k] <= '7'; ++n, ++k) v = v * 8 + static_cast<uint32_t>(src_[k] - '0');
                    append_utf8(*out, v);
                    return k;
                }
                *out += '\\';
                return q + 1;
        }
    }

    // A number literal as Jinja2's lexer reads it: decimal, 0x / 0o / 0b, `_` separators, floats
    // with a fraction and/or an exponent. An integer beyond 64 bits is refused (Python would keep
    // it exact); a float beyond the range is inf, as in Python.
    size_t lex_number(size_t p, int line) {
        auto is = [&](size_t q, const char* set) { return q < src_.size() && std::strchr(set, std::tolower(static_cast<unsigned char>(src_[q]))) && src_[q] != 0; };
        size_t e = p;
        std::string digits;
        int base = 10;
        if (src_[p] == '0' && is(p + 1, "xob")) {
            const char b = static_cast<char>(std::tolower(static_cast<unsigned char>(src_[p + 1])));
            base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
            const char* set = base == 16 ? "0123456789abcdef_" : base == 8 ? "01234567_" : "01_";
            e = p + 2;
            while (is(e, set)) ++e;
            for (size_t k = p + 2; k < e; ++k)
                if (src_[k] != '_') digits += src_[k];
            if (digits.empty()) fail(name_, line, "invalid integer literal");
        } else {
            while (is(e, "0123456789_")) ++e;
            bool is_float = false;
            if (e + 1 < src_.size() && src_[e] == '.' && std::isdigit(static_cast<unsigned char>(src_[e + 1]))) {
                is_float = true;
                ++e;
                while (is(e, "0123456789_")) ++e;
            }
            if (is(e, "e")) {
                size_t q = e + 1;
                if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
                if (q < src_.size() && std::isdigit(static_cast<unsigned char>(src_[q]))) {
                    is_float = true;
                    e = q;
                    while (is(e, "0123456789_")) ++e;
                }
            }
            for (size_t k = p; k < e; ++k)
                if (src_[k] != '_') digits += src_[k];
            if (is_float) {
                Tok t = tok(Tok::T::kFloat, line, digits);
                t.f = std::strtod(digits.c_str(), nullptr);  // HUGE_VAL beyond the range: Python's inf
                toks_.push_back(t);
                return e;
            }
        }
        errno = 0;
        const unsigned long long v = std::strtoull(digits.c_str(), nullptr, base);
        if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX))
            fail(name_, line, "integer literal " + digits.substr(0, 40) + (digits.size() > 40 ? "..." : "") +
                                  " is out of cuset's 64-bit range");
        Tok t = tok(Tok::T::kInt, line, digits);
        t.i = static_cast<int64_t>(v);
        toks_.push_back(t);
        return e;
    }

    // After {% raw %}: the text up to {% endraw %}, kept as it is. Jinja2 trims no newline after
    // {% raw %} (only `raw -%}` strips), and treats {% endraw %} as any block tag: lstrip_blocks
    // before it, trim_blocks after it.
    size_t lex_raw(size_t pos, char right, int line) {
        // Drop the `raw` block tokens just pushed.
        toks_.resize(toks_.size() - 3);
        size_t k = pos;
        while (true) {
            size_t open = src_.find("{%", k);
            if (open == std::string::npos) fail(name_, line, "{% raw %} without {% endraw %}");
            size_t p = open + 2;
            char left = 0;
            if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) left = src_[p++];
            while (p < src_.size() && std::isspace(static_cast<unsigned char>(src_[p]))) ++p;
            if (src_.compare(p, 6, "endraw") == 0) {
                p += 6;
                while (p < src_.size() && std::isspace(static_cast<unsigned char>(src_[p]))) ++p;
                char r = 0;
                if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) r = src_[p++];
                if (src_.compare(p, 2, "%}") != 0) fail(name_, line, "malformed {% endraw %}");
                std::string text = src_.substr(pos, open - pos);
                if (right == '-') {
                    size_t b = 0;
                    while (b < text.size() && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
                    text.erase(0, b);
                }
                if (left == '-') {
                    size_t e = text.size();
                    while (e > 0 && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
                    text.erase(e);
                } else if (left != '+') {
                    size_t e = open;
                    while (e > pos && (src_[e - 1] == ' ' || src_[e - 1] == '\t')) --e;
                    if (e > pos && src_[e - 1] == '\n') text.erase(text.size() - std::min(open - e, text.size()));
                }
                push_text(text, pos);
                raw_right_ = r;
                return p + 2;
            }
            k = open + 2;
        }
    }
};

// ---------------------------------------------------------------- parser

class Parser {
public:
    Parser(std::vector<Tok> toks, const std::string& name) : t_(std::move(toks)), name_(name) {}

    Program run() {
        Program p;
        std::string end;
        p.body = body({}, &end);
        p.has_generation = has_generation_;
        check_names(p.body, /*soft=*/false);
        return p;
    }

private:
    std::vector<Tok> t_;
    size_t i_ = 0;
    const std::string& name_;
    bool has_generation_ = false;
    int capture_depth_ = 0;  // inside a macro, a call block or a {% set %} block
    int block_depth_ = 0;    // nested block statements
    int expr_depth_ = 0;     // nested expression parsing
    int loop_depth_ = 0;     // for loops around the current statement, within its macro
    // The macros being parsed (innermost last): whether their bodies read varargs, kwargs, caller.
    std::vector<Stmt*> macros_;
    std::vector<Stmt*> loops_;  // the for loops being parsed: whether they read `loop`

    struct DepthGuard {
        int& d;
        DepthGuard(int& depth, const Parser& p, int line) : d(depth) {
            if (++d > kMaxParseDepth) {
                --d;
                fail(p.name_, line, "nesting deeper than " + std::to_string(kMaxParseDepth) + " levels");
            }
        }
        ~DepthGuard() { --d; }
    };

    const Tok& peek(size_t k = 0) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
    const Tok& next() { return t_[std::min(i_++, t_.size() - 1)]; }
    bool is_op(const char* op, size_t k = 0) const { return peek(k).t == Tok::T::kOp && peek(k).s == op; }
    bool is_name(const char* n, size_t k = 0) const { return peek(k).t == Tok::T::kName && peek(k).s == n; }
    void expect_op(const char* op) {
        if (!is_op(op)) fail(name_, peek().line, std::string("expected '") + op + "'" + got());
        ++i_;
    }
    std::string got() const {
        const Tok& k = peek();
        switch (k.t) {
            case Tok::T::kVarEnd: return ", got the end of {{ }}";
            case Tok::T::kBlockEnd: return ", got the end of {% %}";
            case Tok::T::kEof: return ", got the end of the template";
            case Tok::T::kText: return ", got template text";
            default: return ", got '" + k.s.substr(0, 40) + "'";
        }
    }
    std::string expect_name() {
        if (peek().t != Tok::T::kName) fail(name_, peek().line, "expected a name" + got());
        return next().s;
    }
    void expect_block_end() {
        if (peek().t != Tok::T::kBlockEnd) fail(name_, peek().line, "expected the end of the tag" + got());
        ++i_;
    }

    // Statements up to a block tag whose first name is in `ends` (consumed up to that name).
    Body body(const std::vector<std::string>& ends, std::string* end) {
        Body out;
        while (true) {
            const Tok& k = peek();
            if (k.t == Tok::T::kEof) {
                if (!ends.empty()) fail(name_, k.line, "missing {% " + ends.back() + " %}");
                return out;
            }
            if (k.t == Tok::T::kText) {
                auto s = std::make_shared<Stmt>();
                s->k = Stmt::K::kText;
                s->line = k.line;
                s->text = k.s;
                out.push_back(s);
                ++i_;
                continue;
            }
            if (k.t == Tok::T::kVarBegin) {
                ++i_;
                auto s = std::make_shared<Stmt>();
                s->k = Stmt::K::kOutput;
                s->line = k.line;
                s->expr = tuple(/*with_cond=*/true, {});
                if (peek().t != Tok::T::kVarEnd) fail(name_, peek().line, "expected '}}'" + got());
                ++i_;
                out.push_back(s);
                continue;
            }
            if (k.t != Tok::T::kBlockBegin) fail(name_, k.line, "unexpected" + got());
            ++i_;
            const int line = peek().line;
            std::string kw = expect_name();
            for (const std::string& e : ends)
                if (kw == e) {
                    *end = kw;
                    return out;
                }
            DepthGuard g(block_depth_, *this, line);
            out.push_back(statement(kw, line));
        }
    }

    // A body whose statements are in their own function in Jinja2 (a macro, a call block, a
    // {% set %} block): loops around it do not reach into it.
    Body captured_body(const std::vector<std::string>& ends, std::string* end) {
        const int saved_loops = loop_depth_;
        loop_depth_ = 0;
        ++capture_depth_;
        Body b = body(ends, end);
        --capture_depth_;
        loop_depth_ = saved_loops;
        return b;
    }

    // `name`, `ns.attr` (with_namespace) or a tuple of targets, as Jinja2's parse_assign_target.
    Target target(bool with_namespace, const char* extra_end) {
        Target t;
        if (with_namespace && peek().t == Tok::T::kName && is_op(".", 1)) {
            t.name = next().s;
            ++i_;
            t.attr = expect_name();
            return t;
        }
        std::vector<Target> items;
        bool is_tuple = false;
        while (true) {
            if (!items.empty()) expect_op(",");
            if (peek().t == Tok::T::kBlockEnd || is_op(")") || (extra_end && is_name(extra_end)) || is_op("=")) {
                if (items.empty()) fail(name_, peek().line, "expected an assignment target" + got());
                break;
            }
            items.push_back(target_primary());
            if (is_op(",")) is_tuple = true;
            else break;
        }
        if (!is_tuple) return items[0];
        t.items = std::move(items);
        return t;
    }
    Target target_primary() {
        if (is_op("(")) {
            const int line = next().line;
            DepthGuard g(expr_depth_, *this, line);
            Target t = target(false, nullptr);
            expect_op(")");
            return t;
        }
        Target t;
        const Tok& k = peek();
        if (k.t != Tok::T::kName || k.s == "true" || k.s == "false" || k.s == "none" || k.s == "True" || k.s == "False" ||
            k.s == "None")
            fail(name_, k.line, "cannot assign to" + got().substr(5));
        t.name = next().s;
        return t;
    }

    // `(a, b=1, ...)` of a macro or a call block: names with optional defaults.
    void signature(Stmt* s) {
        expect_op("(");
        while (!is_op(")")) {
            if (!s->params.empty()) expect_op(",");
            if (is_op(")")) break;
            s->params.push_back(expect_name());
            ExprP d;
            if (is_op("=")) {
                ++i_;
                d = expr(true);
            } else if (!s->defaults.empty() && s->defaults.back()) {
                fail(name_, peek().line, "non-default argument follows default argument");
            }
            s->defaults.push_back(d);
        }
        expect_op(")");
    }

    // {% if %} ... {% elif %} ... {% else %} ... {% endif %}
    void if_tag(Stmt* s) {
        std::string end;
        s->k = Stmt::K::kIf;
        s->conds.push_back(tuple(false, {}));
        expect_block_end();
        while (true) {
            s->bodies.push_back(body({"elif", "else", "endif"}, &end));
            if (end == "elif") {
                s->conds.push_back(tuple(false, {}));
                expect_block_end();
            } else if (end == "else") {
                expect_block_end();
                s->bodies.push_back(body({"endif"}, &end));
                s->has_else = true;
                expect_block_end();
                break;
            } else {
                expect_block_end();
                break;
            }
        }
    }

    // {% for target in iterable [if filter] [recursive] %} ... [{% else %} ...] {% endfor %}
    void for_tag(Stmt* s) {
        std::string end;
        s->k = Stmt::K::kFor;
        s->target = target(false, "in");
        if (!is_name("in")) fail(name_, peek().line, "expected 'in'" + got());
        ++i_;
        s->expr = tuple(false, "recursive");
        loops_.push_back(s);
        if (is_name("if")) {
            ++i_;
            s->filter = expr(true);
        }
        if (is_name("recursive")) {
            ++i_;
            s->recursive = true;
        }
        expect_block_end();
        ++loop_depth_;
        s->bodies.push_back(body({"else", "endfor"}, &end));
        --loop_depth_;
        loops_.pop_back();
        if (end == "else") {
            expect_block_end();
            s->bodies.push_back(body({"endfor"}, &end));
            s->has_else = true;
        }
        expect_block_end();
    }

    // {% set target = value %}, or the block form {% set target [| filters] %} ... {% endset %}
    void set_tag(Stmt* s, int line) {
        std::string end;
        s->target = target(true, nullptr);
        if (is_op("=")) {
            ++i_;
            s->k = Stmt::K::kSet;
            s->expr = tuple(true, {});
            expect_block_end();
        } else {
            s->k = Stmt::K::kSetBlock;
            if (is_op("|")) {
                ++i_;
                s->expr = filters(block_value(line), /*start_inline=*/true);
            }
            expect_block_end();
            s->bodies.push_back(captured_body({"endset"}, &end));
            expect_block_end();
        }
    }

    StmtP statement(const std::string& kw, int line) {
        auto s = std::make_shared<Stmt>();
        s->line = line;
        std::string end;
        if (kw == "if") {
            if_tag(s.get());
        } else if (kw == "for") {
            for_tag(s.get());
        } else if (kw == "set") {
            set_tag(s.get(), line);
        } else if (kw == "macro") {
            s->k = Stmt::K::kMacro;
            s->name = expect_name();
            signature(s.get());
            expect_block_end();
            macros_.push_back(s.get());
            s->bodies.push_back(captured_body({"endmacro"}, &end));
            macros_.pop_back();
            expect_block_end();
        } else if (kw == "call") {
            s->k = Stmt::K::kCallBlock;
            if (is_op("(")) signature(s.get());
            s->expr = expr(true);
            if (s->expr->k != Expr::K::kCall) fail(name_, line, "expected a call after {% call %}");
            expect_block_end();
            macros_.push_back(s.get());
            s->bodies.push_back(captured_body({"endcall"}, &end));
            macros_.pop_back();
            expect_block_end();
        } else if (kw == "filter") {
            s->k = Stmt::K::kFilterBlock;
            s->expr = filters(block_value(line), /*start_inline=*/true);
            expect_block_end();
            s->bodies.push_back(captured_body({"endfilter"}, &end));
            expect_block_end();
        } else if (kw == "with") {
            s->k = Stmt::K::kWith;
            while (peek().t != Tok::T::kBlockEnd) {
                if (!s->params.empty()) expect_op(",");
                s->params.push_back(expect_name());
                expect_op("=");
                s->defaults.push_back(expr(true));
            }
            expect_block_end();
            s->bodies.push_back(body({"endwith"}, &end));
            expect_block_end();
        } else if (kw == "block") {
            s->k = Stmt::K::kScope;
            s->name = expect_name();
            while (is_name("scoped") || is_name("required")) ++i_;
            expect_block_end();
            s->bodies.push_back(body({"endblock"}, &end));
            if (peek().t == Tok::T::kName) {
                if (peek().s != s->name) fail(name_, peek().line, "{% endblock %} names '" + peek().s + "', not '" + s->name + "'");
                ++i_;
            }
            expect_block_end();
        } else if (kw == "generation") {
            if (capture_depth_ > 0) fail(name_, line, "unsupported construct: {% generation %} inside a macro or {% set %} block");
            s->k = Stmt::K::kGeneration;
            has_generation_ = true;
            expect_block_end();
            s->bodies.push_back(body({"endgeneration"}, &end));
            expect_block_end();
        } else if (kw == "break" || kw == "continue") {
            if (loop_depth_ == 0) fail(name_, line, "'" + kw + "' outside of a loop");
            s->k = kw == "break" ? Stmt::K::kBreak : Stmt::K::kContinue;
            expect_block_end();
        } else if (kw == "include" || kw == "import" || kw == "from" || kw == "extends") {
            // Parsed as far as the end of the tag; Jinja2 without a loader fails only when it runs one.
            s->k = Stmt::K::kNoLoader;
            s->text = kw;
            while (peek().t != Tok::T::kBlockEnd && peek().t != Tok::T::kEof) ++i_;
            expect_block_end();
        } else {
            fail(name_, line, "unknown tag '" + kw.substr(0, 40) + "'");
        }
        return s;
    }

    ExprP node(Expr::K k, int line) {
        auto e = std::make_shared<Expr>();
        e->k = k;
        e->line = line;
        return e;
    }
    ExprP block_value(int line) { return node(Expr::K::kBlockValue, line); }

    // Jinja2's parse_tuple: expressions separated by commas; a tuple when there is a comma.
    // with_cond = false: no conditional expression at the top (for iterables and if tests).
    ExprP tuple(bool with_cond, const char* extra_end, bool explicit_parens = false) {
        const int line = peek().line;
        std::vector<ExprP> items;
        bool is_tuple = false;
        while (true) {
            if (!items.empty()) expect_op(",");
            const Tok& k = peek();
            if (k.t == Tok::T::kVarEnd || k.t == Tok::T::kBlockEnd || is_op(")") || (extra_end && is_name(extra_end)))
                break;
            items.push_back(with_cond ? expr(true) : expr(false));
            if (is_op(",")) is_tuple = true;
            else break;
        }
        if (!is_tuple) {
            if (!items.empty()) return items[0];
            if (!explicit_parens) fail(name_, line, "expected an expression" + got());
        }
        ExprP n = node(Expr::K::kTuple, line);
        n->a = std::move(items);
        return fin(n);
    }

    // ---- expressions (Jinja's precedence: cond < or < and < not < compare < + - < ~ < * / // % < ** < unary < postfix/filters)
    ExprP expr(bool with_cond) {
        DepthGuard g(expr_depth_, *this, peek().line);
        ExprP a = or_expr();
        if (!with_cond) return a;
        while (is_name("if")) {
            const int line = next().line;
            ExprP c = or_expr();
            ExprP e;
            if (is_name("else")) {
                ++i_;
                e = expr(true);
            }
            ExprP n = node(Expr::K::kCond, line);
            n->a = {a, c, e};
            a = fin(n);
        }
        return a;
    }
    ExprP or_expr() {
        ExprP a = and_expr();
        while (is_name("or")) {
            ExprP n = node(Expr::K::kOr, next().line);
            n->a = {a, and_expr()};
            a = fin(n);
        }
        return a;
    }
    ExprP and_expr() {
        ExprP a = not_expr();
        while (is_name("and")) {
            ExprP n = node(Expr::K::kAnd, next().line);
            n->a = {a, not_expr()};
            a = fin(n);
        }
        return a;
    }
    ExprP not_expr() {
        if (is_name("not")) {
            DepthGuard g(expr_depth_, *this, peek().line);
            ExprP n = node(Expr::K::kNot, next().line);
            n->a = {not_expr()};
            return fin(n);
        }
        return compare();
    }
    ExprP compare() {
        ExprP a = math1();
        ExprP cmp;
        while (true) {
            std::string op;
            const Tok& k = peek();
            if (k.t == Tok::T::kOp && (k.s == "==" || k.s == "!=" || k.s == "<" || k.s == ">" || k.s == "<=" || k.s == ">=")) {
                op = k.s;
                ++i_;
            } else if (is_name("in")) {
                op = "in";
                ++i_;
            } else if (is_name("not") && is_name("in", 1)) {
                op = "notin";
                i_ += 2;
            } else {
                break;
            }
            if (!cmp) {
                cmp = node(Expr::K::kCompare, k.line);
                cmp->a.push_back(a);
            }
            cmp->ops.push_back(op);
            cmp->a.push_back(math1());
        }
        return cmp ? fin(cmp) : a;
    }
    // Left-nested operators build deep trees without recursing here: each new level counts.
    ExprP binary(const std::string& op, ExprP a, ExprP b, int line) {
        ExprP n = node(Expr::K::kBin, line);
        n->s = op;
        n->a = {std::move(a), std::move(b)};
        return fin(n);
    }
    // A finished node: its depth from its children's. Left-nested chains (a + b + c, x|f|g, a.b.c)
    // grow the tree without recursing in the parser, so the depth is checked here.
    ExprP fin(ExprP n) {
        int d = 0;
        for (const ExprP& c : n->a)
            if (c) d = std::max(d, c->depth);
        if (n->dyn_args) d = std::max(d, n->dyn_args->depth);
        if (n->dyn_kwargs) d = std::max(d, n->dyn_kwargs->depth);
        n->depth = d + 1;
        if (n->depth > kMaxParseDepth)
            fail(name_, n->line, "expression nested deeper than " + std::to_string(kMaxParseDepth) + " levels");
        return n;
    }
    ExprP math1() {
        ExprP a = concat();
        while (is_op("+") || is_op("-")) {
            const Tok& k = next();
            a = binary(k.s, a, concat(), k.line);
        }
        return a;
    }
    // `~` is one n-ary node, as Jinja2's Concat: a long chain is flat.
    ExprP concat() {
        ExprP a = math2();
        if (!is_op("~")) return a;
        ExprP n = node(Expr::K::kConcat, peek().line);
        n->a.push_back(a);
        while (is_op("~")) {
            ++i_;
            n->a.push_back(math2());
        }
        return fin(n);
    }
    ExprP math2() {
        ExprP a = pow();
        while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
            const Tok& k = next();
            a = binary(k.s, a, pow(), k.line);
        }
        return a;
    }
    ExprP pow() {
        ExprP a = unary(true);
        while (is_op("**")) {
            const Tok& k = next();
            a = binary("**", a, unary(true), k.line);
        }
        return a;
    }
    ExprP unary(bool with_filter) {
        DepthGuard g(expr_depth_, *this, peek().line);
        ExprP n;
        if (is_op("-") || is_op("+")) {
            const Tok& k = next();
            n = node(k.s == "-" ? Expr::K::kNeg : Expr::K::kPos, k.line);
            n->a = {unary(false)};
            n = fin(n);
        } else {
            n = primary();
        }
        n = postfix(n);
        if (with_filter) n = filters(n, false);
        return n;
    }

    // After '(': positional, keyword, *args and **kwargs arguments up to ')'.
    void call_args(ExprP& n) {
        std::vector<ExprP> pos, kwv;
        std::vector<std::string> kwn;
        bool first = true;
        while (!is_op(")")) {
            if (!first) {
                expect_op(",");
                if (is_op(")")) break;
            }
            first = false;
            const int line = peek().line;
            if (is_op("*")) {
                ++i_;
                if (n->dyn_args || n->dyn_kwargs) fail(name_, line, "invalid *args in a call");
                n->dyn_args = expr(true);
            } else if (is_op("**")) {
                ++i_;
                if (n->dyn_kwargs) fail(name_, line, "invalid **kwargs in a call");
                n->dyn_kwargs = expr(true);
            } else if (peek().t == Tok::T::kName && is_op("=", 1)) {
                if (n->dyn_kwargs) fail(name_, line, "a keyword argument after **kwargs");
                kwn.push_back(next().s);
                ++i_;
                kwv.push_back(expr(true));
            } else {
                if (n->dyn_args || n->dyn_kwargs || !kwn.empty()) fail(name_, line, "a positional argument after keyword arguments");
                pos.push_back(expr(true));
            }
        }
        expect_op(")");
        for (auto& p : pos) n->a.push_back(p);
        for (auto& p : kwv) n->a.push_back(p);
        n->kw = kwn;
    }

    // Filters, tests and calls after an operand (Jinja2's parse_filter_expr). start_inline: the
    // first filter's name comes without '|' ({% filter name %}, {% set x | name %}).
    ExprP filters(ExprP n, bool start_inline) {
        while (true) {
            if (is_op("|") || start_inline) {
                const int line = start_inline ? peek().line : next().line;
                start_inline = false;
                std::string f = expect_name();
                while (is_op(".")) {
                    ++i_;
                    f += "." + expect_name();
                }
                ExprP m = node(Expr::K::kFilter, line);
                m->s = f;
                m->a.push_back(n);
                if (is_op("(")) {
                    ++i_;
                    call_args(m);
                }
                n = fin(m);
            } else if (is_name("is")) {
                const int line = next().line;
                ExprP m = node(Expr::K::kTest, line);
                if (is_name("not")) {
                    ++i_;
                    m->negated = true;
                }
                std::string t = expect_name();
                while (is_op(".")) {
                    ++i_;
                    t += "." + expect_name();
                }
                m->s = t;
                m->a.push_back(n);
                const Tok& k = peek();
                if (is_op("(")) {
                    ++i_;
                    call_args(m);
                } else if ((k.t == Tok::T::kName || k.t == Tok::T::kString || k.t == Tok::T::kInt || k.t == Tok::T::kFloat ||
                            is_op("[") || is_op("{")) &&
                           !is_name("else") && !is_name("or") && !is_name("and")) {
                    if (is_name("is")) fail(name_, k.line, "tests cannot be chained with 'is'");
                    m->a.push_back(postfix(primary()));
                }
                n = fin(m);
            } else if (is_op("(")) {
                const int line = next().line;
                ExprP m = node(Expr::K::kCall, line);
                m->a.push_back(n);
                call_args(m);
                n = fin(m);
            } else {
                return n;
            }
        }
    }

    ExprP postfix(ExprP n) {
        while (true) {
            if (is_op(".")) {
                const int line = next().line;
                ExprP m = node(Expr::K::kAttr, line);
                if (peek().t == Tok::T::kInt) {
                    m->k = Expr::K::kIndex;
                    ExprP lit = node(Expr::K::kLit, line);
                    lit->lit = Value::integer(next().i);
                    m->a = {n, lit};
                } else {
                    m->s = expect_name();
                    m->a = {n};
                }
                n = fin(m);
            } else if (is_op("[")) {
                const int line = next().line;
                n = subscript(n, line);
            } else if (is_op("(")) {
                const int line = next().line;
                ExprP m = node(Expr::K::kCall, line);
                m->a.push_back(n);
                call_args(m);
                n = fin(m);
            } else {
                return n;
            }
        }
    }

    // After '[': an index, a slice, or several of them (a tuple key).
    ExprP subscript(ExprP obj, int line) {
        std::vector<ExprP> args;
        bool slice = false;
        ExprP parts[3];
        while (!is_op("]")) {
            if (!args.empty() || slice) {
                expect_op(",");
                if (slice) fail(name_, line, "unsupported construct: a slice inside a tuple subscript");
            }
            // One subscribed: an expression, or a slice [start]:[stop][:step].
            ExprP first;
            if (!is_op(":")) first = expr(true);
            if (is_op(":")) {
                if (!args.empty()) fail(name_, line, "unsupported construct: a slice inside a tuple subscript");
                slice = true;
                parts[0] = first;
                ++i_;
                if (!is_op("]") && !is_op(",") && !is_op(":")) parts[1] = expr(true);
                if (is_op(":")) {
                    ++i_;
                    if (!is_op("]") && !is_op(",")) parts[2] = expr(true);
                }
                continue;
            }
            args.push_back(first);
        }
        expect_op("]");
        if (slice) {
            ExprP m = node(Expr::K::kSlice, line);
            m->a = {obj, parts[0], parts[1], parts[2]};
            return fin(m);
        }
        if (args.empty()) fail(name_, line, "unexpected ']'");
        ExprP m = node(Expr::K::kIndex, line);
        if (args.size() == 1) {
            m->a = {obj, args[0]};
        } else {
            ExprP t = node(Expr::K::kTuple, line);
            t->a = std::move(args);
            m->a = {obj, fin(t)};
        }
        return fin(m);
    }

    ExprP primary() {
        DepthGuard g(expr_depth_, *this, peek().line);
        const Tok& k = peek();
        const int line = k.line;
        if (k.t == Tok::T::kString) {
            ExprP n = node(Expr::K::kLit, line);
            std::string s;
            while (peek().t == Tok::T::kString) s += next().s;  // adjacent literals concatenate
            n->lit = Value::string(s);
            return n;
        }
        if (k.t == Tok::T::kInt || k.t == Tok::T::kFloat) {
            ExprP n = node(Expr::K::kLit, line);
            n->lit = k.t == Tok::T::kInt ? Value::integer(k.i) : Value::number(k.f);
            ++i_;
            return n;
        }
        if (k.t == Tok::T::kName) {
            ++i_;
            ExprP n = node(Expr::K::kLit, line);
            if (k.s == "true" || k.s == "True") n->lit = Value::boolean(true);
            else if (k.s == "false" || k.s == "False") n->lit = Value::boolean(false);
            else if (k.s == "none" || k.s == "None") n->lit = Value::none();
            else {
                n->k = Expr::K::kName;
                n->s = k.s;
                if (k.s == "loop")
                    for (Stmt* l : loops_) l->uses_loop = true;
                for (Stmt* m : macros_) {  // Jinja2 gives a macro varargs/kwargs/caller when its body reads them
                    if (k.s == "varargs") m->uses_varargs = true;
                    if (k.s == "kwargs") m->uses_kwargs = true;
                    if (k.s == "caller") m->uses_caller = true;
                }
            }
            return n;
        }
        if (is_op("(")) {
            ++i_;
            ExprP n = tuple(true, nullptr, /*explicit_parens=*/true);
            expect_op(")");
            return n;
        }
        if (is_op("[")) {
            ++i_;
            ExprP n = node(Expr::K::kList, line);
            while (!is_op("]")) {
                if (!n->a.empty()) {
                    expect_op(",");
                    if (is_op("]")) break;
                }
                n->a.push_back(expr(true));
            }
            expect_op("]");
            return fin(n);
        }
        if (is_op("{")) {
            ++i_;
            ExprP n = node(Expr::K::kDict, line);
            while (!is_op("}")) {
                if (!n->a.empty()) {
                    expect_op(",");
                    if (is_op("}")) break;
                }
                n->a.push_back(expr(true));
                expect_op(":");
                n->a.push_back(expr(true));
            }
            expect_op("}");
            return fin(n);
        }
        fail(name_, line, "unexpected" + got().substr(5));
    }

    // ---- names: Jinja2's compiler refuses a filter or test it does not know, except inside an
    // `if` statement or a conditional expression (a "soft" frame), where it fails at run time.
    void check_names(const Expr* e, bool soft) {
        if (!e) return;
        if (e->k == Expr::K::kCond) soft = true;
        if (!soft && e->k == Expr::K::kFilter && !jinja2_filter(e->s))
            fail(name_, e->line, "no filter named '" + e->s.substr(0, 60) + "'");
        if (!soft && e->k == Expr::K::kTest && !jinja2_test(e->s))
            fail(name_, e->line, "no test named '" + e->s.substr(0, 60) + "'");
        for (const ExprP& c : e->a) check_names(c.get(), soft);
        check_names(e->dyn_args.get(), soft);
        check_names(e->dyn_kwargs.get(), soft);
    }
    void check_names(const Body& b, bool soft) {
        for (const StmtP& s : b) {
            switch (s->k) {
                case Stmt::K::kIf:
                    for (const ExprP& c : s->conds) check_names(c.get(), true);
                    for (const Body& x : s->bodies) check_names(x, true);
                    break;
                case Stmt::K::kFor:
                    check_names(s->expr.get(), soft);
                    check_names(s->filter.get(), false);
                    check_names(s->bodies[0], false);
                    if (s->has_else) check_names(s->bodies[1], soft);
                    break;
                case Stmt::K::kCallBlock:
                    check_names(s->expr.get(), soft);
                    for (const ExprP& d : s->defaults) check_names(d.get(), false);
                    check_names(s->bodies[0], false);
                    break;
                case Stmt::K::kWith:
                    for (const ExprP& d : s->defaults) check_names(d.get(), soft);
                    check_names(s->bodies[0], false);
                    break;
                case Stmt::K::kMacro:
                    for (const ExprP& d : s->defaults) check_names(d.get(), false);
                    check_names(s->bodies[0], false);
                    break;
                case Stmt::K::kSetBlock:
                case Stmt::K::kFilterBlock:
                case Stmt::K::kScope:
                case Stmt::K::kGeneration:
                    check_names(s->expr.get(), false);
                    for (const Body& x : s->bodies) check_names(x, false);
                    break;
                default:
                    check_names(s->expr.get(), soft);
                    for (const Body& x : s->bodies) check_names(x, soft);
            }
        }
    }
};

const char* const kJinja2Filters[] = {
    "abs", "attr", "batch", "capitalize", "center", "count", "d", "default", "dictsort", "e", "escape",
    "filesizeformat", "first", "float", "forceescape", "format", "groupby", "indent", "int", "items", "join",
    "last", "length", "list", "lower", "map", "max", "min", "pprint", "random", "reject", "rejectattr",
    "replace", "reverse", "round", "safe", "select", "selectattr", "slice", "sort", "string", "striptags",
    "sum", "title", "tojson", "trim", "truncate", "unique", "upper", "urlencode", "urlize", "wordcount",
    "wordwrap", "xmlattr"};
const char* const kJinja2Tests[] = {
    "!=", "<", "<=", "==", ">", ">=", "boolean", "callable", "defined", "divisibleby", "eq", "equalto",
    "escaped", "even", "false", "filter", "float", "ge", "greaterthan", "gt", "in", "integer", "iterable",
    "le", "lessthan", "lower", "lt", "mapping", "ne", "none", "number", "odd", "sameas", "sequence",
    "string", "test", "true", "undefined", "upper"};

template <size_t N>
bool in_list(const char* const (&l)[N], const std::string& n) {
    for (const char* x : l)
        if (n == x) return true;
    return false;
}

}  // namespace

bool jinja2_filter(const std::string& name) { return in_list(kJinja2Filters, name); }
bool jinja2_test(const std::string& name) { return in_list(kJinja2Tests, name); }
std::vector<std::string> jinja2_filters() { return {std::begin(kJinja2Filters), std::end(kJinja2Filters)}; }

Program parse(const std::string& source, const std::string& name) {
    Lexer lex(source, name);
    Parser p(lex.run(), name);
    return p.run();
}

}  // namespace cuset::jinja::detail
