// The CUDA-to-C++ rewrite of the CPU emulator (cuset/emu/transform.h): hand-written scanners that
// reproduce the original Python rewrite's regular expressions, each position visited a bounded
// number of times.
#include "cuset/emu/transform.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "cuset/core/error.h"

namespace cuset::emu {
namespace {

constexpr size_t npos = std::string::npos;
// Template arguments of a launched kernel, scanned backwards from `<<<`, are at most this long.
constexpr size_t kMaxTemplateScan = 4096;

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

size_t line_of(const std::string& s, size_t pos) {
    return 1 + static_cast<size_t>(std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(std::min(pos, s.size())), '\n'));
}

[[noreturn]] void fail(const std::string& s, size_t pos, const std::string& why) {
    throw InputError("emulator rewrite: " + why + " at line " + std::to_string(line_of(s, pos)));
}

std::string strip(const std::string& s) {
    size_t a = 0, b = s.size();
    while (a < b && is_space(s[a])) ++a;
    while (b > a && is_space(s[b - 1])) --b;
    return s.substr(a, b - a);
}

size_t skip_space(const std::string& s, size_t i) {
    while (i < s.size() && is_space(s[i])) ++i;
    return i;
}
size_t skip_word(const std::string& s, size_t i) {
    while (i < s.size() && is_word(s[i])) ++i;
    return i;
}

// The first position >= x where `pred` holds (npos if none), for queries that mostly increase:
// a cached answer is reused while x has not passed it, so a sweep costs O(n) in all.
template <class Pred>
class NextFinder {
public:
    NextFinder(const std::string& s, Pred pred) : s_(s), pred_(pred) {}
    size_t at(size_t x) {
        if (!valid_ || x < from_ || (at_ != npos && x > at_)) {
            from_ = x;
            at_ = npos;
            for (size_t i = x; i < s_.size(); ++i)
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
    Pred pred_;
    bool valid_ = false;
    size_t from_ = 0, at_ = npos;
};
template <class Pred>
NextFinder<Pred> next_finder(const std::string& s, Pred pred) {
    return NextFinder<Pred>(s, pred);
}

// CRLF and lone CR to LF (Python's universal newlines, with which the original read its input).
std::string normalise_newlines(std::string_view in) {
    std::string out;
    out.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
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
std::string blank_metadata(std::string s) {
    static const std::string head = "/*@prompt\n", tail = "\n@*/\n";
    if (s.compare(0, head.size(), head) != 0) return s;
    const size_t k = s.find(tail, head.size());  // the lazy body may be empty
    if (k == npos) return s;
    size_t end = k + tail.size();
    size_t lines = static_cast<size_t>(std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
    return std::string(lines, '\n') + s.substr(end);
}

// True for characters outside comments and string/character literals. A `/*` comment ends at the
// first `*/` found from its own start (so `/*/` is a whole comment, as in the original); escapes
// in literals skip the next character.
std::vector<char> code_mask(const std::string& s) {
    const size_t n = s.size();
    std::vector<char> mask(n, 1);
    size_t i = 0;
    while (i < n) {
        size_t j;
        if (s.compare(i, 2, "//") == 0) {
            j = s.find('\n', i);
            if (j == npos) j = n;
        } else if (s.compare(i, 2, "/*") == 0) {
            j = s.find("*/", i);
            if (j == npos) fail(s, i, "unterminated /* comment");
            j += 2;
        } else if (s[i] == '"' || s[i] == '\'') {
            const char q = s[i];
            j = i + 1;
            while (j < n && s[j] != q) j += s[j] == '\\' ? 2 : 1;
            if (j >= n) fail(s, i, q == '"' ? "unterminated string literal" : "unterminated character literal");
            j += 1;
        } else {
            ++i;
            continue;
        }
        std::fill(mask.begin() + static_cast<std::ptrdiff_t>(i), mask.begin() + static_cast<std::ptrdiff_t>(j), 0);
        i = j;
    }
    return mask;
}

// Splits at `sep` outside (), [], {}, <> (a depth counter over all of them, as the original).
std::vector<std::string> split_top(const std::string& s, char sep = ',') {
    std::vector<std::string> parts;
    std::string cur;
    long depth = 0;
    for (char c : s) {
        if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
        else if (c == ')' || c == ']' || c == '}' || c == '>') --depth;
        if (c == sep && depth == 0) {
            parts.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    parts.push_back(cur);
    return parts;
}

// The declared name of `(.*?)(\w+)\s*(\[.*\])?\s*$` (re.S) on the stripped first declarator w:
// the first word followed only by spaces, or by `[` ... `]` ending w. Empty when none.
std::string first_declared_name(const std::string& w) {
    size_t i = 0;
    while (i < w.size()) {
        if (!is_word(w[i])) {
            ++i;
            continue;
        }
        size_t e = skip_word(w, i);
        size_t c = skip_space(w, e);
        if (c == w.size() || (w[c] == '[' && w.size() >= c + 2 && w.back() == ']')) return w.substr(i, e - i);
        i = e;
    }
    return "";
}

// After each static `__shared__` declaration, poison its variables: the original's
// `__shared__\s+(?!.*\(\))([^;{}()]*?);` matches, skipped in comments, literals and after
// `extern`.
std::string poison_static_shared(const std::string& src) {
    const std::vector<char> mask = code_mask(src);
    const size_t n = src.size();
    auto stop = next_finder(src, [&](size_t i) {
        char c = src[i];
        return c == ';' || c == '{' || c == '}' || c == '(' || c == ')';
    });
    auto newline = next_finder(src, [&](size_t i) { return src[i] == '\n'; });
    auto empty_call = next_finder(src, [&](size_t i) { return src[i] == '(' && i + 1 < n && src[i + 1] == ')'; });
    std::string out;
    size_t pos = 0, p = 0;
    static const std::string kw = "__shared__";
    while ((p = src.find(kw, p)) != npos) {
        const size_t b = p + kw.size();
        const size_t ws_end = skip_space(src, b);
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
            for (size_t k = ws_end; k > b + 1; --k)
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
        if (!mask[m_start]) continue;
        size_t back = m_start;
        while (back > 0 && is_space(src[back - 1])) --back;
        if (back >= 6 && src.compare(back - 6, 6, "extern") == 0) continue;
        const std::vector<std::string> words = split_top(src.substr(q, semi - q));
        const std::string first = first_declared_name(strip(words[0]));
        if (first.empty()) continue;
        std::vector<std::string> names = {first};
        for (size_t w = 1; w < words.size(); ++w) {
            size_t a = skip_space(words[w], 0);
            size_t e = skip_word(words[w], a);
            if (e == a) fail(src, m_start, "a __shared__ declarator without a name");
            names.push_back(words[w].substr(a, e - a));
        }
        out.append(src, pos, m_end - pos);
        for (const std::string& v : names) out += " cuemu::poison_shared(&" + v + ", sizeof(" + v + "));";
        pos = m_end;
    }
    out.append(src, pos, npos);
    return out;
}

// The original's `extern\s+__shared__\s+([\w\s:<>]+?)\s+(\w+)\s*\[\s*\]\s*;` replaced by
// `\1* \2 = (\1*)cuemu::dyn_smem();`, with its backtracking reproduced.
std::string rewrite_extern_shared(const std::string& s) {
    const size_t n = s.size();
    auto in_type = [&](size_t i) { return is_word(s[i]) || is_space(s[i]) || s[i] == ':' || s[i] == '<' || s[i] == '>'; };
    // `\s+(\w+)\s*\[\s*\]\s*;` at e: the name's range and the end of the match, or false.
    auto tail = [&](size_t e, size_t& name_a, size_t& name_b, size_t& end) {
        if (e >= n || !is_space(s[e])) return false;
        name_a = skip_space(s, e);
        name_b = skip_word(s, name_a);
        if (name_b == name_a) return false;
        size_t i = skip_space(s, name_b);
        if (i >= n || s[i] != '[') return false;
        i = skip_space(s, i + 1);
        if (i >= n || s[i] != ']') return false;
        i = skip_space(s, i + 1);
        if (i >= n || s[i] != ';') return false;
        end = i + 1;
        return true;
    };
    std::string out;
    size_t pos = 0, p = 0;
    while ((p = s.find("extern", p)) != npos) {
        const size_t a = p + 6, a1 = skip_space(s, a);
        if (a1 == a || s.compare(a1, 10, "__shared__") != 0) {
            ++p;
            continue;
        }
        const size_t b = a1 + 10, b1 = skip_space(s, b);
        if (b1 == b) {
            ++p;
            continue;
        }
        size_t type_a = npos, type_b = 0, name_a = 0, name_b = 0, end = 0;
        // \s+ takes all the spaces; the lazy type then grows to the first place the tail matches.
        // Within a run of spaces the tail's result is the same, so one try per run.
        for (size_t e = b1 + 1; e <= n && in_type(e - 1);) {
            if (tail(e, name_a, name_b, end)) {
                type_a = b1;
                type_b = e;
                break;
            }
            if (e < n && is_space(s[e])) {
                while (e < n && is_space(s[e])) ++e;  // same tail result over the run
                continue;
            }
            ++e;
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
        out.append(s, pos, p - pos);
        out += type + "* " + s.substr(name_a, name_b - name_a) + " = (" + type + "*)cuemu::dyn_smem();";
        pos = p = end;
    }
    out.append(s, pos, npos);
    return out;
}

// The original's `<fn>\(\s*\((?:const\s+)?void\s*\*\)\s*(\w+)\s*,` replaced by
// `cuemu::launch_args(<coop>, \1,`.
std::string rewrite_launch_call(const std::string& s, const std::string& fn, const char* coop) {
    const size_t n = s.size();
    const std::string head = fn + "(";
    std::string out;
    size_t pos = 0, p = 0;
    while ((p = s.find(head, p)) != npos) {
        size_t i = skip_space(s, p + head.size());
        bool ok = i < n && s[i] == '(';
        if (ok) {
            i = skip_space(s, i + 1);
            if (s.compare(i, 5, "const") == 0 && i + 5 < n && is_space(s[i + 5])) {
                size_t j = skip_space(s, i + 5);
                if (s.compare(j, 4, "void") == 0) i = j;
            }
            ok = s.compare(i, 4, "void") == 0;
        }
        size_t name_a = 0, name_b = 0;
        if (ok) {
            i = skip_space(s, i + 4);
            ok = i < n && s[i] == '*';
        }
        if (ok) ok = i + 1 < n && s[i + 1] == ')';
        if (ok) {
            name_a = skip_space(s, i + 2);
            name_b = skip_word(s, name_a);
            i = skip_space(s, name_b);
            ok = name_b > name_a && i < n && s[i] == ',';
        }
        if (!ok) {
            ++p;
            continue;
        }
        out.append(s, pos, p - pos);
        out += std::string("cuemu::launch_args(") + coop + ", " + s.substr(name_a, name_b - name_a) + ",";
        pos = p = i + 1;
    }
    out.append(s, pos, npos);
    return out;
}

// Start of the launched kernel's name before `<<<` at `end`: back over spaces, template
// arguments (counting < and >), and [A-Za-z0-9_:].
size_t kernel_start(const std::string& s, size_t end) {
    size_t i = end;
    while (i > 0 && is_space(s[i - 1])) --i;
    if (i > 0 && s[i - 1] == '>') {
        long depth = 0;
        while (true) {
            if (i == 0) fail(s, end, "unbalanced template arguments before '<<<'");
            if (end - i > kMaxTemplateScan) fail(s, end, "template arguments before '<<<' longer than 4096 characters");
            --i;
            if (s[i] == '>') {
                ++depth;
            } else if (s[i] == '<') {
                if (--depth == 0) break;
            }
        }
    }
    while (i > 0 && (is_alnum(s[i - 1]) || s[i - 1] == '_' || s[i - 1] == ':')) --i;
    return i;
}

// The `)` closing the `(` at i; string literals are skipped (character literals and comments are
// not, as in the original).
size_t matching_paren(const std::string& s, size_t i) {
    const size_t start = i, n = s.size();
    long depth = 0;
    while (i < n) {
        const char c = s[i];
        if (c == '"') {
            ++i;
            while (i < n && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
            if (i >= n) fail(s, start, "unterminated string literal in a launch's arguments");
        } else if (c == '(') {
            ++depth;
        } else if (c == ')') {
            if (--depth == 0) return i;
        }
        ++i;
    }
    fail(s, start, "unbalanced parentheses in a launch's arguments");
}

std::string rewrite_launches(const std::string& src) {
    const size_t n = src.size();
    std::vector<char> mask;
    std::string out;
    size_t pos = 0;
    while (true) {
        const size_t i = src.find("<<<", pos);
        if (i == npos) break;
        if (mask.empty()) mask = code_mask(src);
        if (!mask[i]) {
            out.append(src, pos, i + 3 - pos);
            pos = i + 3;
            continue;
        }
        const size_t ks = kernel_start(src, i);
        const size_t j = src.find(">>>", i);
        if (j == npos) fail(src, i, "'<<<' without '>>>'");
        const std::string cfg = src.substr(i + 3, j - i - 3);
        size_t k = j + 3;
        while (k < n && is_space(src[k])) ++k;
        if (k >= n || src[k] != '(') fail(src, i, "a launch without an argument list after '>>>'");
        const size_t close = matching_paren(src, k);
        const std::string kernel = strip(src.substr(ks, i - ks));
        if (ks > pos) out.append(src, pos, ks - pos);
        out += "cuemu::Launch(" + cfg + ").go([&]{ " + kernel + src.substr(k, close + 1 - k) + "; })";
        pos = close + 1;
    }
    out.append(src, pos, npos);
    return out;
}

}  // namespace

std::string transform_program(std::string_view cuda_source) {
    std::string s = blank_metadata(normalise_newlines(cuda_source));
    s = poison_static_shared(s);
    s = rewrite_extern_shared(s);
    s = rewrite_launch_call(s, "cudaLaunchKernel", "false");
    s = rewrite_launch_call(s, "cudaLaunchCooperativeKernel", "true");
    return rewrite_launches(s);
}

}  // namespace cuset::emu
