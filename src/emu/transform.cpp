// The CUDA-to-C++ rewrite of the CPU emulator (cuset/emu/transform.h): hand-written scanners that
// reproduce the regular expressions of the reference rewrite (tests/golden/emu_transform.py) in
// amortised linear time (memoised next-match finders, scans that never cross the text a previous
// match consumed), counting their work so that a caller can cancel a rewrite.
#include "cuset/emu/transform.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuset::emu {
namespace {

constexpr size_t npos = std::string::npos;
// Template arguments of a launched kernel, scanned backwards from `<<<`, are at most this long.
constexpr size_t kMaxTemplateScan = 4096;
// The cancellation callback is asked once per this many characters of work.
constexpr size_t kCheckEvery = size_t{1} << 16;

// Python's \s and str.isspace() on ASCII: space, \t \n \v \f \r and the separators \x1c-\x1f.
bool is_space(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    return u == ' ' || (u >= '\t' && u <= '\r') || (u >= 0x1c && u <= 0x1f);
}
// Python's \w and str.isalnum() (plus '_') on ASCII.
bool is_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool is_word(char c) { return is_alnum(c) || c == '_'; }

// The characters one rewrite has visited; `cancelled` is asked every kCheckEvery of them.
class Work {
public:
    explicit Work(const std::function<bool()>& cancelled) : cancelled_(cancelled) {}
    void step() {
        if (++done_ >= next_) check();
    }
    void add(size_t n) {
        done_ += n;
        if (done_ >= next_) check();
    }

private:
    void check() {
        next_ = done_ + kCheckEvery;
        if (cancelled_ && cancelled_())
            throw TransformCancelled("emulator rewrite: cancelled after " + std::to_string(done_) + " characters of work");
    }
    const std::function<bool()>& cancelled_;
    size_t done_ = 0, next_ = kCheckEvery;
};

// A text and its code mask: 1 for a character outside comments and string/character literals.
struct Code {
    std::string s;
    std::vector<uint8_t> mask;
};

// Appends pieces of a Code to a new one: copied ranges keep their mask; inserted text (which
// never holds a comment delimiter, a quote, a backslash or a newline) takes the mask of where it
// goes, so the result's mask is the one code_mask would compute on it.
class CodeBuilder {
public:
    explicit CodeBuilder(const Code& in) : in_(in) {}
    void copy(size_t from, size_t to) {
        if (out_.s.empty()) {
            out_.s.reserve(in_.s.size());
            out_.mask.reserve(in_.s.size());
        }
        out_.s.append(in_.s, from, to - from);
        out_.mask.insert(out_.mask.end(), in_.mask.begin() + static_cast<std::ptrdiff_t>(from),
                         in_.mask.begin() + static_cast<std::ptrdiff_t>(to));
    }
    void insert(std::string_view text, uint8_t in_code) {
        out_.s += text;
        out_.mask.insert(out_.mask.end(), text.size(), in_code);
    }
    // ` cuemu::poison_shared(&v, sizeof(v));`
    void insert_poison(std::string_view v, uint8_t in_code) {
        for (std::string_view piece : {std::string_view(" cuemu::poison_shared(&"), v, std::string_view(", sizeof("), v,
                                       std::string_view("));")})
            insert(piece, in_code);
    }
    Code take() { return std::move(out_); }

private:
    const Code& in_;
    Code out_;
};

size_t line_of(const std::string& s, size_t pos) {
    return 1 + static_cast<size_t>(std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(std::min(pos, s.size())), '\n'));
}

[[noreturn]] void fail(const std::string& s, size_t pos, const std::string& why) {
    throw InputError("emulator rewrite: " + why + " at line " + std::to_string(line_of(s, pos)));
}

std::string strip(const std::string& s, size_t a, size_t b) {
    while (a < b && is_space(s[a])) ++a;
    while (b > a && is_space(s[b - 1])) --b;
    return s.substr(a, b - a);
}

size_t skip_space(const std::string& s, size_t i, Work& w) {
    while (i < s.size() && is_space(s[i])) {
        ++i;
        w.step();
    }
    return i;
}
size_t skip_word(const std::string& s, size_t i, Work& w) {
    while (i < s.size() && is_word(s[i])) {
        ++i;
        w.step();
    }
    return i;
}

// s.find(pat, from), one block of kCheckEvery characters at a time.
size_t find(const std::string& s, std::string_view pat, size_t from, Work& w) {
    const std::string_view v(s);
    while (from < v.size()) {
        const size_t block = std::min(kCheckEvery, v.size() - from);
        const size_t at = v.substr(from, block + pat.size() - 1).find(pat);
        if (at != npos) {
            w.add(at + pat.size());
            return from + at;
        }
        w.add(block);
        from += block;
    }
    return npos;
}

// The first position >= x where `pred` holds (npos if none), for queries that mostly increase:
// a cached answer is reused while x has not passed it, so a sweep costs O(n) in all.
template <class Pred>
class NextFinder {
public:
    NextFinder(const std::string& s, Work& w, Pred pred) : s_(s), w_(w), pred_(pred) {}
    size_t at(size_t x) {
        if (!valid_ || x < from_ || (at_ != npos && x > at_)) {
            from_ = x;
            at_ = npos;
            for (size_t i = x; i < s_.size(); ++i, w_.step())
                if (pred_(i)) {
                    at_ = i;
                    break;
                }
            valid_ = true;
        }
        return at_;
    }

private:
    const std::string& s_;
    Work& w_;
    Pred pred_;
    bool valid_ = false;
    size_t from_ = 0, at_ = npos;
};
template <class Pred>
NextFinder<Pred> next_finder(const std::string& s, Work& w, Pred pred) {
    return NextFinder<Pred>(s, w, pred);
}

// CRLF and lone CR to LF (Python's universal newlines, with which the reference read its input).
std::string normalise_newlines(std::string_view in, Work& w) {
    std::string out;
    out.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i, w.step()) {
        if (in[i] == '\r') {
            out += '\n';
            if (i + 1 < in.size() && in[i + 1] == '\n') ++i;
        } else {
            out += in[i];
        }
    }
    return out;
}

// `/\*@prompt\n.*?\n@\*/\n` at the very start (re.S) becomes as many newlines.
std::string blank_metadata(std::string s, Work& w) {
    static const std::string head = "/*@prompt\n", tail = "\n@*/\n";
    if (s.compare(0, head.size(), head) != 0) return s;
    const size_t k = find(s, tail, head.size(), w);  // the lazy body may be empty
    if (k == npos) return s;
    size_t end = k + tail.size();
    size_t lines = static_cast<size_t>(std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
    return std::string(lines, '\n') + s.substr(end);
}

// The code mask of s, in one pass. A `/*` comment ends at the first `*/` found from its own start
// (so `/*/` is a whole comment, as in the reference); escapes in literals skip the next character.
std::vector<uint8_t> code_mask(const std::string& s, Work& w) {
    const size_t n = s.size();
    std::vector<uint8_t> mask(n, 1);
    size_t i = 0;
    while (i < n) {
        size_t j;
        if (s.compare(i, 2, "//") == 0) {
            j = find(s, "\n", i, w);
            if (j == npos) j = n;
        } else if (s.compare(i, 2, "/*") == 0) {
            j = find(s, "*/", i, w);
            if (j == npos) fail(s, i, "unterminated /* comment");
            j += 2;
        } else if (s[i] == '"' || s[i] == '\'') {
            const char q = s[i];
            j = i + 1;
            while (j < n && s[j] != q) {
                j += s[j] == '\\' ? 2 : 1;
                w.step();
            }
            if (j >= n) fail(s, i, q == '"' ? "unterminated string literal" : "unterminated character literal");
            j += 1;
        } else {
            ++i;
            w.step();
            continue;
        }
        std::fill(mask.begin() + static_cast<std::ptrdiff_t>(i), mask.begin() + static_cast<std::ptrdiff_t>(j), 0);
        i = j;
    }
    return mask;
}

// The end of the declarator that starts at a in s[a, b): the next `,` outside (), [], {}, <> (one
// depth counter over all of them, kept across the declarators, as the reference), or b.
size_t declarator_end(const std::string& s, size_t a, size_t b, long& depth, Work& w) {
    for (; a < b; ++a, w.step()) {
        const char c = s[a];
        if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
        else if (c == ')' || c == ']' || c == '}' || c == '>') --depth;
        else if (c == ',' && depth == 0) return a;
    }
    return b;
}

// The declared name of `(.*?)(\w+)\s*(\[.*\])?\s*$` (re.S) on the stripped first declarator w:
// the first word followed only by spaces, or by `[` ... `]` ending w. Empty when none.
std::string first_declared_name(const std::string& w, Work& work) {
    size_t i = 0;
    while (i < w.size()) {
        if (!is_word(w[i])) {
            ++i;
            continue;
        }
        size_t e = skip_word(w, i, work);
        size_t c = skip_space(w, e, work);
        if (c == w.size() || (w[c] == '[' && w.size() >= c + 2 && w.back() == ']')) return w.substr(i, e - i);
        i = e;
    }
    return "";
}

// After each static `__shared__` declaration in code, poison its variables: the reference's
// `__shared__\s+(?!.*\(\))([^;{}()]*?);` matches, skipped when they start in a comment or a
// literal or follow `extern`. Every search starts past the previous one's start and each finder
// is memoised, so the stage is linear.
Code poison_static_shared(Code in, Work& w) {
    const std::string& src = in.s;
    const size_t n = src.size();
    auto stop = next_finder(src, w, [&](size_t i) {
        char c = src[i];
        return c == ';' || c == '{' || c == '}' || c == '(' || c == ')';
    });
    auto newline = next_finder(src, w, [&](size_t i) { return src[i] == '\n'; });
    auto empty_call = next_finder(src, w, [&](size_t i) { return src[i] == '(' && i + 1 < n && src[i + 1] == ')'; });
    CodeBuilder out(in);
    size_t pos = 0, p = 0;
    static const std::string kw = "__shared__";
    while ((p = find(src, kw, p, w)) != npos) {
        const size_t b = p + kw.size();
        const size_t ws_end = skip_space(src, b, w);
        if (ws_end == b) {
            ++p;
            continue;
        }
        // [^;{}()]*?; : the first of ; { } ( ) after the spaces must be a ';'.
        const size_t semi = stop.at(ws_end);
        if (semi == npos || src[semi] != ';') {
            ++p;
            continue;
        }
        // (?!.*\(\)) at the end of \s+, which backs off to the last newline of the spaces when
        // the rest of the line holds "()".
        size_t q = ws_end;
        size_t eol = newline.at(ws_end);
        if (eol == npos) eol = n;
        size_t call = empty_call.at(ws_end);
        if (call != npos && call < eol) {
            q = npos;
            for (size_t k = ws_end; k > b + 1; --k, w.step())
                if (src[k - 1] == '\n') {
                    q = k - 1;
                    break;
                }
            if (q == npos) {
                ++p;
                continue;
            }
        }
        const size_t m_start = p, m_end = semi + 1;
        p = m_end;
        if (!in.mask[m_start]) continue;
        size_t back = m_start;
        while (back > 0 && is_space(src[back - 1])) {
            --back;
            w.step();
        }
        if (back >= 6 && src.compare(back - 6, 6, "extern") == 0) continue;
        long depth = 0;
        size_t d_end = declarator_end(src, q, semi, depth, w);
        const std::string first = first_declared_name(strip(src, q, d_end), w);
        if (first.empty()) continue;
        const uint8_t in_code = in.mask[m_end - 1];
        out.copy(pos, m_end);
        out.insert_poison(first, in_code);
        while (d_end < semi) {
            const size_t a = skip_space(src, d_end + 1, w);
            const size_t e = skip_word(src, a, w);
            if (e == a) fail(src, m_start, "a __shared__ declarator without a name");
            out.insert_poison(std::string_view(src).substr(a, e - a), in_code);
            d_end = declarator_end(src, e, semi, depth, w);
        }
        pos = m_end;
    }
    if (pos == 0) return in;  // nothing rewritten
    out.copy(pos, n);
    return out.take();
}

// The reference's `extern\s+__shared__\s+([\w\s:<>]+?)\s+(\w+)\s*\[\s*\]\s*;` replaced by
// `\1* \2 = (\1*)cuemu::dyn_smem();`, with its backtracking reproduced, for matches that start in
// code (such a match holds no comment or literal). The lazy type [b1, e) grows inside the run of
// type characters that starts at b1 until `\s+(\w+)\s*\[` matches at e; that `[` can only be the
// first character after the run, so the match is decided by the run's end alone: one memoised
// look at each run end instead of a scan of the run per occurrence (a run of 100k repeated
// `extern __shared__` is one run).
Code rewrite_extern_shared(Code in, Work& w) {
    const std::string& s = in.s;
    const size_t n = s.size();
    auto in_type = [&](char c) { return is_word(c) || is_space(c) || c == ':' || c == '<' || c == '>'; };
    auto type_end = next_finder(s, w, [&](size_t i) { return !in_type(s[i]); });
    // At the end r of a run of type characters: `\s*\]\s*;` after a `[` at r, and the name before
    // r: the run ends with spaces [sa, wa), the word [wa, wb) and optional spaces.
    struct RunEnd {
        size_t r = npos;
        bool ok = false;
        size_t sa = 0, wa = 0, wb = 0, end = 0;
    } memo;
    auto run_end = [&](size_t r) -> const RunEnd& {
        if (memo.r == r) return memo;
        memo = RunEnd{};
        memo.r = r;
        if (r >= n || s[r] != '[') return memo;
        size_t i = skip_space(s, r + 1, w);
        if (i >= n || s[i] != ']') return memo;
        i = skip_space(s, i + 1, w);
        if (i >= n || s[i] != ';') return memo;
        size_t j = r;
        while (j > 0 && is_space(s[j - 1])) --j, w.step();
        const size_t wb = j;
        while (j > 0 && is_word(s[j - 1])) --j, w.step();
        const size_t wa = j;
        while (j > 0 && is_space(s[j - 1])) --j, w.step();
        if (wa == wb || j == wa) return memo;
        memo.ok = true;
        memo.sa = j;
        memo.wa = wa;
        memo.wb = wb;
        memo.end = i + 1;
        return memo;
    };
    // `\s+(\w+)\s*\[\s*\]\s*;` at e (for the one-space type below): the name's range and the end.
    auto tail = [&](size_t e, size_t& name_a, size_t& name_b, size_t& end) {
        if (e >= n || !is_space(s[e])) return false;
        name_a = skip_space(s, e, w);
        name_b = skip_word(s, name_a, w);
        if (name_b == name_a) return false;
        size_t i = skip_space(s, name_b, w);
        if (i >= n || s[i] != '[') return false;
        i = skip_space(s, i + 1, w);
        if (i >= n || s[i] != ']') return false;
        i = skip_space(s, i + 1, w);
        if (i >= n || s[i] != ';') return false;
        end = i + 1;
        return true;
    };
    CodeBuilder out(in);
    size_t pos = 0, p = 0;
    while ((p = find(s, "extern", p, w)) != npos) {
        if (!in.mask[p]) {
            ++p;
            continue;
        }
        const size_t a = p + 6, a1 = skip_space(s, a, w);
        if (a1 == a || s.compare(a1, 10, "__shared__") != 0) {
            ++p;
            continue;
        }
        const size_t b = a1 + 10, b1 = skip_space(s, b, w);
        if (b1 == b) {
            ++p;
            continue;
        }
        size_t type_a = npos, type_b = 0, name_a = 0, name_b = 0, end = 0;
        // \s+ takes all the spaces; the lazy type then ends at the first space of the spaces
        // before the name (at least one character of type).
        size_t r = type_end.at(b1);
        if (r == npos) r = n;
        const RunEnd& t = run_end(r);
        if (t.ok && std::max(t.sa, b1 + 1) < t.wa) {
            type_a = b1;
            type_b = std::max(t.sa, b1 + 1);
            name_a = t.wa;
            name_b = t.wb;
            end = t.end;
        }
        // Otherwise \s+ gives back spaces: a one-space type then matches when the tail matches
        // right after the spaces (needs at least three of them).
        if (type_a == npos && b1 >= b + 3 && tail(b1 - 1, name_a, name_b, end)) {
            type_a = b1 - 2;
            type_b = b1 - 1;
        }
        if (type_a == npos) {
            ++p;
            continue;
        }
        const std::string type = s.substr(type_a, type_b - type_a);
        out.copy(pos, p);
        out.insert(type + "* " + s.substr(name_a, name_b - name_a) + " = (" + type + "*)cuemu::dyn_smem();", 1);
        pos = p = end;
    }
    if (pos == 0) return in;  // nothing rewritten
    out.copy(pos, n);
    return out.take();
}

// The reference's `<fn>\(\s*\((?:const\s+)?void\s*\*\)\s*(\w+)\s*,` replaced by
// `cuemu::launch_args(<coop>, \1,`, for matches in code.
Code rewrite_launch_call(Code in, const std::string& fn, const char* coop, Work& w) {
    const std::string& s = in.s;
    const size_t n = s.size();
    const std::string head = fn + "(";
    CodeBuilder out(in);
    size_t pos = 0, p = 0;
    while ((p = find(s, head, p, w)) != npos) {
        size_t i = skip_space(s, p + head.size(), w);
        bool ok = in.mask[p] && i < n && s[i] == '(';
        if (ok) {
            i = skip_space(s, i + 1, w);
            if (s.compare(i, 5, "const") == 0 && i + 5 < n && is_space(s[i + 5])) {
                size_t j = skip_space(s, i + 5, w);
                if (s.compare(j, 4, "void") == 0) i = j;
            }
            ok = s.compare(i, 4, "void") == 0;
        }
        size_t name_a = 0, name_b = 0;
        if (ok) {
            i = skip_space(s, i + 4, w);
            ok = i < n && s[i] == '*';
        }
        if (ok) ok = i + 1 < n && s[i + 1] == ')';
        if (ok) {
            name_a = skip_space(s, i + 2, w);
            name_b = skip_word(s, name_a, w);
            i = skip_space(s, name_b, w);
            ok = name_b > name_a && i < n && s[i] == ',';
        }
        if (!ok) {
            ++p;
            continue;
        }
        out.copy(pos, p);
        out.insert(std::string("cuemu::launch_args(") + coop + ", " + s.substr(name_a, name_b - name_a) + ",", 1);
        pos = p = i + 1;
    }
    if (pos == 0) return in;  // nothing rewritten
    out.copy(pos, n);
    return out.take();
}

// Start of the launched kernel's name before `<<<` at `end`: back over spaces, template
// arguments (counting < and >), and [A-Za-z0-9_:], never before `floor` (the end of the previous
// launch, which has been rewritten already).
size_t kernel_start(const std::string& s, size_t end, size_t floor, Work& w) {
    size_t i = end;
    while (i > floor && is_space(s[i - 1])) --i, w.step();
    if (i > floor && s[i - 1] == '>') {
        long depth = 0;
        while (true) {
            if (i == floor) fail(s, end, "unbalanced template arguments before '<<<'");
            if (end - i > kMaxTemplateScan) fail(s, end, "template arguments before '<<<' longer than 4096 characters");
            --i;
            w.step();
            if (s[i] == '>') {
                ++depth;
            } else if (s[i] == '<') {
                if (--depth == 0) break;
            }
        }
    }
    while (i > floor && (is_alnum(s[i - 1]) || s[i - 1] == '_' || s[i - 1] == ':')) --i, w.step();
    return i;
}

// The `)` closing the `(` at i; string literals are skipped (character literals and comments are
// not, as in the reference).
size_t matching_paren(const std::string& s, size_t i, Work& w) {
    const size_t start = i, n = s.size();
    long depth = 0;
    while (i < n) {
        const char c = s[i];
        if (c == '"') {
            ++i;
            while (i < n && s[i] != '"') {
                i += s[i] == '\\' ? 2 : 1;
                w.step();
            }
            if (i >= n) fail(s, start, "unterminated string literal in a launch's arguments");
        } else if (c == '(') {
            ++depth;
        } else if (c == ')') {
            if (--depth == 0) return i;
        }
        ++i;
        w.step();
    }
    fail(s, start, "unbalanced parentheses in a launch's arguments");
}

// Each launch in code: its backward scan stops at the previous launch's end and its forward
// scans end at its own `)`, after which the next search starts, so the stage is linear.
std::string rewrite_launches(const Code& in, Work& w) {
    const std::string& src = in.s;
    const size_t n = src.size();
    std::string out;
    out.reserve(n);
    size_t pos = 0, floor = 0;
    while (true) {
        const size_t i = find(src, "<<<", pos, w);
        if (i == npos) break;
        if (!in.mask[i]) {
            out.append(src, pos, i + 3 - pos);
            pos = i + 3;
            continue;
        }
        const size_t ks = kernel_start(src, i, floor, w);
        const size_t j = find(src, ">>>", i, w);
        if (j == npos) fail(src, i, "'<<<' without '>>>'");
        size_t k = skip_space(src, j + 3, w);
        if (k >= n || src[k] != '(') fail(src, i, "a launch without an argument list after '>>>'");
        const size_t close = matching_paren(src, k, w);
        if (ks > pos) out.append(src, pos, ks - pos);
        out += "cuemu::Launch(";
        out.append(src, i + 3, j - i - 3);
        out += ")";
        // The arguments, read once more as host expressions before the launch (cuemu.h's
        // Launch::args); a braced list, which has no type of its own there, is left to the kernel.
        const std::string_view args(src.data() + k + 1, close - k - 1);
        if (args.find_first_not_of(" \t\n") != std::string_view::npos && args.find('{') == std::string_view::npos)
            out.append(".args").append(src, k, close + 1 - k);
        out += ".go([&]{ " + strip(src, ks, i);
        out.append(src, k, close + 1 - k);
        out += "; })";
        pos = floor = close + 1;
    }
    out.append(src, pos, npos);
    return out;
}

}  // namespace

std::string transform_program(std::string_view cuda_source, const std::function<bool()>& cancelled) {
    Work w(cancelled);
    Code c;
    c.s = blank_metadata(normalise_newlines(cuda_source, w), w);
    c.mask = code_mask(c.s, w);
    c = poison_static_shared(std::move(c), w);
    c = rewrite_extern_shared(std::move(c), w);
    c = rewrite_launch_call(std::move(c), "cudaLaunchKernel", "false", w);
    c = rewrite_launch_call(std::move(c), "cudaLaunchCooperativeKernel", "true", w);
    return rewrite_launches(c, w);
}

}  // namespace cuset::emu
