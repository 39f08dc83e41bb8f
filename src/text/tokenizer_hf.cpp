// The Hugging Face tokenizer.json backend: added tokens, normalizers (NFC, Sequence), pre-tokenizers
// (Split, ByteLevel, Digits, Sequence), the BPE model (byte-level, byte_fallback, ignore_merges),
// post-processors (ByteLevel, TemplateProcessing, Sequence) and decoders, reproducing the
// `tokenizers` library's ids and byte offsets. Anything else in a tokenizer.json is an InputError
// that names the component. Training, dropout, truncation and padding are not done here.
#include <algorithm>
#include <limits>
#include <array>
#include <atomic>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "regex.h"
#include "tokenizer_hf.h"
#include "unicode.h"

namespace cuset::detail {

namespace {

using nlohmann::json;
using Span = std::pair<uint32_t, uint32_t>;

// ---------------------------------------------------------------- byte-level alphabet
// GPT-2's reversible map from bytes to printable code points.
struct ByteAlphabet {
    uint32_t cp[256];
    std::string str[256];  // UTF-8 of cp[b]
    int16_t byte_of[324];  // code point -> byte, -1 when not in the alphabet
    ByteAlphabet() {
        std::fill(std::begin(byte_of), std::end(byte_of), int16_t(-1));
        bool direct[256] = {};
        for (int b = '!'; b <= '~'; ++b) direct[b] = true;
        for (int b = 0xA1; b <= 0xAC; ++b) direct[b] = true;
        for (int b = 0xAE; b <= 0xFF; ++b) direct[b] = true;
        uint32_t n = 0;
        for (int b = 0; b < 256; ++b) cp[b] = direct[b] ? uint32_t(b) : 256 + n++;
        for (int b = 0; b < 256; ++b) {
            utf8_append(str[b], cp[b]);
            byte_of[cp[b]] = int16_t(b);
        }
    }
    int byte(uint32_t c) const { return c < 324 ? byte_of[c] : -1; }
};
const ByteAlphabet& alphabet() {
    static const ByteAlphabet a;
    return a;
}

// Raw bytes a byte-level token string stands for; false when a char is outside the alphabet.
bool bytelevel_to_raw(const std::string& token, std::string* raw) {
    raw->clear();
    for (size_t i = 0; i < token.size();) {
        int len;
        uint32_t c = utf8_decode(token.data(), i, &len);
        int b = alphabet().byte(c);
        if (b < 0) return false;
        raw->push_back(static_cast<char>(b));
        i += static_cast<size_t>(len);
    }
    return true;
}

// ---------------------------------------------------------------- normalized segments
// A normalized string with, for every byte, the span of the original text it came from
// (Hugging Face's NormalizedString alignments, kept in absolute original offsets).
struct Seg {
    std::string own;           // text when it differs from the input
    const char* data = nullptr;
    uint32_t size = 0;
    bool identity = true;      // text == input[base, base + size): spans are the input chars
    uint32_t base = 0;
    uint32_t shift = 0;        // original offset of the segment start (HF original_shift)
    std::vector<Span> al;      // [size] when !identity

    Span orig(uint32_t i) const {
        if (!identity) return al[i];
        uint32_t j = i;
        while (j > 0 && (static_cast<unsigned char>(data[j]) & 0xC0) == 0x80) --j;
        return {base + j, base + j + static_cast<uint32_t>(utf8_len(static_cast<unsigned char>(data[j])))};
    }
    // HF's expand_alignments over bytes [a, b): first start, last end.
    Span range(uint32_t a, uint32_t b) const { return {orig(a).first, orig(b - 1).second}; }
};

// A pre-tokenized piece: bytes [a, b) of a segment, or an added token already matched.
struct Piece {
    uint32_t seg = 0;
    uint32_t a = 0, b = 0;
    int32_t added = -1;        // index into the added tokens, or -1
    bool byte_level = false;   // the bytes stand for their byte-level chars (ByteLevel applied)
    bool prefix = false;       // a virtual ' ' before a (ByteLevel add_prefix_space)
};

// One encode call's state: the segments (input, NFC results, materialized pieces; a deque so
// their addresses stay put) and the current pieces.
struct Work {
    std::deque<Seg> segs;
    std::vector<Piece> pieces;
    std::vector<Span> matches;
};

// ---------------------------------------------------------------- flat hash map for merges
struct MergeMap {
    struct Slot { uint64_t key = ~0ull; uint32_t rank = 0; int32_t id = -1; };
    std::vector<Slot> slots;
    uint64_t mask = 0;
    static uint64_t hash(uint64_t k) {
        k ^= k >> 33;
        k *= 0xff51afd7ed558ccdull;
        k ^= k >> 33;
        return k;
    }
    void reserve(size_t n) {
        size_t cap = 16;
        while (cap < n * 2) cap <<= 1;
        slots.assign(cap, Slot{});
        mask = cap - 1;
    }
    void put(uint64_t key, uint32_t rank, int32_t id) {
        for (uint64_t i = hash(key) & mask;; i = (i + 1) & mask) {
            if (slots[i].key == ~0ull || slots[i].key == key) {
                slots[i] = {key, rank, id};
                return;
            }
        }
    }
    const Slot* get(uint64_t key) const {
        for (uint64_t i = hash(key) & mask;; i = (i + 1) & mask) {
            if (slots[i].key == key) return &slots[i];
            if (slots[i].key == ~0ull) return nullptr;
        }
    }
    static uint64_t key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
};

// ---------------------------------------------------------------- pipeline components

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

struct PreTok {
    enum Kind { kSplit, kByteLevel, kDigits } kind;
    std::shared_ptr<Regex> regex;  // kSplit
    Behavior behavior = Behavior::kIsolated;
    bool invert = false;
    bool add_prefix_space = false;  // kByteLevel
    bool use_regex = true;
    bool individual_digits = false;  // kDigits
};

struct PostProc {
    enum Kind { kByteLevel, kTemplate } kind;
    bool trim_offsets = false;
    bool add_prefix_space = false;
    // TemplateProcessing (single sequence): ids before and after $A.
    std::vector<int32_t> before, after;
    std::vector<std::string> before_tok, after_tok;
};

struct DecoderStep {
    enum Kind { kByteLevel, kByteFallback, kFuse, kStrip, kReplace } kind;
    uint32_t content = 0;
    int start = 0, stop = 0;
    std::string pattern, replacement;
};

struct AddedToken {
    std::string content;
    std::string pattern;  // what is matched: content, or its normalized form when normalized
    int32_t id = -1;
    bool single_word = false, lstrip = false, rstrip = false, normalized = true, special = false;
};

// Byte trie over added-token patterns; leftmost-longest matching as daachorse does.
struct AddedTrie {
    struct Node {
        std::vector<std::pair<uint8_t, int32_t>> kids;  // sorted by byte
        int32_t term = -1;                              // added token index
    };
    std::vector<Node> nodes{Node{}};
    bool first[256] = {};
    bool empty() const { return nodes.size() == 1; }
    void add(const std::string& s, int32_t tok) {
        if (s.empty()) return;
        int32_t n = 0;
        for (unsigned char c : s) {
            auto& kids = nodes[n].kids;
            auto it = std::lower_bound(kids.begin(), kids.end(), std::make_pair(c, int32_t(-1)),
                                       [](const auto& x, const auto& y) { return x.first < y.first; });
            if (it != kids.end() && it->first == c) {
                n = it->second;
            } else {
                int32_t id = static_cast<int32_t>(nodes.size());
                kids.insert(it, {c, id});
                nodes.push_back(Node{});
                n = id;
            }
        }
        if (nodes[n].term < 0) nodes[n].term = tok;
        first[static_cast<unsigned char>(s[0])] = true;
    }
    // Longest pattern starting at s[i]: its length (0 = none) and token.
    uint32_t longest(const char* s, uint32_t n, uint32_t i, int32_t* tok) const {
        int32_t node = 0;
        uint32_t best = 0;
        for (uint32_t j = i; j < n; ++j) {
            const auto& kids = nodes[node].kids;
            unsigned char c = static_cast<unsigned char>(s[j]);
            auto it = std::lower_bound(kids.begin(), kids.end(), std::make_pair(c, int32_t(-1)),
                                       [](const auto& x, const auto& y) { return x.first < y.first; });
            if (it == kids.end() || it->first != c) break;
            node = it->second;
            if (nodes[node].term >= 0) {
                best = j + 1 - i;
                *tok = nodes[node].term;
            }
        }
        return best;
    }
};

// ---------------------------------------------------------------- per-thread scratch
struct BpeSym {
    int32_t id;
    int32_t prev, next;
    uint32_t len;
};
struct HeapItem {
    uint32_t rank;
    uint32_t pos;
    int32_t new_id;
};
struct CachedWord {
    std::vector<std::pair<int32_t, uint32_t>> toks;  // (id, byte length)
};
struct Scratch {
    std::unordered_map<std::string, CachedWord> cache;
    std::string key;
    std::vector<BpeSym> syms;
    std::vector<HeapItem> heap;
    std::vector<std::pair<int32_t, uint32_t>> out;
    std::vector<std::pair<uint32_t, uint32_t>> lens;  // (symbol byte offset, length) for char path
};
constexpr size_t kCacheCapacity = 10000;
constexpr size_t kCacheMaxWord = 256;  // HF's MAX_LENGTH

std::atomic<uint64_t> g_instance{1};
thread_local std::unordered_map<uint64_t, std::unique_ptr<Scratch>> t_scratch;

// ---------------------------------------------------------------- the tokenizer

class HfTokenizer final : public Tokenizer {
public:
    explicit HfTokenizer(const std::string& path);
    ~HfTokenizer() override { t_scratch.erase(instance_); }

    Encoding encode(std::string_view text, bool add_special_tokens) const override;
    std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const override;
    int32_t token_to_id(std::string_view token) const override;
    std::string id_to_token(int32_t id) const override;
    int64_t vocab_size() const override { return vocab_size_; }
    bool is_special(int32_t id) const override {
        auto it = added_by_id_.find(id);
        return it != added_by_id_.end() && added_[it->second].special;
    }

private:
    void load_model(const json& m);
    void load_normalizer(const json& n);
    void load_pre_tokenizer(const json& p);
    void load_post_processor(const json& p);
    void load_decoder(const json& d);

    Scratch& scratch() const;
    void split_added(Work& w, uint32_t seg, uint32_t a, uint32_t b, const AddedTrie& trie,
                     std::vector<Piece>* out) const;
    void normalize_piece(Work& w, const Piece& p, std::vector<Piece>* out) const;
    void apply_pre_tokenizer(Work& w, const PreTok& pt) const;
    void materialize(Work& w, Piece& p) const;
    void split_piece(const Piece& p, const std::vector<Span>& matches, Behavior behavior, bool invert,
                     std::vector<Piece>* out) const;
    void bpe_word(Scratch& s, const Piece& p, const Work& w) const;
    void bpe_merge(Scratch& s) const;
    int32_t symbol_id(std::string_view ch, bool first, bool last) const;

    uint64_t instance_ = g_instance.fetch_add(1);
    std::string path_;

    // model
    std::unordered_map<std::string, int32_t> vocab_;
    std::unordered_map<int32_t, std::string> vocab_r_;
    std::unordered_map<std::string, int32_t> raw_vocab_;  // byte-level tokens by the bytes they stand for
    std::array<int32_t, 256> byte_ids_{};                 // byte-level single-byte tokens
    MergeMap merges_;
    bool byte_fallback_ = false;
    bool ignore_merges_ = false;
    bool fuse_unk_ = false;
    int32_t unk_id_ = -1;
    std::string prefix_, suffix_;  // continuing_subword_prefix, end_of_word_suffix
    std::array<int32_t, 256> fallback_ids_{};  // <0xXX>

    // pipeline
    bool nfc_ = false;
    std::vector<PreTok> pre_;
    bool has_bytelevel_pre_ = false;
    std::vector<PostProc> post_;
    std::vector<DecoderStep> dec_;
    bool has_decoder_ = false;

    // added tokens
    std::vector<AddedToken> added_;
    std::unordered_map<int32_t, size_t> added_by_id_;
    std::unordered_map<std::string, int32_t> added_by_content_;
    AddedTrie trie_raw_, trie_norm_;
    int64_t vocab_size_ = 0;
};

[[noreturn]] void unsupported(const std::string& path, const std::string& what) {
    throw InputError(path + ": unsupported " + what + " (cuset reads BPE tokenizers with NFC/Sequence normalizers, "
                     "Split/ByteLevel/Digits pre-tokenizers, ByteLevel/TemplateProcessing post-processors)");
}

// A token id of tokenizer.json: an integer in [0, 2^31 - 1).
int32_t checked_id_in(const json& v, const std::string& path, const std::string& what) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= std::numeric_limits<int32_t>::max())
        throw InputError(path + ": " + what + " is " + v.dump().substr(0, 40) + "; token ids are integers from 0 to 2^31 - 2");
    return static_cast<int32_t>(v.get<int64_t>());
}

std::string type_of(const json& j) { return j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : "?"; }

HfTokenizer::HfTokenizer(const std::string& path) : path_(path) {
    const json j = json_read_file(path, "tokenizer");
    if (!j.is_object() || !j.contains("model")) throw InputError(path + ": not a tokenizer.json (no \"model\")");
    source_ = path;
    backend_ = "tokenizer.json";
    try {
        load_pre_tokenizer(j.value("pre_tokenizer", json()));
        load_model(j["model"]);
        load_normalizer(j.value("normalizer", json()));
        load_post_processor(j.value("post_processor", json()));
        load_decoder(j.value("decoder", json()));
        if (!j.value("truncation", json()).is_null() || !j.value("padding", json()).is_null())
            log_warn("%s: truncation/padding settings are ignored (cuset truncates its own rows)", path.c_str());

        // Added tokens: matched before the normalizer (normalized=false) or after it (true).
        for (const json& t : j.value("added_tokens", json::array())) {
            AddedToken a;
            a.id = checked_id_in(t.at("id"), path_, "added token id");
            a.content = t.at("content").get<std::string>();
            a.single_word = t.value("single_word", false);
            a.lstrip = t.value("lstrip", false);
            a.rstrip = t.value("rstrip", false);
            a.normalized = t.value("normalized", true);
            a.special = t.value("special", false);
            if (int64_t bad = utf8_first_invalid(a.content); bad >= 0)
                throw InputError(path + ": added token " + std::to_string(a.id) + " is not valid UTF-8");
            a.pattern = (a.normalized && nfc_) ? nfc_string(a.content) : a.content;
            if (a.content.empty()) continue;
            auto old = added_by_id_.find(a.id);
            size_t idx;
            if (old != added_by_id_.end()) {
                idx = old->second;
                added_[idx] = a;
            } else {
                idx = added_.size();
                added_.push_back(a);
                added_by_id_[a.id] = idx;
            }
            added_by_content_[a.content] = a.id;
        }
        for (size_t i = 0; i < added_.size(); ++i)
            (added_[i].normalized ? trie_norm_ : trie_raw_).add(added_[i].pattern, static_cast<int32_t>(i));
    } catch (const json::exception& e) {
        throw InputError(path + ": malformed tokenizer.json: " + quote_bounded(e.what()));
    }

    std::unordered_set<std::string> all;
    for (const auto& kv : vocab_) all.insert(kv.first);
    for (const auto& kv : added_by_content_) all.insert(kv.first);
    if (all.empty()) throw InputError(path + ": the vocabulary is empty");
    // Ids index the embedding: the size is one past the largest id, so that an id with a gap
    // before it (or an absurd one) is caught by the embedding-size check, not by LibTorch.
    int64_t max_id = -1;
    for (const auto& kv : vocab_) max_id = std::max<int64_t>(max_id, kv.second);
    for (const auto& kv : added_by_content_) max_id = std::max<int64_t>(max_id, kv.second);
    vocab_size_ = std::max<int64_t>(static_cast<int64_t>(all.size()), max_id + 1);

    // A TemplateProcessing prefix names the BOS when tokenizer_config.json does not.
    for (const PostProc& p : post_)
        if (p.kind == PostProc::kTemplate && !p.before.empty()) bos_id_ = p.before.front();
}

void HfTokenizer::load_model(const json& m) {
    std::string type = m.value("type", std::string("BPE"));
    if (type != "BPE") unsupported(path_, "model '" + type + "'");
    if (m.contains("dropout") && !m["dropout"].is_null() && m["dropout"].get<double>() != 0.0)
        unsupported(path_, "BPE dropout");
    byte_fallback_ = m.value("byte_fallback", false);
    ignore_merges_ = m.value("ignore_merges", false);
    fuse_unk_ = m.value("fuse_unk", false);
    if (m.contains("continuing_subword_prefix") && m["continuing_subword_prefix"].is_string())
        prefix_ = m["continuing_subword_prefix"].get<std::string>();
    if (m.contains("end_of_word_suffix") && m["end_of_word_suffix"].is_string())
        suffix_ = m["end_of_word_suffix"].get<std::string>();

    const json& vocab = m.at("vocab");
    vocab_.reserve(vocab.size() * 2);
    vocab_r_.reserve(vocab.size() * 2);
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
        int32_t id = checked_id_in(it.value(), path_, "vocabulary id of '" + it.key().substr(0, 60) + "'");
        vocab_[it.key()] = id;
        vocab_r_[id] = it.key();
    }
    if (m.contains("unk_token") && m["unk_token"].is_string()) {
        auto it = vocab_.find(m["unk_token"].get<std::string>());
        if (it == vocab_.end()) throw InputError(path_ + ": BPE unk_token is not in the vocabulary");
        unk_id_ = it->second;
    }
    for (int b = 0; b < 256; ++b) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
        auto it = vocab_.find(buf);
        fallback_ids_[b] = it == vocab_.end() ? -1 : it->second;
        auto jt = vocab_.find(alphabet().str[b]);
        byte_ids_[b] = jt == vocab_.end() ? -1 : jt->second;
    }
    if (has_bytelevel_pre_) {
        std::string raw;
        raw_vocab_.reserve(vocab_.size() * 2);
        for (const auto& kv : vocab_)
            if (bytelevel_to_raw(kv.first, &raw)) raw_vocab_.emplace(raw, kv.second);
    }

    const json& merges = m.value("merges", json::array());
    merges_.reserve(merges.size());
    const size_t plen = prefix_.size();
    for (size_t i = 0; i < merges.size(); ++i) {
        std::string a, b;
        const json& e = merges[i];
        if (e.is_string()) {
            std::string s = e.get<std::string>();
            size_t sp = s.find(' ');
            if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
                throw InputError(strprintf("%s: merge %zu '%s' is not two tokens", path_.c_str(), i, s.c_str()));
            a = s.substr(0, sp);
            b = s.substr(sp + 1);
        } else if (e.is_array() && e.size() == 2) {
            a = e[0].get<std::string>();
            b = e[1].get<std::string>();
        } else {
            throw InputError(strprintf("%s: merge %zu is malformed", path_.c_str(), i));
        }
        auto ia = vocab_.find(a), ib = vocab_.find(b);
        if (ia == vocab_.end() || ib == vocab_.end())
            throw InputError(strprintf("%s: merge %zu uses a token that is not in the vocabulary", path_.c_str(), i));
        std::string merged = a + (b.size() >= plen ? b.substr(plen) : b);
        auto in = vocab_.find(merged);
        if (in == vocab_.end())
            throw InputError(strprintf("%s: merge %zu makes '%s', which is not in the vocabulary", path_.c_str(), i,
                                       merged.c_str()));
        merges_.put(MergeMap::key(ia->second, ib->second), static_cast<uint32_t>(i), in->second);
    }
}

void HfTokenizer::load_normalizer(const json& n) {
    if (n.is_null()) return;
    std::string type = type_of(n);
    if (type == "NFC") {
        nfc_ = true;
    } else if (type == "Sequence") {
        int count = 0;
        for (const json& x : n.value("normalizers", json::array())) {
            if (type_of(x) != "NFC") unsupported(path_, "normalizer '" + type_of(x) + "'");
            if (++count > 1) continue;  // NFC twice is NFC
            nfc_ = true;
        }
    } else {
        unsupported(path_, "normalizer '" + type + "'");
    }
}

Behavior parse_behavior(const std::string& path, const std::string& b) {
    if (b == "Removed") return Behavior::kRemoved;
    if (b == "Isolated") return Behavior::kIsolated;
    if (b == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
    if (b == "MergedWithNext") return Behavior::kMergedWithNext;
    if (b == "Contiguous") return Behavior::kContiguous;
    unsupported(path, "Split behavior '" + b + "'");
}

void HfTokenizer::load_pre_tokenizer(const json& p) {
    if (p.is_null()) return;
    std::string type = type_of(p);
    if (type == "Sequence") {
        for (const json& x : p.value("pretokenizers", json::array())) load_pre_tokenizer(x);
        return;
    }
    PreTok t{};
    if (type == "Split") {
        t.kind = PreTok::kSplit;
        const json& pat = p.at("pattern");
        if (pat.contains("Regex")) t.regex = std::make_shared<Regex>(pat["Regex"].get<std::string>());
        else if (pat.contains("String")) t.regex = std::make_shared<Regex>(pat["String"].get<std::string>(), true);
        else unsupported(path_, "Split pattern");
        t.behavior = parse_behavior(path_, p.at("behavior").get<std::string>());
        t.invert = p.value("invert", false);
    } else if (type == "ByteLevel") {
        t.kind = PreTok::kByteLevel;
        t.add_prefix_space = p.value("add_prefix_space", true);
        t.use_regex = p.value("use_regex", true);
        if (t.use_regex)
            t.regex = std::make_shared<Regex>(
                "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+");
        has_bytelevel_pre_ = true;
    } else if (type == "Digits") {
        t.kind = PreTok::kDigits;
        t.individual_digits = p.value("individual_digits", false);
    } else {
        unsupported(path_, "pre_tokenizer '" + type + "'");
    }
    pre_.push_back(std::move(t));
}

void HfTokenizer::load_post_processor(const json& p) {
    if (p.is_null()) return;
    std::string type = type_of(p);
    if (type == "Sequence") {
        for (const json& x : p.value("processors", json::array())) load_post_processor(x);
        return;
    }
    PostProc pp{};
    if (type == "ByteLevel") {
        pp.kind = PostProc::kByteLevel;
        pp.trim_offsets = p.value("trim_offsets", true);
        pp.add_prefix_space = p.value("add_prefix_space", true);
    } else if (type == "TemplateProcessing") {
        pp.kind = PostProc::kTemplate;
        const json& specials = p.value("special_tokens", json::object());
        bool seen_a = false;
        for (const json& piece : p.at("single")) {
            if (piece.contains("Sequence")) {
                if (piece["Sequence"].value("id", std::string("A")) != "A")
                    unsupported(path_, "TemplateProcessing single template with sequence B");
                seen_a = true;
                continue;
            }
            if (!piece.contains("SpecialToken")) unsupported(path_, "TemplateProcessing piece");
            std::string id = piece["SpecialToken"].at("id").get<std::string>();
            if (!specials.contains(id)) throw InputError(path_ + ": TemplateProcessing token '" + id + "' has no ids");
            const json& st = specials[id];
            for (size_t k = 0; k < st.at("ids").size(); ++k) {
                (seen_a ? pp.after : pp.before).push_back(st["ids"][k].get<int32_t>());
                (seen_a ? pp.after_tok : pp.before_tok).push_back(st.value("tokens", json::array()).size() > k
                                                                      ? st["tokens"][k].get<std::string>()
                                                                      : id);
            }
        }
    } else {
        unsupported(path_, "post_processor '" + type + "'");
    }
    post_.push_back(std::move(pp));
}

void HfTokenizer::load_decoder(const json& d) {
    if (d.is_null()) return;
    has_decoder_ = true;
    std::string type = type_of(d);
    if (type == "Sequence") {
        for (const json& x : d.value("decoders", json::array())) load_decoder(x);
        return;
    }
    DecoderStep s{};
    if (type == "ByteLevel") {
        s.kind = DecoderStep::kByteLevel;
    } else if (type == "ByteFallback") {
        s.kind = DecoderStep::kByteFallback;
    } else if (type == "Fuse") {
        s.kind = DecoderStep::kFuse;
    } else if (type == "Strip") {
        s.kind = DecoderStep::kStrip;
        std::string c = d.at("content").get<std::string>();
        int len = 0;
        s.content = c.empty() ? 0 : utf8_decode(c.data(), 0, &len);
        s.start = d.value("start", 0);
        s.stop = d.value("stop", 0);
    } else if (type == "Replace") {
        s.kind = DecoderStep::kReplace;
        if (!d.at("pattern").contains("String")) unsupported(path_, "Replace decoder with a regex pattern");
        s.pattern = d["pattern"]["String"].get<std::string>();
        s.replacement = d.at("content").get<std::string>();
    } else {
        unsupported(path_, "decoder '" + type + "'");
    }
    dec_.push_back(std::move(s));
}

Scratch& HfTokenizer::scratch() const {
    auto& slot = t_scratch[instance_];
    if (!slot) slot = std::make_unique<Scratch>();
    return *slot;
}

// ---------------------------------------------------------------- added tokens

// HF AddedVocabulary::find_matches + split_with_indices on bytes [a, b) of a segment.
void HfTokenizer::split_added(Work& w, uint32_t seg, uint32_t a, uint32_t b, const AddedTrie& trie,
                              std::vector<Piece>* out) const {
    const Seg& sg = w.segs[seg];
    const char* s = sg.data + a;
    const uint32_t n = b - a;
    auto push = [&](uint32_t x, uint32_t y, int32_t added) {
        if (x >= y) return;  // empty splits are dropped
        Piece p;
        p.seg = seg;
        p.a = a + x;
        p.b = a + y;
        p.added = added;
        out->push_back(p);
    };
    if (trie.empty()) {
        push(0, n, -1);
        return;
    }
    auto char_before = [&](uint32_t pos) -> uint32_t {  // last char of s[0, pos)
        uint32_t j = pos - 1;
        while (j > 0 && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) --j;
        int len;
        return utf8_decode(s, j, &len);
    };
    uint32_t start_offset = 0;
    uint32_t i = 0;
    while (i < n) {
        if (!trie.first[static_cast<unsigned char>(s[i])]) {
            ++i;
            continue;
        }
        int32_t tok = -1;
        uint32_t len = trie.longest(s, n, i, &tok);
        if (len == 0) {
            ++i;
            continue;
        }
        uint32_t start = i, stop = i + len;
        i = stop;  // the automaton resumes after the match, whatever happens to it below
        const AddedToken& at = added_[static_cast<size_t>(tok)];
        if (at.single_word) {
            bool start_space = start == 0 || !uni_is_word(char_before(start));
            int l;
            bool stop_space = stop == n || !uni_is_word(utf8_decode(s, stop, &l));
            if (!start_space || !stop_space) continue;
        }
        if (at.lstrip) {
            uint32_t ns = start;
            while (ns > 0) {
                uint32_t j = ns - 1;
                while (j > 0 && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) --j;
                int l;
                if (!uni_is_whitespace(utf8_decode(s, j, &l))) break;
                ns = j;
            }
            start = std::max(ns, start_offset);
        }
        if (at.rstrip) {
            while (stop < n) {
                int l;
                if (!uni_is_whitespace(utf8_decode(s, stop, &l))) break;
                stop += static_cast<uint32_t>(l);
            }
        }
        if (start_offset < start) push(start_offset, start, -1);
        push(start, stop, tok);
        start_offset = stop;
    }
    if (start_offset != n) push(start_offset, n, -1);
}

// Applies the normalizer to a (non-added) piece of the input and splits the result on the
// normalized added tokens.
void HfTokenizer::normalize_piece(Work& w, const Piece& p, std::vector<Piece>* out) const {
    uint32_t seg = p.seg, a = p.a, b = p.b;
    if (nfc_) {
        std::vector<std::pair<uint32_t, int>> ch;
        std::string_view src(w.segs[p.seg].data + p.a, p.b - p.a);
        if (nfc_changes(src, &ch)) {
            // HF NormalizedString::transform over the piece: each new char takes the alignment
            // of the char it replaces (change <= 0) or of the byte before it (inserted).
            const Seg& old = w.segs[p.seg];
            Seg ns;
            ns.identity = false;
            ns.shift = old.orig(p.a).first;
            size_t offset = 0;  // byte offset in src
            for (auto& [c, change] : ch) {
                Span align;
                if (change > 0) align = offset < 1 ? Span{ns.shift, ns.shift} : old.orig(p.a + static_cast<uint32_t>(offset - 1));
                else align = old.orig(p.a + static_cast<uint32_t>(offset));
                if (change <= 0 && offset < src.size()) offset += static_cast<size_t>(utf8_len(static_cast<unsigned char>(src[offset])));
                for (int k = 0; k < -change && offset < src.size(); ++k)
                    offset += static_cast<size_t>(utf8_len(static_cast<unsigned char>(src[offset])));
                size_t before = ns.own.size();
                utf8_append(ns.own, c);
                for (size_t k = before; k < ns.own.size(); ++k) ns.al.push_back(align);
            }
            w.segs.push_back(std::move(ns));
            Seg& back = w.segs.back();
            back.data = back.own.data();
            back.size = static_cast<uint32_t>(back.own.size());
            seg = static_cast<uint32_t>(w.segs.size() - 1);
            a = 0;
            b = back.size;
        }
    }
    split_added(w, seg, a, b, trie_norm_, out);
}

// Gives a piece its own segment holding the text a later step must see: the virtual prefix
// space, and byte-level chars when ByteLevel already ran.
void HfTokenizer::materialize(Work& w, Piece& p) const {
    if (!p.prefix && !p.byte_level) return;
    const Seg& old = w.segs[p.seg];
    Seg ns;
    ns.identity = false;
    ns.shift = old.orig(p.a).first;
    if (p.prefix) {  // the space, as a byte-level char when ByteLevel already ran
        const std::string sp = p.byte_level ? alphabet().str[' '] : std::string(" ");
        ns.own += sp;
        ns.al.insert(ns.al.end(), sp.size(), old.orig(p.a));
    }
    for (uint32_t i = p.a; i < p.b; ++i) {
        Span al = old.orig(i);
        if (p.byte_level) {
            const std::string& c = alphabet().str[static_cast<unsigned char>(old.data[i])];
            ns.own += c;
            for (size_t k = 0; k < c.size(); ++k) ns.al.push_back(al);
        } else {
            ns.own.push_back(old.data[i]);
            ns.al.push_back(al);
        }
    }
    w.segs.push_back(std::move(ns));
    Seg& back = w.segs.back();
    back.data = back.own.data();
    back.size = static_cast<uint32_t>(back.own.size());
    p.seg = static_cast<uint32_t>(w.segs.size() - 1);
    p.a = 0;
    p.b = back.size;
    p.prefix = false;
    p.byte_level = false;
}

// HF NormalizedString::split: `matches` are relative to the piece; they and the gaps between
// them become splits according to `behavior` (after `invert` flips which are matches).
void HfTokenizer::split_piece(const Piece& p, const std::vector<Span>& matches, Behavior behavior, bool invert,
                              std::vector<Piece>* out) const {
    const uint32_t n = p.b - p.a;
    struct M { uint32_t x, y; bool match; };
    std::vector<M> ms;
    ms.reserve(matches.size() * 2 + 1);
    uint32_t prev = 0;
    for (const Span& m : matches) {
        if (prev != m.first) ms.push_back({prev, m.first, invert});
        ms.push_back({m.first, m.second, !invert});
        prev = m.second;
    }
    if (prev != n) ms.push_back({prev, n, invert});

    std::vector<Span> splits;
    splits.reserve(ms.size());
    switch (behavior) {
        case Behavior::kIsolated:
            for (const M& m : ms) splits.push_back({m.x, m.y});
            break;
        case Behavior::kRemoved:
            for (const M& m : ms)
                if (!m.match) splits.push_back({m.x, m.y});
            break;
        case Behavior::kContiguous: {
            bool previous = false;
            for (const M& m : ms) {
                if (m.match == previous && !splits.empty()) splits.back().second = m.y;
                else splits.push_back({m.x, m.y});
                previous = m.match;
            }
            break;
        }
        case Behavior::kMergedWithPrevious: {
            bool previous = false;
            for (const M& m : ms) {
                if (m.match && !previous && !splits.empty()) splits.back().second = m.y;
                else splits.push_back({m.x, m.y});
                previous = m.match;
            }
            break;
        }
        case Behavior::kMergedWithNext: {
            bool previous = false;
            for (size_t k = ms.size(); k-- > 0;) {
                const M& m = ms[k];
                if (m.match && !previous && !splits.empty()) splits.back().first = m.x;
                else splits.push_back({m.x, m.y});
                previous = m.match;
            }
            std::reverse(splits.begin(), splits.end());
            break;
        }
    }
    for (const Span& s : splits) {
        if (s.first >= s.second) continue;
        Piece q = p;
        q.a = p.a + s.first;
        q.b = p.a + s.second;
        out->push_back(q);
    }
}

void HfTokenizer::apply_pre_tokenizer(Work& w, const PreTok& pt) const {
    std::vector<Piece> next;
    next.reserve(w.pieces.size() * (pt.kind == PreTok::kByteLevel && !pt.use_regex ? 1 : 4));
    for (Piece p : w.pieces) {
        if (p.added >= 0) {
            next.push_back(p);
            continue;
        }
        if (pt.kind == PreTok::kByteLevel) {
            if (p.byte_level) materialize(w, p);
            bool need_prefix = pt.add_prefix_space && w.segs[p.seg].data[p.a] != ' ' && !p.prefix;
            if (!pt.use_regex) {
                p.prefix = p.prefix || need_prefix;
                p.byte_level = true;
                next.push_back(p);
                continue;
            }
            if (need_prefix) {
                p.prefix = true;
                materialize(w, p);
            } else if (p.prefix) {
                materialize(w, p);
            }
            const Seg& sg = w.segs[p.seg];
            pt.regex->find_all(sg.data + p.a, p.b - p.a, &w.matches);
            size_t first = next.size();
            split_piece(p, w.matches, Behavior::kIsolated, false, &next);
            for (size_t k = first; k < next.size(); ++k) next[k].byte_level = true;
            continue;
        }
        if (p.byte_level || p.prefix) materialize(w, p);
        const Seg& sg = w.segs[p.seg];
        if (pt.kind == PreTok::kSplit) {
            pt.regex->find_all(sg.data + p.a, p.b - p.a, &w.matches);
            split_piece(p, w.matches, pt.behavior, pt.invert, &next);
        } else {  // Digits: each numeric char is a match
            w.matches.clear();
            const char* s = sg.data + p.a;
            for (uint32_t i = 0; i < p.b - p.a;) {
                int len;
                uint32_t c = utf8_decode(s, i, &len);
                if (uni_is_numeric(c)) w.matches.push_back({i, i + static_cast<uint32_t>(len)});
                i += static_cast<uint32_t>(len);
            }
            split_piece(p, w.matches, pt.individual_digits ? Behavior::kIsolated : Behavior::kContiguous, false,
                        &next);
        }
    }
    w.pieces.swap(next);
}

// ---------------------------------------------------------------- BPE

// Vocabulary id of one initial symbol with the subword prefix/suffix HF adds (BPE::merge_word);
// -1 when it is not in the vocabulary.
int32_t HfTokenizer::symbol_id(std::string_view ch, bool first, bool last) const {
    if (prefix_.empty() && suffix_.empty()) {
        std::string key(ch);
        auto it = vocab_.find(key);
        return it == vocab_.end() ? -1 : it->second;
    }
    std::string key;
    if (!first) key += prefix_;
    key.append(ch.data(), ch.size());
    if (last) key += suffix_;
    auto it = vocab_.find(key);
    return it == vocab_.end() ? -1 : it->second;
}

// Initial symbols of a piece into s.syms (id, byte length in the piece's bytes), then merges.
// Result in s.out as (id, byte length).
void HfTokenizer::bpe_word(Scratch& s, const Piece& p, const Work& w) const {
    s.syms.clear();
    const Seg& sg = w.segs[p.seg];
    const char* bytes = sg.data + p.a;
    const uint32_t n = p.b - p.a;
    int32_t unk_pending = -1;
    uint32_t unk_len = 0;
    auto add = [&](int32_t id, uint32_t len) {
        BpeSym sym{id, static_cast<int32_t>(s.syms.size()) - 1, -1, len};
        if (!s.syms.empty()) s.syms.back().next = static_cast<int32_t>(s.syms.size());
        s.syms.push_back(sym);
    };
    // One char (or byte-level byte): vocab id, byte fallback, unk, or dropped.
    auto one = [&](int32_t id, std::string_view ch_utf8, uint32_t len) {
        if (id >= 0) {
            if (unk_pending >= 0) {
                add(unk_pending, unk_len);
                unk_pending = -1;
            }
            add(id, len);
            return;
        }
        if (byte_fallback_) {
            bool all = true;
            for (unsigned char c : ch_utf8) all = all && fallback_ids_[c] >= 0;
            if (all) {
                // HF adds one byte token per UTF-8 byte of the char, each of byte length 1.
                if (unk_pending >= 0) {
                    add(unk_pending, unk_len);
                    unk_pending = -1;
                }
                for (unsigned char c : ch_utf8) add(fallback_ids_[c], 1);
                return;
            }
        }
        if (unk_id_ >= 0) {
            if (unk_pending >= 0 && fuse_unk_) {
                unk_len += len;
            } else {
                if (unk_pending >= 0) add(unk_pending, unk_len);
                unk_pending = unk_id_;
                unk_len = len;
            }
        }
    };
    const bool plain_affix = prefix_.empty() && suffix_.empty();
    if (p.byte_level) {
        const uint32_t total = n + (p.prefix ? 1u : 0u);
        for (uint32_t k = 0; k < total; ++k) {
            unsigned char b = (p.prefix && k == 0) ? ' ' : static_cast<unsigned char>(bytes[k - (p.prefix ? 1 : 0)]);
            int32_t id = plain_affix ? byte_ids_[b] : symbol_id(alphabet().str[b], k == 0, k + 1 == total);
            one(id, alphabet().str[b], 1);
        }
    } else {
        for (uint32_t i = 0; i < n;) {
            int len;
            utf8_decode(bytes, i, &len);
            std::string_view ch(bytes + i, static_cast<size_t>(len));
            int32_t id = symbol_id(ch, i == 0, i + static_cast<uint32_t>(len) == n);
            one(id, ch, static_cast<uint32_t>(len));
            i += static_cast<uint32_t>(len);
        }
    }
    if (unk_pending >= 0) add(unk_pending, unk_len);
    bpe_merge(s);
}

void HfTokenizer::bpe_merge(Scratch& s) const {
    auto& syms = s.syms;
    auto& heap = s.heap;
    heap.clear();
    // Min-heap on (rank, pos): lowest rank first, leftmost on ties, as HF's Merge ordering.
    auto cmp = [](const HeapItem& x, const HeapItem& y) { return x.rank != y.rank ? x.rank > y.rank : x.pos > y.pos; };
    for (size_t i = 0; i + 1 < syms.size(); ++i)
        if (const MergeMap::Slot* m = merges_.get(MergeMap::key(syms[i].id, syms[i + 1].id)))
            heap.push_back({m->rank, static_cast<uint32_t>(i), m->id});
    std::make_heap(heap.begin(), heap.end(), cmp);
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), cmp);
        HeapItem top = heap.back();
        heap.pop_back();
        BpeSym& cur = syms[top.pos];
        if (cur.len == 0 || cur.next < 0) continue;
        const BpeSym right = syms[static_cast<size_t>(cur.next)];
        const MergeMap::Slot* m = merges_.get(MergeMap::key(cur.id, right.id));
        if (!m || m->id != top.new_id) continue;
        cur.id = top.new_id;
        cur.len += right.len;
        syms[static_cast<size_t>(cur.next)].len = 0;
        cur.next = right.next;
        if (right.next >= 0) syms[static_cast<size_t>(right.next)].prev = static_cast<int32_t>(top.pos);
        if (cur.prev >= 0) {
            const BpeSym& pv = syms[static_cast<size_t>(cur.prev)];
            if (const MergeMap::Slot* pm = merges_.get(MergeMap::key(pv.id, cur.id))) {
                heap.push_back({pm->rank, static_cast<uint32_t>(cur.prev), pm->id});
                std::push_heap(heap.begin(), heap.end(), cmp);
            }
        }
        if (cur.next >= 0) {
            const BpeSym& nx = syms[static_cast<size_t>(cur.next)];
            if (const MergeMap::Slot* nm = merges_.get(MergeMap::key(cur.id, nx.id))) {
                heap.push_back({nm->rank, top.pos, nm->id});
                std::push_heap(heap.begin(), heap.end(), cmp);
            }
        }
    }
    s.out.clear();
    for (const BpeSym& sym : syms)
        if (sym.len != 0) s.out.push_back({sym.id, sym.len});
}

// ---------------------------------------------------------------- encode

// A token of the model's output before post-processing: its id, its offsets in the text, and the
// added token it is (-1 = a model token).
struct ModelToken {
    int32_t id;
    Span off;
    int32_t added;
};

// The token strings: a model token's vocabulary string, an added token's matched (normalized)
// text, stripped spaces included, as HF keeps them.
static std::vector<std::string> token_strings(const std::vector<ModelToken>& toks, const Work& w,
                                              const std::unordered_map<int32_t, std::string>& vocab_r) {
    std::vector<std::string> values;
    values.reserve(toks.size());
    std::vector<std::string> piece_values;
    for (const Piece& p : w.pieces)
        if (p.added >= 0) piece_values.emplace_back(w.segs[p.seg].data + p.a, p.b - p.a);
    size_t pi = 0;
    for (const ModelToken& t : toks) {
        if (t.added >= 0) {
            values.push_back(piece_values[pi++]);
        } else {
            auto it = vocab_r.find(t.id);
            values.push_back(it == vocab_r.end() ? std::string() : it->second);
        }
    }
    return values;
}

// A TemplateProcessing post-processor (its single-sequence template): the special tokens before and
// after the ids, with empty offsets; `values` (the token strings, when they are needed) alike.
static void apply_template(const PostProc& pp, bool need_values, Encoding& e, std::vector<std::string>& values) {
    Encoding n;
    for (size_t k = 0; k < pp.before.size(); ++k) {
        n.ids.push_back(pp.before[k]);
        n.offsets.push_back({0, 0});
    }
    n.ids.insert(n.ids.end(), e.ids.begin(), e.ids.end());
    n.offsets.insert(n.offsets.end(), e.offsets.begin(), e.offsets.end());
    for (size_t k = 0; k < pp.after.size(); ++k) {
        n.ids.push_back(pp.after[k]);
        n.offsets.push_back({0, 0});
    }
    if (need_values) {
        std::vector<std::string> nv(pp.before_tok.begin(), pp.before_tok.end());
        nv.insert(nv.end(), values.begin(), values.end());
        nv.insert(nv.end(), pp.after_tok.begin(), pp.after_tok.end());
        values.swap(nv);
    }
    e = std::move(n);
}

// The ByteLevel post-processor's trim_offsets: each token's offsets without its leading and
// trailing spaces ('Ġ' or white space in its string `values[i]`) of the original `text`.
static void trim_byte_level_offsets(std::string_view text, const std::vector<std::string>& values, bool add_prefix_space,
                                    Encoding& e) {
    // HF byte_level::process_offsets: trim leading/trailing 'Ġ' or whitespace chars. The
    // Python binding (the reference) trims after converting offsets to characters, so one
    // space counts as one character of the text: walk characters, not bytes.
    auto next_char = [&](uint32_t b) { return b + static_cast<uint32_t>(utf8_len(static_cast<unsigned char>(text[b]))); };
    auto prev_char = [&](uint32_t b) {
        do --b; while (b > 0 && (static_cast<unsigned char>(text[b]) & 0xC0) == 0x80);
        return b;
    };
    for (size_t i = 0; i < e.ids.size(); ++i) {
        const std::string& v = values[i];
        std::vector<uint32_t> cps;
        for (size_t q = 0; q < v.size();) {
            int len;
            cps.push_back(utf8_decode(v.data(), q, &len));
            q += static_cast<size_t>(len);
        }
        auto is_sp = [](uint32_t c) { return c == 0x120 || uni_is_whitespace(c); };
        size_t lead = 0, trail = 0;
        while (lead < cps.size() && is_sp(cps[lead])) ++lead;
        while (trail < cps.size() && is_sp(cps[cps.size() - 1 - trail])) ++trail;
        auto& off = e.offsets[i];
        if (lead == 0 && trail == 0) continue;
        if (lead > 0) {
            bool is_first = i == 0 || off.first == 0;
            if (is_first && add_prefix_space && lead == 1) lead = 0;
            uint32_t b = off.first;
            for (size_t k = 0; k < lead && b < off.second; ++k) b = next_char(b);
            off.first = std::min(b, off.second);
        }
        if (trail > 0) {
            uint32_t b = off.second;
            size_t k = 0;
            for (; k < trail && b > 0; ++k) b = prev_char(b);
            if (k == trail) off.second = std::max(b, off.first);  // end (in chars) >= trail
        }
    }
}

Encoding HfTokenizer::encode(std::string_view text, bool add_special_tokens) const {
    if (int64_t bad = utf8_first_invalid(text); bad >= 0)
        throw InputError(strprintf("invalid UTF-8 at byte %lld of the text to tokenize", static_cast<long long>(bad)));
    if (text.size() >= 0xFFFFFFF0u) throw InputError("text to tokenize is larger than 4 GiB");
    Scratch& sc = scratch();
    Work w;
    Seg root;
    root.data = text.data();
    root.size = static_cast<uint32_t>(text.size());
    w.segs.push_back(root);

    // 1. Added tokens that are not normalized, on the raw text; 2. normalizer and the normalized
    // added tokens on what is left.
    std::vector<Piece> first;
    split_added(w, 0, 0, root.size, trie_raw_, &first);
    for (const Piece& p : first) {
        if (p.added >= 0) w.pieces.push_back(p);
        else normalize_piece(w, p, &w.pieces);
    }
    // 3. Pre-tokenizers, in order.
    for (const PreTok& pt : pre_) apply_pre_tokenizer(w, pt);

    // 4. Model.
    std::vector<ModelToken> toks;
    toks.reserve(text.size() / 3 + 4);
    for (const Piece& p : w.pieces) {
        const Seg& sg = w.segs[p.seg];
        if (p.added >= 0) {
            toks.push_back({added_[static_cast<size_t>(p.added)].id, sg.range(p.a, p.b), p.added});
            continue;
        }
        const uint32_t pre = p.prefix ? 1u : 0u;
        auto real = [&](uint32_t k) { return (p.prefix && k == 0) ? p.a : p.a + k - pre; };
        auto emit = [&](int32_t id, uint32_t x, uint32_t y) {  // virtual bytes [x, y) of the word
            toks.push_back({id, {sg.orig(real(x)).first, sg.orig(real(y - 1)).second}, -1});
        };
        const uint32_t wlen = p.b - p.a + pre;
        // The word's key: its bytes (byte-level: the raw bytes the byte-level chars stand for).
        std::string& key = sc.key;
        key.clear();
        if (p.prefix) key.push_back(' ');
        key.append(sg.data + p.a, p.b - p.a);
        if (ignore_merges_) {
            const auto& map = p.byte_level ? raw_vocab_ : vocab_;
            auto it = map.find(key);
            if (it != map.end()) {
                emit(it->second, 0, wlen);
                continue;
            }
        }
        const CachedWord* cw = nullptr;
        auto hit = sc.cache.find(key);
        if (hit != sc.cache.end()) {
            cw = &hit->second;
        } else {
            bpe_word(sc, p, w);
            if (key.size() < kCacheMaxWord && sc.cache.size() < kCacheCapacity) {
                auto ins = sc.cache.emplace(key, CachedWord{sc.out});
                cw = &ins.first->second;
            }
        }
        const auto& out = cw ? cw->toks : sc.out;
        uint32_t pos = 0;
        for (const auto& [id, len] : out) {
            emit(id, pos, pos + len);
            pos += len;
        }
    }

    // 5. Post-processors.
    Encoding e;
    e.ids.reserve(toks.size() + 4);
    e.offsets.reserve(toks.size() + 4);
    bool need_values = false;
    for (const PostProc& pp : post_) need_values = need_values || (pp.kind == PostProc::kByteLevel && pp.trim_offsets);
    for (const ModelToken& t : toks) {
        e.ids.push_back(t.id);
        e.offsets.push_back(t.off);
    }
    // Token strings, only for ByteLevel offset trimming: the vocabulary string of a model token,
    // the matched (normalized) text of an added token, stripped spaces included, as HF keeps them.
    std::vector<std::string> values;
    if (need_values) values = token_strings(toks, w, vocab_r_);
    for (const PostProc& pp : post_) {
        if (pp.kind == PostProc::kTemplate) {
            if (!add_special_tokens) continue;
            apply_template(pp, need_values, e, values);
            continue;
        }
        if (!pp.trim_offsets) continue;
        trim_byte_level_offsets(text, values, pp.add_prefix_space, e);
    }
    return e;
}

// ---------------------------------------------------------------- decode

// The ByteFallback decoder: runs of <0xNN> tokens become their bytes (each byte U+FFFD when the
// run is not valid UTF-8); other tokens pass.
static std::vector<std::string> byte_fallback(const std::vector<std::string>& toks) {
    std::vector<std::string> next;
    std::string pending;
    auto flush = [&]() {
        if (pending.empty()) return;
        if (utf8_first_invalid(pending) < 0) next.push_back(pending);
        else
            for (size_t k = 0; k < pending.size(); ++k) next.push_back("\xEF\xBF\xBD");
        pending.clear();
    };
    for (const std::string& t : toks) {
        if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' &&
            std::isxdigit(static_cast<unsigned char>(t[3])) && std::isxdigit(static_cast<unsigned char>(t[4]))) {
            pending.push_back(static_cast<char>(std::stoi(t.substr(3, 2), nullptr, 16)));
            continue;
        }
        flush();
        next.push_back(t);
    }
    flush();
    return next;
}

// The Strip decoder: up to d.start leading and d.stop trailing characters equal to d.content cut
// from each token.
static std::vector<std::string> strip_tokens(const DecoderStep& d, const std::vector<std::string>& toks) {
    std::vector<std::string> next;
    for (const std::string& t : toks) {
        std::vector<std::pair<size_t, size_t>> chars;  // (byte offset, len)
        for (size_t q = 0; q < t.size();) {
            int len;
            utf8_decode(t.data(), q, &len);
            chars.push_back({q, static_cast<size_t>(len)});
            q += static_cast<size_t>(len);
        }
        auto cp_at = [&](size_t k) { int l; return utf8_decode(t.data(), chars[k].first, &l); };
        size_t start_cut = 0;
        for (size_t k = 0; k < chars.size() && k < static_cast<size_t>(d.start); ++k) {
            if (cp_at(k) == d.content) start_cut = k + 1;
            else break;
        }
        size_t stop_cut = chars.size();
        for (int k = 0; k < d.stop; ++k) {
            if (static_cast<size_t>(k) >= chars.size()) break;
            size_t index = chars.size() - static_cast<size_t>(k) - 1;
            if (cp_at(index) == d.content) stop_cut = index;
            else break;
        }
        if (start_cut >= stop_cut) next.emplace_back();
        else {
            size_t b0 = chars[start_cut].first;
            size_t b1 = stop_cut < chars.size() ? chars[stop_cut].first : t.size();
            next.push_back(t.substr(b0, b1 - b0));
        }
    }
    return next;
}

std::string HfTokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
    std::vector<std::string> toks;
    toks.reserve(ids.size());
    for (int32_t id : ids) {
        auto a = added_by_id_.find(id);
        if (a != added_by_id_.end()) {
            const AddedToken& t = added_[a->second];
            if (skip_special_tokens && t.special) continue;
            toks.push_back(t.normalized ? t.pattern : t.content);
            continue;
        }
        auto it = vocab_r_.find(id);
        if (it == vocab_r_.end()) continue;
        if (skip_special_tokens && added_by_content_.count(it->second)) {
            auto c = added_by_id_.find(added_by_content_.at(it->second));
            if (c != added_by_id_.end() && added_[c->second].special) continue;
        }
        toks.push_back(it->second);
    }
    if (!has_decoder_) {
        std::string out;
        for (size_t i = 0; i < toks.size(); ++i) out += (i ? " " : "") + toks[i];
        return out;
    }
    for (const DecoderStep& d : dec_) {
        std::vector<std::string> next;
        switch (d.kind) {
            case DecoderStep::kByteLevel: {
                std::string bytes, raw;
                for (const std::string& t : toks) {
                    if (bytelevel_to_raw(t, &raw)) bytes += raw;
                    else bytes += t;
                }
                next.push_back(utf8_lossy(bytes));
                break;
            }
            case DecoderStep::kByteFallback:
                next = byte_fallback(toks);
                break;
            case DecoderStep::kFuse: {
                std::string all;
                for (const std::string& t : toks) all += t;
                next.push_back(all);
                break;
            }
            case DecoderStep::kStrip:
                next = strip_tokens(d, toks);
                break;
            case DecoderStep::kReplace:
                for (const std::string& t : toks) {
                    if (d.pattern.empty()) { next.push_back(t); continue; }
                    std::string r;
                    size_t q = 0;
                    for (size_t f; (f = t.find(d.pattern, q)) != std::string::npos; q = f + d.pattern.size())
                        r += t.substr(q, f - q) + d.replacement;
                    r += t.substr(q);
                    next.push_back(r);
                }
                break;
        }
        toks.swap(next);
    }
    std::string out;
    for (const std::string& t : toks) out += t;
    return out;
}

int32_t HfTokenizer::token_to_id(std::string_view token) const {
    std::string k(token);
    auto a = added_by_content_.find(k);
    if (a != added_by_content_.end()) return a->second;
    auto it = vocab_.find(k);
    return it == vocab_.end() ? -1 : it->second;
}

std::string HfTokenizer::id_to_token(int32_t id) const {
    auto a = added_by_id_.find(id);
    if (a != added_by_id_.end()) {
        const AddedToken& t = added_[a->second];
        return t.normalized ? t.pattern : t.content;
    }
    auto it = vocab_r_.find(id);
    return it == vocab_r_.end() ? std::string() : it->second;
}

}  // namespace

std::unique_ptr<Tokenizer> make_hf_tokenizer(const std::string& json_path) {
    return std::make_unique<HfTokenizer>(json_path);
}

}  // namespace cuset::detail
