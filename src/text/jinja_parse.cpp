// The Jinja lexer and parser: template source -> syntax tree (jinja_ast.h), with the whitespace
// rules of transformers' environment (trim_blocks, lstrip_blocks, no kept trailing newline) and
// the `-`/`+` modifiers. Every construct outside the supported subset is refused here, with the
// line, so that a template either renders as Jinja would or is not used at all.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include "cuset/core/error.h"
#include "jinja_ast.h"

namespace cuset::jinja::detail {

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
    throw InputError(name + ":" + std::to_string(line) + ": " + what);
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
                size_t e = p;
                while (e < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
                bool is_float = false;
                if (e + 1 < src_.size() && src_[e] == '.' && std::isdigit(static_cast<unsigned char>(src_[e + 1]))) {
                    is_float = true;
                    ++e;
                    while (e < src_.size() && std::isdigit(static_cast<unsigned char>(src_[e]))) ++e;
                }
                if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
                    size_t q = e + 1;
                    if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
                    if (q < src_.size() && std::isdigit(static_cast<unsigned char>(src_[q]))) {
                        is_float = true;
                        e = q;
                        while (e < src_.size() && std::isdigit(static_cast<unsigned char>(src_[e]))) ++e;
                    }
                }
                std::string num;
                for (size_t k = p; k < e; ++k)
                    if (src_[k] != '_') num += src_[k];
                Tok t = tok(is_float ? Tok::T::kFloat : Tok::T::kInt, line, num);
                if (is_float) t.f = std::stod(num);
                else t.i = std::stoll(num);
                toks_.push_back(t);
                p = e;
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
            default:
                if (e >= '0' && e <= '7') fail(name_, line, "octal escapes in string literals are not supported");
                *out += '\\';
                return q + 1;
        }
    }

    // After {% raw %}: the text up to {% endraw %}, kept as it is.
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
                } else if (right != '+' && !text.empty() && text[0] == '\n') {
                    text.erase(0, 1);
                }
                if (left == '-') {
                    size_t e = text.size();
                    while (e > 0 && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
                    text.erase(e);
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
        for (const auto& [fn, line] : called_)
            if (!supported_global(fn) && !macros_.count(fn))
                fail(name_, line, "unsupported construct: call of unknown function '" + fn + "'");
        return p;
    }

private:
    std::vector<Tok> t_;
    size_t i_ = 0;
    const std::string& name_;
    bool has_generation_ = false;
    int capture_depth_ = 0;  // inside a macro or {% set %} block
    std::vector<std::pair<std::string, int>> called_;
    std::set<std::string> macros_;

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
            default: return ", got '" + k.s + "'";
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
                s->expr = expr();
                if (peek().t != Tok::T::kVarEnd) fail(name_, peek().line, "expected '}}'" + got());
                ++i_;
                out.push_back(s);
                continue;
            }
            // block
            ++i_;
            const int line = peek().line;
            std::string kw = expect_name();
            for (const std::string& e : ends)
                if (kw == e) {
                    *end = kw;
                    return out;
                }
            out.push_back(statement(kw, line));
        }
    }

    StmtP statement(const std::string& kw, int line) {
        auto s = std::make_shared<Stmt>();
        s->line = line;
        if (kw == "if") {
            s->k = Stmt::K::kIf;
            s->conds.push_back(expr());
            expect_block_end();
            std::string end;
            while (true) {
                s->bodies.push_back(body({"elif", "else", "endif"}, &end));
                if (end == "elif") {
                    s->conds.push_back(expr());
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
        } else if (kw == "for") {
            s->k = Stmt::K::kFor;
            s->targets.push_back(expect_name());
            while (is_op(",")) {
                ++i_;
                s->targets.push_back(expect_name());
            }
            if (!is_name("in")) fail(name_, peek().line, "expected 'in'" + got());
            ++i_;
            s->expr = ternary_free();
            if (is_name("if")) {
                ++i_;
                s->filter = ternary_free();
            }
            if (is_name("recursive")) fail(name_, line, "unsupported construct: recursive for loop");
            expect_block_end();
            std::string end;
            s->bodies.push_back(body({"else", "endfor"}, &end));
            if (end == "else") {
                expect_block_end();
                s->bodies.push_back(body({"endfor"}, &end));
                s->has_else = true;
            }
            expect_block_end();
        } else if (kw == "set") {
            std::string first = expect_name();
            if (is_op(".")) {
                ++i_;
                s->targets = {first, expect_name()};
                s->attr_target = true;
            } else {
                s->targets.push_back(first);
                while (is_op(",")) {
                    ++i_;
                    s->targets.push_back(expect_name());
                }
            }
            if (is_op("=")) {
                ++i_;
                s->k = Stmt::K::kSet;
                s->expr = expr();
                expect_block_end();
            } else {
                if (s->attr_target || s->targets.size() != 1) fail(name_, line, "unsupported construct: block set of this target");
                if (is_op("|")) fail(name_, line, "unsupported construct: filtered block set");
                expect_block_end();
                s->k = Stmt::K::kSetBlock;
                s->name = s->targets[0];
                std::string end;
                ++capture_depth_;
                s->bodies.push_back(body({"endset"}, &end));
                --capture_depth_;
                expect_block_end();
            }
        } else if (kw == "macro") {
            s->k = Stmt::K::kMacro;
            s->name = expect_name();
            macros_.insert(s->name);
            expect_op("(");
            while (!is_op(")")) {
                s->params.push_back(expect_name());
                ExprP d;
                if (is_op("=")) {
                    ++i_;
                    d = expr();
                }
                s->defaults.push_back(d);
                if (!is_op(",")) break;
                ++i_;
            }
            expect_op(")");
            expect_block_end();
            std::string end;
            ++capture_depth_;
            s->bodies.push_back(body({"endmacro"}, &end));
            --capture_depth_;
            if (peek().t == Tok::T::kName) ++i_;  // {% endmacro name %}
            expect_block_end();
        } else if (kw == "generation") {
            if (capture_depth_ > 0) fail(name_, line, "unsupported construct: {% generation %} inside a macro or {% set %} block");
            s->k = Stmt::K::kGeneration;
            has_generation_ = true;
            expect_block_end();
            std::string end;
            s->bodies.push_back(body({"endgeneration"}, &end));
            expect_block_end();
        } else if (kw == "break" || kw == "continue") {
            s->k = kw == "break" ? Stmt::K::kBreak : Stmt::K::kContinue;
            expect_block_end();
        } else {
            fail(name_, line, "unsupported construct: {% " + kw + " %}");
        }
        return s;
    }

    ExprP node(Expr::K k, int line) {
        auto e = std::make_shared<Expr>();
        e->k = k;
        e->line = line;
        return e;
    }

    // ---- expressions (Jinja's precedence: cond < or < and < not < compare < + - < ~ < * / // % < ** < unary < postfix/filters)
    ExprP expr() {
        ExprP a = or_expr();
        while (is_name("if")) {
            const int line = next().line;
            ExprP c = or_expr();
            ExprP e;
            if (is_name("else")) {
                ++i_;
                e = expr();
            }
            ExprP n = node(Expr::K::kCond, line);
            n->a = {a, c, e};
            a = n;
        }
        return a;
    }
    // A `for` iterable and its filter: no conditional expression (Jinja parses them so).
    ExprP ternary_free() { return or_expr(); }
    ExprP or_expr() {
        ExprP a = and_expr();
        while (is_name("or")) {
            ExprP n = node(Expr::K::kOr, next().line);
            n->a = {a, and_expr()};
            a = n;
        }
        return a;
    }
    ExprP and_expr() {
        ExprP a = not_expr();
        while (is_name("and")) {
            ExprP n = node(Expr::K::kAnd, next().line);
            n->a = {a, not_expr()};
            a = n;
        }
        return a;
    }
    ExprP not_expr() {
        if (is_name("not")) {
            ExprP n = node(Expr::K::kNot, next().line);
            n->a = {not_expr()};
            return n;
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
        return cmp ? cmp : a;
    }
    ExprP binary(const std::string& op, ExprP a, ExprP b, int line) {
        ExprP n = node(Expr::K::kBin, line);
        n->s = op;
        n->a = {std::move(a), std::move(b)};
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
    ExprP concat() {
        ExprP a = math2();
        while (is_op("~")) {
            const Tok& k = next();
            a = binary("~", a, math2(), k.line);
        }
        return a;
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
        ExprP n;
        if (is_op("-") || is_op("+")) {
            const Tok& k = next();
            n = node(k.s == "-" ? Expr::K::kNeg : Expr::K::kPos, k.line);
            n->a = {unary(false)};
        } else {
            n = postfix(primary());
        }
        if (with_filter) n = filters(n);
        return n;
    }

    void call_args(ExprP& n) {
        // after '(' ; positional then keyword arguments
        std::vector<ExprP> pos, kwv;
        std::vector<std::string> kwn;
        while (!is_op(")")) {
            if (peek().t == Tok::T::kName && is_op("=", 1)) {
                kwn.push_back(next().s);
                ++i_;
                kwv.push_back(expr());
            } else {
                if (is_op("*") || is_op("**")) fail(name_, peek().line, "unsupported construct: *args/**kwargs in a call");
                if (!kwn.empty()) fail(name_, peek().line, "positional argument after a keyword argument");
                pos.push_back(expr());
            }
            if (!is_op(",")) break;
            ++i_;
        }
        expect_op(")");
        for (auto& p : pos) n->a.push_back(p);
        for (auto& p : kwv) n->a.push_back(p);
        n->kw = kwn;
    }

    ExprP filters(ExprP n) {
        while (true) {
            if (is_op("|")) {
                const int line = next().line;
                std::string f = expect_name();
                if (!supported_filter(f)) fail(name_, line, "unsupported construct: filter '" + f + "'");
                ExprP m = node(Expr::K::kFilter, line);
                m->s = f;
                m->a.push_back(n);
                if (is_op("(")) {
                    ++i_;
                    call_args(m);
                }
                n = m;
            } else if (is_name("is")) {
                const int line = next().line;
                ExprP m = node(Expr::K::kTest, line);
                if (is_name("not")) {
                    ++i_;
                    m->negated = true;
                }
                std::string t = expect_name();
                if (!supported_test(t)) fail(name_, line, "unsupported construct: test '" + t + "'");
                m->s = t;
                m->a.push_back(n);
                if (is_op("(")) {
                    ++i_;
                    call_args(m);
                } else {
                    const Tok& k = peek();
                    const bool arg = k.t == Tok::T::kString || k.t == Tok::T::kInt || k.t == Tok::T::kFloat ||
                                     (k.t == Tok::T::kOp && (k.s == "[" || k.s == "{")) ||
                                     (k.t == Tok::T::kName && k.s != "and" && k.s != "or" && k.s != "else" &&
                                      k.s != "if" && k.s != "not" && k.s != "in" && k.s != "is");
                    if (arg) m->a.push_back(postfix(primary()));
                }
                n = m;
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
                n = m;
            } else if (is_op("[")) {
                const int line = next().line;
                ExprP parts[3];
                int n_colon = 0;
                while (!is_op("]")) {
                    if (is_op(":")) {
                        ++i_;
                        if (++n_colon > 2) fail(name_, line, "bad slice");
                        continue;
                    }
                    if (parts[n_colon]) fail(name_, line, "unsupported construct: tuple subscript");
                    parts[n_colon] = expr();
                }
                expect_op("]");
                ExprP m;
                if (n_colon == 0) {
                    if (!parts[0]) fail(name_, line, "empty subscript");
                    m = node(Expr::K::kIndex, line);
                    m->a = {n, parts[0]};
                } else {
                    m = node(Expr::K::kSlice, line);
                    m->a = {n, parts[0], parts[1], parts[2]};
                }
                n = m;
            } else if (is_op("(")) {
                const int line = next().line;
                ExprP m = node(Expr::K::kCall, line);
                m->a.push_back(n);
                if (n->k == Expr::K::kName) {
                    called_.push_back({n->s, line});
                } else if (n->k == Expr::K::kAttr) {
                    if (!supported_method(n->s)) fail(name_, line, "unsupported construct: method '" + n->s + "()'");
                } else {
                    fail(name_, line, "unsupported construct: call of an expression");
                }
                call_args(m);
                n = m;
            } else {
                return n;
            }
        }
    }

    ExprP primary() {
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
            }
            return n;
        }
        if (k.t == Tok::T::kOp && k.s == "(") {
            ++i_;
            if (is_op(")")) {
                ++i_;
                return node(Expr::K::kTuple, line);
            }
            ExprP first = expr();
            if (is_op(",")) {
                ExprP n = node(Expr::K::kTuple, line);
                n->a.push_back(first);
                while (is_op(",")) {
                    ++i_;
                    if (is_op(")")) break;
                    n->a.push_back(expr());
                }
                expect_op(")");
                return n;
            }
            expect_op(")");
            return first;
        }
        if (k.t == Tok::T::kOp && k.s == "[") {
            ++i_;
            ExprP n = node(Expr::K::kList, line);
            while (!is_op("]")) {
                n->a.push_back(expr());
                if (!is_op(",")) break;
                ++i_;
            }
            expect_op("]");
            return n;
        }
        if (k.t == Tok::T::kOp && k.s == "{") {
            ++i_;
            ExprP n = node(Expr::K::kDict, line);
            while (!is_op("}")) {
                n->a.push_back(expr());
                expect_op(":");
                n->a.push_back(expr());
                if (!is_op(",")) break;
                ++i_;
            }
            expect_op("}");
            return n;
        }
        fail(name_, line, "unexpected token" + got());
    }
};

}  // namespace

Program parse(const std::string& source, const std::string& name) {
    Lexer lex(source, name);
    Parser p(lex.run(), name);
    return p.run();
}

}  // namespace cuset::jinja::detail
