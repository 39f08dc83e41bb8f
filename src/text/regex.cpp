// Oniguruma (Ruby syntax) patterns translated to PCRE2 (UTF, UCP, JIT), and find_all with
// Oniguruma's find_iter semantics.
#include "regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cctype>
#include <cstring>

#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "unicode.h"

namespace cuset {

namespace detail {

// Oniguruma (Ruby syntax, as Hugging Face tokenizers compiles it) to PCRE2.
static std::string onig_to_pcre2(const std::string& p) {
    std::string out;
    out.reserve(p.size() + 16);
    bool in_class = false;
    for (size_t i = 0; i < p.size(); ++i) {
        char c = p[i];
        if (c == '\\' && i + 1 < p.size()) {
            char n = p[i + 1];
            if (n == 's') out += in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
            else if (n == 'S' && !in_class) out += "[^\\s\\x{85}]";
            else if (n == 'h') out += in_class ? "0-9a-fA-F" : "[0-9a-fA-F]";
            else if (n == 'H' && !in_class) out += "[^0-9a-fA-F]";
            else { out += c; out += n; }
            ++i;
            continue;
        }
        if (in_class) {
            if (c == ']') in_class = false;
            else if (c == '[') {
                // POSIX class [:alpha:] or nested class: copy verbatim up to the matching ':]'.
                if (i + 1 < p.size() && p[i + 1] == ':') {
                    size_t e = p.find(":]", i + 2);
                    if (e != std::string::npos) {
                        out.append(p, i, e + 2 - i);
                        i = e + 1;
                        continue;
                    }
                }
            }
            out += c;
            continue;
        }
        if (c == '[') {
            in_class = true;
            out += c;
            // A ']' right after '[' or '[^' is a literal.
            if (i + 1 < p.size() && p[i + 1] == '^') { out += '^'; ++i; }
            if (i + 1 < p.size() && p[i + 1] == ']') { out += "\\]"; ++i; }
            continue;
        }
        if (c == '(' && i + 2 < p.size() && p[i + 1] == '?') {
            // Inline options (?imx-imx) / (?imx-imx:...): Ruby's m is PCRE2's s.
            size_t j = i + 2;
            std::string flags;
            while (j < p.size() && (std::isalpha(static_cast<unsigned char>(p[j])) || p[j] == '-')) flags += p[j++];
            if (!flags.empty() && j < p.size() && (p[j] == ')' || p[j] == ':') &&
                flags.find_first_not_of("imx-") == std::string::npos) {
                for (char& f : flags)
                    if (f == 'm') f = 's';
                out += "(?" + flags;
                i = j - 1;
                continue;
            }
        }
        out += c;
    }
    return out;
}

static std::string regex_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (std::strchr("\\^$.|?*+()[]{}-#&~ \t\n", c) && c != '\0') out += '\\';
        out += c;
    }
    return out;
}

namespace {
// One match-data block per thread, large enough for group 0 of any pattern.
struct ThreadMatchData {
    pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
    ~ThreadMatchData() { pcre2_match_data_free(md); }
};
thread_local ThreadMatchData t_md;
}  // namespace

Regex::Regex(const std::string& pattern, bool literal) : pattern_(pattern) {
    std::string pcre = literal ? regex_escape(pattern) : onig_to_pcre2(pattern);
    pcre2_compile_context* cc = pcre2_compile_context_create(nullptr);
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    pcre2_set_bsr(cc, PCRE2_BSR_UNICODE);
    int err = 0;
    PCRE2_SIZE err_off = 0;
    uint32_t opts = PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pcre.data()), pcre.size(), opts, &err,
                                     &err_off, cc);
    pcre2_compile_context_free(cc);
    if (!code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof(msg));
        throw InputError(strprintf("cannot compile the regex /%s/ at offset %zu: %s", pattern.c_str(),
                                   static_cast<size_t>(err_off), reinterpret_cast<const char*>(msg)));
    }
    jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
    code_ = code;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

void Regex::find_all(const char* s, size_t n, std::vector<std::pair<uint32_t, uint32_t>>* out) const {
    out->clear();
    auto* code = static_cast<pcre2_code*>(code_);
    pcre2_match_data* md = t_md.md;
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(s);
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    size_t pos = 0;
    bool has_last = false;
    size_t last_end = 0;
    while (pos <= n) {
        int rc = jit_ ? pcre2_jit_match(code, subject, n, pos, PCRE2_NO_UTF_CHECK, md, nullptr)
                      : pcre2_match(code, subject, n, pos, PCRE2_NO_UTF_CHECK, md, nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof(msg));
            throw RuntimeFailure(strprintf("regex /%s/ failed: %s", pattern_.c_str(), reinterpret_cast<const char*>(msg)));
        }
        size_t b = ov[0], e = ov[1];
        if (b == e && has_last && last_end == e) {
            if (pos >= n) break;
            pos += static_cast<size_t>(utf8_len(static_cast<unsigned char>(s[pos])));
            continue;
        }
        out->push_back({static_cast<uint32_t>(b), static_cast<uint32_t>(e)});
        has_last = true;
        last_end = e;
        pos = e;
    }
}

}  // namespace detail

}  // namespace cuset
