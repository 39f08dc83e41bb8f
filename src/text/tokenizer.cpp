// Tokenizer loading (folder or file, bos/eos/pad from tokenizer_config.json), the SentencePiece
// backend, and the text helpers the tokenizers share: UTF-8, Unicode properties through
// utf8proc, NFC with Hugging Face's alignment bookkeeping, and PCRE2 regexes with Oniguruma
// semantics. The tokenizer.json pipeline itself is in tokenizer_hf.cpp.
#include "cuset/text/tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <sentencepiece_processor.h>
#include <utf8proc.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "tokenizer_internal.h"

namespace cuset {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------- UTF-8

namespace detail {
static int utf8_step(const unsigned char* p, size_t n);
}

int64_t utf8_first_invalid(std::string_view text) {
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    size_t i = 0;
    while (i < n) {
        // ASCII fast path, 8 bytes at a time.
        while (i + 8 <= n) {
            uint64_t w;
            std::memcpy(&w, p + i, 8);
            if (w & 0x8080808080808080ull) break;
            i += 8;
        }
        if (i >= n) break;
        if (p[i] < 0x80) { ++i; continue; }
        int step = detail::utf8_step(p + i, n - i);
        if (step < 0) return static_cast<int64_t>(i);
        i += static_cast<size_t>(step);
    }
    return -1;
}

std::string tokenizer_dir(const std::string& path) {
    fs::path p(path);
    if (fs::is_directory(p)) return p.string();
    return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

namespace detail {

void utf8_append(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

// Length of the well-formed UTF-8 sequence at p[0, n) (> 0), or -(length of the maximal
// subpart of an ill-formed sequence to replace by one U+FFFD) (< 0), per Unicode Table 3-7.
static int utf8_step(const unsigned char* p, size_t n) {
    unsigned char c = p[0];
    if (c < 0x80) return 1;
    int need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) need = 1;
    else if (c == 0xE0) { need = 2; lo = 0xA0; }
    else if (c >= 0xE1 && c <= 0xEC) need = 2;
    else if (c == 0xED) { need = 2; hi = 0x9F; }
    else if (c >= 0xEE && c <= 0xEF) need = 2;
    else if (c == 0xF0) { need = 3; lo = 0x90; }
    else if (c >= 0xF1 && c <= 0xF3) need = 3;
    else if (c == 0xF4) { need = 3; hi = 0x8F; }
    else return -1;
    if (n < 2 || p[1] < lo || p[1] > hi) return -1;
    for (int k = 2; k <= need; ++k)
        if (static_cast<size_t>(k) >= n || p[k] < 0x80 || p[k] > 0xBF) return -k;
    return need + 1;
}

std::string utf8_lossy(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    size_t i = 0;
    const size_t n = bytes.size();
    while (i < n) {
        int step = utf8_step(p + i, n - i);
        if (step > 0) {
            out.append(bytes.data() + i, static_cast<size_t>(step));
            i += static_cast<size_t>(step);
        } else {
            out.append("\xEF\xBF\xBD");
            i += static_cast<size_t>(-step);
        }
    }
    return out;
}

// ---------------------------------------------------------------- Unicode properties

bool uni_is_whitespace(uint32_t c) {
    if (c < 0x80) return c == 0x20 || (c >= 0x09 && c <= 0x0D);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool uni_is_numeric(uint32_t c) {
    if (c < 0x80) return c >= '0' && c <= '9';
    utf8proc_category_t k = utf8proc_category(static_cast<utf8proc_int32_t>(c));
    return k == UTF8PROC_CATEGORY_ND || k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_NO;
}

bool uni_is_word(uint32_t c) {
    if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (c == 0x200C || c == 0x200D) return true;
    if ((c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
        (c >= 0x1F170 && c <= 0x1F189))
        return true;  // Other_Alphabetic symbols (circled / squared letters)
    switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
        case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
        case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN:
        case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_ND:
        case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_PC:
            return true;
        default:
            return false;
    }
}

// ---------------------------------------------------------------- NFC with alignments

static int ccc_of(uint32_t c) {
    if (c < 0x300) return 0;
    return utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class;
}

// Primary composite of (a, b), or 0. utf8proc's composition step on an already decomposed pair.
static uint32_t compose_pair(uint32_t a, uint32_t b) {
    utf8proc_int32_t buf[2] = {static_cast<utf8proc_int32_t>(a), static_cast<utf8proc_int32_t>(b)};
    utf8proc_ssize_t n = utf8proc_normalize_utf32(buf, 2, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_STABLE));
    return n == 1 ? static_cast<uint32_t>(buf[0]) : 0u;
}

bool nfc_changes(std::string_view s, std::vector<std::pair<uint32_t, int>>* out) {
    // Below U+0300 nothing decomposes or combines.
    bool simple = true;
    for (size_t i = 0; i < s.size() && simple; ++i)
        if (static_cast<unsigned char>(s[i]) >= 0xCC) simple = false;  // lead byte of >= U+0300
    if (simple) return false;

    // 1. Canonical decomposition, each element tagged 0 (first of its input char) or 1
    //    (inserted), then canonical ordering of each starter + marks run (stable by ccc).
    struct D { uint32_t ch; int change; int ccc; };
    std::vector<D> dec;
    dec.reserve(s.size() + 8);
    size_t ready = 0;  // dec[ready..] is the pending block
    auto sort_pending = [&]() {
        std::stable_sort(dec.begin() + static_cast<std::ptrdiff_t>(ready), dec.end(),
                         [](const D& x, const D& y) { return x.ccc < y.ccc; });
        ready = dec.size();
    };
    auto push_back = [&](uint32_t ch, bool first) {
        int cls = ccc_of(ch);
        if (cls == 0) sort_pending();
        dec.push_back({ch, first ? 0 : 1, cls});
    };
    for (size_t i = 0; i < s.size();) {
        int len;
        uint32_t c = utf8_decode(s.data(), i, &len);
        i += static_cast<size_t>(len);
        if (c < 0xC0) {
            push_back(c, true);
            continue;
        }
        utf8proc_int32_t buf[8];
        int bc = 0;
        utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), buf, 8,
                                                     UTF8PROC_DECOMPOSE, &bc);
        if (n <= 0 || n > 8) {
            push_back(c, true);
            continue;
        }
        for (utf8proc_ssize_t k = 0; k < n; ++k) push_back(static_cast<uint32_t>(buf[k]), k == 0);
    }
    sort_pending();

    // 2. Recomposition, following the alignment crate's state machine (composee + blocked marks).
    std::vector<std::pair<uint32_t, int>>& res = *out;
    res.clear();
    res.reserve(dec.size());
    bool has_composee = false;
    std::pair<uint32_t, int> composee{0, 0};
    int last_ccc = -1;  // -1 = none
    std::vector<std::pair<uint32_t, int>> buffer;
    for (const D& d : dec) {
        int cls = d.ccc;
        if (!has_composee) {
            if (cls != 0) {
                res.push_back({d.ch, d.change});
                continue;
            }
            composee = {d.ch, d.change};
            has_composee = true;
            continue;
        }
        if (last_ccc < 0) {
            if (uint32_t r = compose_pair(composee.first, d.ch)) {
                composee = {r, composee.second + d.change - 1};
                continue;
            }
            if (cls == 0) {
                res.push_back(composee);
                composee = {d.ch, d.change};
                continue;
            }
            buffer.push_back({d.ch, d.change});
            last_ccc = cls;
        } else {
            if (last_ccc >= cls) {
                if (cls == 0) {
                    res.push_back(composee);
                    res.insert(res.end(), buffer.begin(), buffer.end());
                    buffer.clear();
                    composee = {d.ch, d.change};
                    last_ccc = -1;
                    continue;
                }
                buffer.push_back({d.ch, d.change});
                last_ccc = cls;
                continue;
            }
            if (uint32_t r = compose_pair(composee.first, d.ch)) {
                composee = {r, composee.second + d.change - 1};
                continue;
            }
            buffer.push_back({d.ch, d.change});
            last_ccc = cls;
        }
    }
    if (has_composee) res.push_back(composee);
    res.insert(res.end(), buffer.begin(), buffer.end());

    // Unchanged? (same chars, every change 0)
    size_t k = 0;
    for (size_t i = 0; i < s.size(); ++k) {
        int len;
        uint32_t c = utf8_decode(s.data(), i, &len);
        i += static_cast<size_t>(len);
        if (k >= res.size() || res[k].first != c || res[k].second != 0) return true;
    }
    return k != res.size();
}

std::string nfc_string(std::string_view s) {
    std::vector<std::pair<uint32_t, int>> ch;
    if (!nfc_changes(s, &ch)) return std::string(s);
    std::string out;
    for (auto& c : ch) utf8_append(out, c.first);
    return out;
}

// ---------------------------------------------------------------- regex

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

// ---------------------------------------------------------------- SentencePiece backend

namespace {

class SentencePieceTokenizer final : public Tokenizer {
public:
    SentencePieceTokenizer(const std::string& path, const json& config) {
        auto st = sp_.Load(path);
        if (!st.ok()) throw InputError(path + ": cannot load the SentencePiece model: " + st.ToString());
        add_bos_ = config.value("add_bos_token", true) && sp_.bos_id() >= 0;
        add_eos_ = config.value("add_eos_token", false) && sp_.eos_id() >= 0;
        source_ = path;
        backend_ = "sentencepiece";
        bos_id_ = sp_.bos_id();
        eos_id_ = sp_.eos_id();
        pad_id_ = sp_.pad_id();
    }

    Encoding encode(std::string_view text, bool add_special_tokens) const override {
        if (int64_t bad = utf8_first_invalid(text); bad >= 0)
            throw InputError(strprintf("invalid UTF-8 at byte %lld of the text to tokenize", static_cast<long long>(bad)));
        Encoding e;
        if (add_special_tokens && add_bos_) {
            e.ids.push_back(sp_.bos_id());
            e.offsets.push_back({0, 0});
        }
        sentencepiece::ImmutableSentencePieceText spt =
            sp_.EncodeAsImmutableProto(absl::string_view(text.data(), text.size()));
        for (const auto& p : spt.pieces()) {
            e.ids.push_back(static_cast<int32_t>(p.id()));
            e.offsets.push_back({p.begin(), p.end()});
        }
        if (add_special_tokens && add_eos_) {
            e.ids.push_back(sp_.eos_id());
            e.offsets.push_back({0, 0});
        }
        return e;
    }

    std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const override {
        std::vector<int> v;
        v.reserve(ids.size());
        const int n = sp_.GetPieceSize();
        for (int32_t id : ids) {
            if (id < 0 || id >= n) continue;
            if (skip_special_tokens && is_special(id)) continue;
            v.push_back(id);
        }
        std::string out;
        sp_.Decode(v, &out);
        return out;
    }

    int32_t token_to_id(std::string_view token) const override {
        int id = sp_.PieceToId(absl::string_view(token.data(), token.size()));
        // PieceToId answers unk for unknown pieces; only the unk piece itself maps to unk.
        if (id == sp_.unk_id() && sp_.IdToPiece(id) != token) return -1;
        return id;
    }
    std::string id_to_token(int32_t id) const override {
        if (id < 0 || id >= sp_.GetPieceSize()) return "";
        return sp_.IdToPiece(id);
    }
    int64_t vocab_size() const override { return sp_.GetPieceSize(); }
    bool is_special(int32_t id) const override {
        if (id < 0 || id >= sp_.GetPieceSize()) return false;
        return sp_.IsControl(id) || sp_.IsUnknown(id);
    }

private:
    sentencepiece::SentencePieceProcessor sp_;
    bool add_bos_ = true;
    bool add_eos_ = false;
};

json read_json_file(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    if (!f) throw InputError(p.string() + ": cannot read");
    std::stringstream ss;
    ss << f.rdbuf();
    try {
        return json::parse(ss.str());
    } catch (const json::exception& e) {
        throw InputError(p.string() + ": invalid JSON: " + e.what());
    }
}

// A special token entry of tokenizer_config.json / special_tokens_map.json: "str" or {"content": str}.
std::string special_token_text(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
    return "";
}

}  // namespace

namespace detail {
std::unique_ptr<Tokenizer> make_spm_tokenizer(const std::string& model_path, const json& config) {
    return std::make_unique<SentencePieceTokenizer>(model_path, config);
}
}  // namespace detail

std::unique_ptr<Tokenizer> tokenizer_load(const std::string& path) {
    fs::path p(path);
    if (path.empty()) throw InputError("no tokenizer path given");
    if (!fs::exists(p)) throw InputError(path + ": no such tokenizer file or folder");
    fs::path dir = fs::is_directory(p) ? p : (p.has_parent_path() ? p.parent_path() : fs::path("."));
    fs::path file;
    if (fs::is_directory(p)) {
        if (fs::exists(p / "tokenizer.json")) file = p / "tokenizer.json";
        else if (fs::exists(p / "tokenizer.model")) file = p / "tokenizer.model";
        else throw InputError(path + ": folder has neither tokenizer.json nor tokenizer.model");
    } else {
        file = p;
    }

    json config = json::object();
    if (fs::exists(dir / "tokenizer_config.json")) config = read_json_file(dir / "tokenizer_config.json");
    json special_map = json::object();
    if (fs::exists(dir / "special_tokens_map.json")) special_map = read_json_file(dir / "special_tokens_map.json");
    if (!config.is_object()) config = json::object();
    if (!special_map.is_object()) special_map = json::object();

    std::unique_ptr<Tokenizer> tok;
    std::string name = file.filename().string();
    if (file.extension() == ".json" && name != "tokenizer_config.json") {
        tok = detail::make_hf_tokenizer(file.string());
    } else if (file.extension() == ".model") {
        tok = detail::make_spm_tokenizer(file.string(), config);
    } else {
        throw InputError(path + ": not a tokenizer file (expected tokenizer.json or tokenizer.model)");
    }

    // bos/eos/pad: tokenizer_config.json, then special_tokens_map.json; absent = backend default.
    auto resolve = [&](const char* key, int32_t* slot) {
        std::string text;
        if (config.contains(key)) text = special_token_text(config[key]);
        if (text.empty() && special_map.contains(key)) text = special_token_text(special_map[key]);
        if (text.empty()) return;
        int32_t id = tok->token_to_id(text);
        if (id < 0) {
            log_warn("%s: %s '%s' is not in the vocabulary; ignored", (dir / "tokenizer_config.json").string().c_str(),
                     key, text.c_str());
            return;
        }
        *slot = id;
    };
    resolve("bos_token", &tok->bos_id_);
    resolve("eos_token", &tok->eos_id_);
    resolve("pad_token", &tok->pad_id_);
    return tok;
}

}  // namespace cuset
