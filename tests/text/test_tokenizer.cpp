// Tokenizer and chat-format tests: ids, byte offsets and decodings against Hugging Face
// `tokenizers` / `sentencepiece` fixtures (tests/golden/tokenizer_parity.py), chat formats against
// transformers' apply_chat_template with the families' templates, UTF-8 repair against Python,
// and the error paths. Ids and offsets are integers: they must match exactly.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cuset/text/chat_format.h"
#include "cuset/core/error.h"
#include "cuset/text/tokenizer.h"
#include "test_util.h"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using cuset::test::read_file;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;

const std::string kGolden = std::string(CUSET_TEST_WORK) + "/golden/tokenizer_parity";

json load_json(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("missing fixture " + path + " (run the golden_tokenizer_parity test first)");
    std::stringstream ss;
    ss << f.rdbuf();
    return json::parse(ss.str());
}

std::string hex(const std::string& s) {
    static const char* d = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
        out += d[c >> 4];
        out += d[c & 15];
    }
    return out;
}

std::string unhex(const std::string& h) {
    std::string out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
    return out;
}

std::string show(const std::string& s, size_t max = 60) {
    std::string out;
    for (char c : s.substr(0, max)) {
        if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (c == '\r') out += "\\r";
        else out += c;
    }
    return out + (s.size() > max ? "..." : "");
}

// "expected vs actual pieces": the first differing token and its neighbourhood.
std::string diff_pieces(const cuset::Tokenizer& tok, const std::string& text, const std::vector<int32_t>& want_ids,
                        const std::vector<uint32_t>& want_off, const cuset::Encoding& got) {
    size_t n = std::max(want_ids.size(), got.ids.size());
    size_t first = 0;
    while (first < n && first < want_ids.size() && first < got.ids.size() && want_ids[first] == got.ids[first] &&
           want_off[2 * first] == got.offsets[first].first && want_off[2 * first + 1] == got.offsets[first].second)
        ++first;
    std::ostringstream os;
    os << "text \"" << show(text) << "\" (" << text.size() << " bytes): " << want_ids.size() << " expected tokens, "
       << got.ids.size() << " actual; first difference at token " << first << "\n";
    size_t lo = first >= 3 ? first - 3 : 0;
    for (size_t t = lo; t < std::min(n, first + 4); ++t) {
        os << "  [" << t << "] expected ";
        if (t < want_ids.size()) {
            uint32_t b = want_off[2 * t], e = want_off[2 * t + 1];
            os << want_ids[t] << " '" << show(tok.id_to_token(want_ids[t])) << "' [" << b << "," << e << ") \""
               << show(b <= e && e <= text.size() ? text.substr(b, e - b) : "?") << "\"";
        } else {
            os << "-";
        }
        os << "   actual ";
        if (t < got.ids.size()) {
            auto [b, e] = got.offsets[t];
            os << got.ids[t] << " '" << show(tok.id_to_token(got.ids[t])) << "' [" << b << "," << e << ") \""
               << show(b <= e && e <= text.size() ? text.substr(b, e - b) : "?") << "\"";
        } else {
            os << "-";
        }
        os << "\n";
    }
    return os.str();
}

bool same(const std::vector<int32_t>& ids, const std::vector<uint32_t>& off, const cuset::Encoding& e) {
    if (ids != e.ids || off.size() != 2 * e.offsets.size()) return false;
    for (size_t t = 0; t < e.offsets.size(); ++t)
        if (off[2 * t] != e.offsets[t].first || off[2 * t + 1] != e.offsets[t].second) return false;
    return true;
}

// ---------------------------------------------------------------- tokenizer.json parity

class TokParity : public ::testing::TestWithParam<std::string> {};

TEST_P(TokParity, IdsOffsetsAndDecodeMatchHuggingFace) {
    const std::string name = GetParam();
    json fx = load_json(kGolden + "/" + name + ".json");
    auto tok = cuset::tokenizer_load(kGolden + "/" + fx["dir"].get<std::string>());
    EXPECT_EQ(tok->vocab_size(), fx["vocab_size"].get<int64_t>());
    for (int32_t id : fx["special_ids"]) EXPECT_TRUE(tok->is_special(id)) << "id " << id;

    const auto& cases = fx["cases"];
    const size_t n_sweep = fx["n_sweep"].get<size_t>();
    const size_t n_text = cases.size() - n_sweep;
    size_t bad = 0, bad_special = 0, bad_decode = 0, tokens = 0;
    std::string report;
    for (size_t i = 0; i < cases.size(); ++i) {
        const json& c = cases[i];
        const std::string text = c["text"].get<std::string>();
        const auto ids = c["ids"].get<std::vector<int32_t>>();
        const auto off = c["offsets"].get<std::vector<uint32_t>>();
        tokens += ids.size();
        cuset::Encoding e = tok->encode(text, false);
        if (!same(ids, off, e)) {
            if (++bad <= 5) report += (i >= n_text ? "[unicode sweep] " : "") + diff_pieces(*tok, text, ids, off, e);
        }
        std::string want_dec = c.contains("decoded") ? c["decoded"].get<std::string>() : text;
        if (tok->decode(ids, false) != want_dec && ++bad_decode <= 3)
            report += "decode differs for \"" + show(text) + "\": expected \"" + show(want_dec) + "\" got \"" +
                      show(tok->decode(ids, false)) + "\"\n";
        if (!c.contains("ids_special")) continue;
        const auto ids_s = c["ids_special"].get<std::vector<int32_t>>();
        const auto off_s = c["offsets_special"].get<std::vector<uint32_t>>();
        cuset::Encoding es = tok->encode(text, true);
        if (!same(ids_s, off_s, es) && ++bad_special <= 3)
            report += "with special tokens: " + diff_pieces(*tok, text, ids_s, off_s, es);
        std::string skip = c["decoded_skip"].get<std::string>();
        if (tok->decode(ids_s, true) != skip && ++bad_decode <= 3)
            report += "decode(skip_special) differs for \"" + show(text) + "\": expected \"" + show(skip) + "\" got \"" +
                      show(tok->decode(ids_s, true)) + "\"\n";
    }
    EXPECT_EQ(bad, 0u) << name << ": " << bad << " of " << cases.size() << " texts differ (" << tokens << " tokens)\n"
                       << report;
    EXPECT_EQ(bad_special, 0u) << report;
    EXPECT_EQ(bad_decode, 0u) << report;
    std::cout << "[parity] " << name << ": " << cases.size() << " texts (" << n_sweep << " Unicode sweep), " << tokens
              << " tokens, " << (bad == 0 && bad_special == 0 ? "100%" : "MISMATCH") << "\n";
}

INSTANTIATE_TEST_SUITE_P(Pipelines, TokParity,
                         ::testing::Values("qwen", "deepseek", "seed", "llama3", "gpt2", "prefix", "bytefallback"),
                         [](const auto& info) { return info.param; });

TEST(TokSentencePiece, IdsOffsetsAndDecodeMatchPythonApi) {
    json fx = load_json(kGolden + "/spm.json");
    auto tok = cuset::tokenizer_load(kGolden + "/spm/tokenizer.model");
    EXPECT_EQ(tok->backend(), "sentencepiece");
    EXPECT_EQ(tok->vocab_size(), fx["vocab_size"].get<int64_t>());
    EXPECT_EQ(tok->bos_id(), fx["bos"].get<int32_t>());
    EXPECT_EQ(tok->eos_id(), fx["eos"].get<int32_t>());
    size_t bad = 0, tokens = 0;
    std::string report;
    for (const json& c : fx["cases"]) {
        const std::string text = c["text"].get<std::string>();
        const auto ids = c["ids"].get<std::vector<int32_t>>();
        const auto off = c["offsets"].get<std::vector<uint32_t>>();
        tokens += ids.size();
        cuset::Encoding e = tok->encode(text, false);
        if (!same(ids, off, e) && ++bad <= 5) report += diff_pieces(*tok, text, ids, off, e);
        EXPECT_EQ(tok->encode(text, true).ids, c["ids_special"].get<std::vector<int32_t>>()) << show(text);
        EXPECT_EQ(tok->decode(ids), c["decoded"].get<std::string>()) << show(text);
    }
    EXPECT_EQ(bad, 0u) << report;
    std::cout << "[parity] sentencepiece: " << fx["cases"].size() << " texts, " << tokens << " tokens\n";
}

// ---------------------------------------------------------------- chat formats

TEST(TokChatFormat, RolesAndIdsMatchApplyChatTemplate) {
    json fx = load_json(kGolden + "/chat.json");
    std::map<std::string, std::unique_ptr<cuset::Tokenizer>> toks;
    size_t checked = 0;
    for (const json& c : fx) {
        const std::string dir = kGolden + "/" + c["dir"].get<std::string>();
        auto& tok = toks[dir];
        if (!tok) tok = cuset::tokenizer_load(dir);
        cuset::ChatFormatOptions o;
        // The hand-written format the real template in tokenizer_config.json is recognised as
        // (`auto` renders the template itself: tests/text/test_chat_template.cpp).
        EXPECT_EQ(cuset::chat_format_detect(dir), c["format"].get<std::string>()) << dir;
        o.format = c["format"].get<std::string>();
        cuset::ChatFormatter fmt(*tok, o, dir);
        cuset::Conversation conv;
        conv.id = c["id"].get<std::string>();
        for (const json& m : c["messages"]) conv.messages.push_back({m["role"], m["content"]});
        cuset::ChatFormatter::Rendered r;
        std::vector<std::pair<uint32_t, uint32_t>> offs;
        cuset::FormattedSample f = fmt.format(conv, &r, &offs);
        const std::string where = fmt.name() + "/" + conv.id;
        EXPECT_EQ(r.text, c["rendered"].get<std::string>()) << where;
        EXPECT_EQ(f.ids, c["ids"].get<std::vector<int32_t>>()) << where;
        const auto roles = c["roles"].get<std::vector<std::string>>();
        const auto trainable = c["trainable"].get<std::vector<int>>();
        const auto message = c["message"].get<std::vector<int32_t>>();
        const auto spans = c["spans"].get<std::vector<std::vector<int32_t>>>();
        ASSERT_EQ(f.ids.size(), roles.size()) << where;
        for (size_t t = 0; t < roles.size(); ++t) {
            EXPECT_EQ(cuset::role_name(f.roles[t]), roles[t]) << where << " token " << t << " '" << tok->id_to_token(f.ids[t]) << "'";
            EXPECT_EQ(f.trainable[t], trainable[t]) << where << " token " << t << " '" << tok->id_to_token(f.ids[t]) << "'";
            EXPECT_EQ(f.message[t], message[t]) << where << " token " << t;
            EXPECT_EQ(f.spans[t].first, spans[t][0]) << where << " token " << t;
            EXPECT_EQ(f.spans[t].second, spans[t][1]) << where << " token " << t;
        }
        ++checked;
    }
    EXPECT_GE(checked, 24u);
}

// The exact roles of a small Qwen3 answer, spelled out: the empty think block is prompt-side
// template, the answer and <|im_end|> are trainable, the newline after it is not.
TEST(TokChatFormat, Qwen3EmptyThinkBlockIsTemplate) {
    auto tok = cuset::tokenizer_load(kGolden + "/qwen3");
    cuset::ChatFormatOptions o;
    o.format = "qwen3";
    cuset::ChatFormatter fmt(*tok, o, kGolden + "/qwen3");
    cuset::Conversation c{"q3", {{"user", "hi"}, {"assistant", "ok"}}};
    cuset::ChatFormatter::Rendered r;
    std::vector<std::pair<uint32_t, uint32_t>> offs;
    cuset::FormattedSample f = fmt.format(c, &r, &offs);
    EXPECT_EQ(r.text, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nok<|im_end|>\n");
    std::string sig;  // piece:role:trainable
    for (size_t t = 0; t < f.ids.size(); ++t) {
        std::string piece = r.text.substr(offs[t].first, offs[t].second - offs[t].first);
        for (char& ch : piece)
            if (ch == '\n') ch = '/';
        sig += piece + ":" + cuset::role_name(f.roles[t])[0] + (f.trainable[t] ? "T" : "") + " ";
    }
    EXPECT_NE(sig.find("<think>:t "), std::string::npos) << sig;
    EXPECT_NE(sig.find("</think>:t "), std::string::npos) << sig;
    EXPECT_NE(sig.find("ok:rT <|im_end|>:tT /:t "), std::string::npos) << sig;
    EXPECT_NE(sig.find("hi:p <|im_end|>:t "), std::string::npos) << sig;
}

TEST(TokChatFormat, AutoNeedsAKnownTemplate) {
    auto tok = cuset::tokenizer_load(kGolden + "/gpt2");
    cuset::ChatFormatOptions o;
    try {
        cuset::ChatFormatter fmt(*tok, o, kGolden + "/gpt2");
        FAIL() << "auto on a tokenizer without chat_template must fail";
    } catch (const cuset::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("data.chat_format"), std::string::npos) << e.what();
    }
    EXPECT_EQ(cuset::chat_format_detect(kGolden + "/qwen25"), "chatml");
    EXPECT_EQ(cuset::chat_format_detect(kGolden + "/qwen3"), "qwen3");
    EXPECT_EQ(cuset::chat_format_detect(kGolden + "/deepseek"), "deepseek-coder");
    EXPECT_EQ(cuset::chat_format_detect(kGolden + "/seed"), "seed-coder");
}

// The formats are one table (chat_format.cpp): an unknown name's error lists every format of it,
// and docs/data.md's table of hand-written formats has one row per hand-written format of the
// table, in its order, and no other.
TEST(TokChatFormat, TheFormatsAreOneTableTheErrorsAndTheDocsList) {
    const std::vector<std::string> names = cuset::chat_format_names();
    ASSERT_FALSE(names.empty());
    EXPECT_EQ(names.front(), "template");
    auto tok = cuset::tokenizer_load(kGolden + "/gpt2");
    cuset::ChatFormatOptions o;
    o.format = "chatml2";
    try {
        cuset::ChatFormatter fmt(*tok, o, kGolden + "/gpt2");
        FAIL() << "an unknown format must fail";
    } catch (const cuset::UsageError& e) {
        for (const std::string& n : names) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("'chatml2'"), std::string::npos) << e.what();
    }
    const std::string docs = cuset::test::read_file(std::string(CUSET_SOURCE_DIR) + "/docs/data.md");
    const size_t from = docs.find("### Hand-written formats");
    ASSERT_NE(from, std::string::npos);
    const size_t table = docs.find("| format |", from);
    ASSERT_NE(table, std::string::npos);
    std::vector<std::string> rows;
    for (size_t at = docs.find('\n', table) + 1; at < docs.size() && docs[at] == '|'; at = docs.find('\n', at) + 1) {
        const size_t open = docs.find('`', at), close = docs.find('`', open + 1);
        if (docs.compare(at, 4, "|---") != 0 && open < docs.find('\n', at)) rows.push_back(docs.substr(open + 1, close - open - 1));
    }
    EXPECT_EQ(rows, cuset::chat_format_hand_written());
}

TEST(TokChatFormat, EmptyTrainableSetIsAnErrorNamingTheSample) {
    auto tok = cuset::tokenizer_load(kGolden + "/qwen25");
    cuset::ChatFormatOptions o;
    o.format = "chatml";
    cuset::ChatFormatter fmt(*tok, o, kGolden + "/qwen25");
    for (const cuset::Conversation& c :
         {cuset::Conversation{"sample-17", {{"user", "q"}, {"assistant", ""}}},
          cuset::Conversation{"sample-17", {{"user", "only a question"}}},
          cuset::Conversation{"sample-17", {{"user", "q"}, {"robot", "a"}}},
          cuset::Conversation{"sample-17", {{"user", "bad \xff byte"}, {"assistant", "a"}}}}) {
        try {
            fmt.format(c);
            FAIL() << "expected an InputError";
        } catch (const cuset::InputError& e) {
            EXPECT_NE(std::string(e.what()).find("sample-17"), std::string::npos) << e.what();
        }
    }
}

TEST(TokChatFormat, NoDoubleBos) {
    // llama3's post-processor adds <|begin_of_text|>; a custom prefix that already writes it must
    // not get a second one, and plain text gets exactly one.
    auto tok = cuset::tokenizer_load(kGolden + "/llama3");
    const int32_t bos = tok->token_to_id("<|begin_of_text|>");
    ASSERT_GE(bos, 0);
    cuset::Conversation c{"x", {{"user", "hi"}, {"assistant", "there"}}};
    for (std::string prefix : {"", "<|begin_of_text|>"}) {
        cuset::ChatFormatOptions o;
        o.format = "custom";
        o.templ.prefix = prefix;
        o.templ.end_of_turn = "<|eot_id|>";
        cuset::FormattedSample f = cuset::ChatFormatter(*tok, o, kGolden + "/llama3").format(c);
        ASSERT_GE(f.ids.size(), 2u);
        EXPECT_EQ(f.ids[0], bos) << "prefix '" << prefix << "'";
        EXPECT_NE(f.ids[1], bos) << "prefix '" << prefix << "'";
        EXPECT_EQ(std::count(f.ids.begin(), f.ids.end(), bos), 1);
        EXPECT_EQ(f.ids.back(), tok->token_to_id("<|eot_id|>"));
        EXPECT_EQ(f.trainable.back(), 1);
    }
    // DeepSeek's template writes the BOS text itself: one BOS, never two.
    auto ds = cuset::tokenizer_load(kGolden + "/deepseek");
    cuset::ChatFormatOptions o;
    o.format = "deepseek-coder";
    cuset::FormattedSample f = cuset::ChatFormatter(*ds, o, kGolden + "/deepseek").format(c);
    EXPECT_EQ(f.ids[0], ds->bos_id());
    EXPECT_EQ(std::count(f.ids.begin(), f.ids.end(), ds->bos_id()), 1);
}

TEST(TokChatFormat, PlainAndRawTextTrainOnResponseAndEos) {
    auto tok = cuset::tokenizer_load(kGolden + "/bytefallback");  // post-processor: <s> $A </s>
    cuset::ChatFormatOptions o;
    o.format = "plain";
    cuset::ChatFormatter fmt(*tok, o, kGolden + "/bytefallback");
    cuset::FormattedSample f = fmt.format({"p", {{"user", "question"}, {"assistant", "answer"}}});
    ASSERT_GE(f.ids.size(), 4u);
    EXPECT_EQ(f.ids.front(), tok->bos_id());
    EXPECT_EQ(f.ids.back(), tok->eos_id());
    EXPECT_EQ(f.trainable.back(), 1);
    EXPECT_EQ(f.trainable.front(), 0);
    for (size_t t = 0; t < f.ids.size(); ++t) {
        if (f.roles[t] == cuset::Role::kResponse) {
            EXPECT_EQ(f.trainable[t], 1);
            EXPECT_EQ(f.message[t], 1);
        }
        if (f.roles[t] == cuset::Role::kPrompt) {
            EXPECT_EQ(f.trainable[t], 0);
        }
    }
    cuset::FormattedSample raw = fmt.format({"r", {{"text", "just some text"}}});
    EXPECT_EQ(raw.ids.front(), tok->bos_id());
    EXPECT_EQ(raw.ids.back(), tok->eos_id());
    for (size_t t = 1; t < raw.ids.size(); ++t) EXPECT_EQ(raw.trainable[t], 1) << t;
}

TEST(TokChatFormat, SpansPointIntoTheMessageContent) {
    auto tok = cuset::tokenizer_load(kGolden + "/deepseek");
    cuset::ChatFormatOptions o;
    o.format = "deepseek-coder";
    cuset::ChatFormatter fmt(*tok, o, kGolden + "/deepseek");
    const std::string code = "__global__ void k(float* a) {\n    a[threadIdx.x] = 0.f;\n}\n";
    cuset::Conversation c{"s", {{"user", "kernel?"}, {"assistant", code}}};
    cuset::FormattedSample f = fmt.format(c);
    std::string rebuilt;
    int32_t last_end = 0;
    for (size_t t = 0; t < f.ids.size(); ++t) {
        if (f.message[t] != 1) continue;
        auto [b, e] = f.spans[t];
        ASSERT_LE(0, b);
        ASSERT_LE(b, e);
        ASSERT_LE(static_cast<size_t>(e), code.size());
        if (b >= last_end) rebuilt += code.substr(static_cast<size_t>(b), static_cast<size_t>(e - b));
        last_end = std::max(last_end, e);
    }
    EXPECT_EQ(rebuilt, code);  // the response tokens' spans tile the content
}

// ---------------------------------------------------------------- robustness

// Random texts from awkward pieces (and random bytes): no crash, spans inside the text, and
// byte-level tokenizers without a normalizer give the text back when decoding.
TEST(TokFuzz, RandomTextKeepsInvariants) {
    const std::vector<std::string> pool = {
        "a", "Z", " ", "  ", "\n", "\n\n", "\t", "\r\n", "'s", "'LL", "1", "42", "\xD9\xA3", "\xC3\xA9", "e\xCC\x81",
        "\xE4\xB8\xAD", "\xF0\x9F\x99\x82", "\xE2\x80\x8D", "\xC2\x85", "\xC2\xA0", "<|im_end|>", "<|im", "<think>",
        "<mask>", "[RS]", "hello", "<<<", ">>>", "__global__", "{", "}", ";", "#", "\xEF\xBD\x9C", "\xCC\xA3\xCC\x82",
        "\xE1\x84\x80\xE1\x85\xA1", "\xF0\x9D\x94\xB8", "<s>", "</s>", "\xE2\x80\xA8", "\x01"};
    std::mt19937 rng(1234);
    for (const std::string dir : {"qwen25", "deepseek", "seed", "llama3", "gpt2", "prefix", "bytefallback", "spm"}) {
        auto tok = cuset::tokenizer_load(kGolden + "/" + dir);
        const bool round_trip = dir == "deepseek" || dir == "seed" || dir == "llama3";
        for (int n = 0; n < 300; ++n) {
            std::string t;
            const int len = static_cast<int>(rng() % 40);
            for (int k = 0; k < len; ++k) t += pool[rng() % pool.size()];
            for (bool special : {false, true}) {
                cuset::Encoding e = tok->encode(t, special);
                ASSERT_EQ(e.ids.size(), e.offsets.size());
                for (size_t i = 0; i < e.ids.size(); ++i) {
                    EXPECT_FALSE(tok->id_to_token(e.ids[i]).empty()) << dir << " id " << e.ids[i];
                    EXPECT_LE(e.offsets[i].first, e.offsets[i].second) << dir << " \"" << show(t) << "\"";
                    EXPECT_LE(e.offsets[i].second, t.size()) << dir << " \"" << show(t) << "\"";
                }
                if (round_trip && !special) {
                    EXPECT_EQ(tok->decode(e.ids), t) << dir;
                }
            }
            std::string junk = t;
            if (!junk.empty()) junk[rng() % junk.size()] = static_cast<char>(0x80 | (rng() % 64));
            if (cuset::utf8_first_invalid(junk) >= 0) {
                EXPECT_THROW(tok->encode(junk), cuset::InputError);
                EXPECT_NO_THROW(tok->encode(cuset::utf8_sanitize(junk, true, "fuzz")));
            }
        }
    }
}

// ---------------------------------------------------------------- UTF-8 and errors

TEST(TokUtf8, SanitizeMatchesPythonReplace) {
    json fx = load_json(kGolden + "/utf8.json");
    for (const json& c : fx) {
        const std::string in = unhex(c["hex"].get<std::string>());
        EXPECT_EQ(hex(cuset::utf8_sanitize(in, true, "t")), c["replaced_hex"].get<std::string>()) << c["hex"];
        EXPECT_EQ(cuset::utf8_first_invalid(in) < 0, c["valid"].get<bool>()) << c["hex"];
        if (!c["valid"].get<bool>()) {
            try {
                cuset::utf8_sanitize(in, false, "data.jsonl:3");
                FAIL() << "expected InputError for " << c["hex"];
            } catch (const cuset::InputError& e) {
                EXPECT_NE(std::string(e.what()).find("data.jsonl:3"), std::string::npos);
            }
        }
    }
}

TEST(TokErrors, InvalidUtf8IsAnInputError) {
    auto tok = cuset::tokenizer_load(kGolden + "/qwen25");
    EXPECT_THROW(tok->encode("ok \xC3\x28 bad"), cuset::InputError);
    auto sp = cuset::tokenizer_load(kGolden + "/spm");
    EXPECT_THROW(sp->encode("\xE2\x82"), cuset::InputError);
}

TEST(TokErrors, UnsupportedComponentIsNamed) {
    std::string dir = scratch_dir("tok_unsupported");
    json j = load_json(kGolden + "/qwen25/tokenizer.json");
    j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}};
    write_file(dir + "/tokenizer.json", j.dump());
    try {
        cuset::tokenizer_load(dir);
        FAIL() << "expected InputError";
    } catch (const cuset::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("Metaspace"), std::string::npos) << e.what();
    }
    j = load_json(kGolden + "/qwen25/tokenizer.json");
    j["model"]["type"] = "WordPiece";
    write_file(dir + "/tokenizer.json", j.dump());
    EXPECT_THROW(cuset::tokenizer_load(dir), cuset::InputError);
    EXPECT_THROW(cuset::tokenizer_load(dir + "/nothing-here"), cuset::InputError);
}

TEST(TokErrors, SpecialTokensFromConfig) {
    auto tok = cuset::tokenizer_load(kGolden + "/qwen25");
    EXPECT_EQ(tok->bos_id(), -1);  // Qwen has no BOS
    EXPECT_EQ(tok->eos_id(), tok->token_to_id("<|im_end|>"));
    EXPECT_EQ(tok->pad_id(), tok->token_to_id("<|endoftext|>"));
    EXPECT_TRUE(tok->is_special(tok->eos_id()));
    EXPECT_FALSE(tok->is_special(tok->token_to_id("<think>")));
    EXPECT_EQ(tok->token_to_id("no such token"), -1);
    EXPECT_EQ(tok->id_to_token(tok->eos_id()), "<|im_end|>");
    auto ds = cuset::tokenizer_load(kGolden + "/deepseek/tokenizer.json");  // a file works too
    ASSERT_GE(ds->bos_id(), 0);
    EXPECT_EQ(ds->id_to_token(ds->bos_id()), "<\xEF\xBD\x9C" "begin\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>");
}

// ---------------------------------------------------------------- cuset-train tokenize

TEST(TokCli, JsonMatchesTheFixtures) {
    json fx = load_json(kGolden + "/qwen.json");
    const json& c = fx["cases"][60];
    std::string dir = scratch_dir("tok_cli");
    write_file(dir + "/in.txt", c["text"].get<std::string>());
    auto r = run_cuset("tokenize --tokenizer '" + kGolden + "/qwen25' --format json '" + dir + "/in.txt'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json out = json::parse(r.out);
    EXPECT_EQ(out["ids"].get<std::vector<int32_t>>(), c["ids"].get<std::vector<int32_t>>());
    std::vector<uint32_t> flat;
    for (const json& o : out["offsets"]) {
        flat.push_back(o[0]);
        flat.push_back(o[1]);
    }
    EXPECT_EQ(flat, c["offsets"].get<std::vector<uint32_t>>());
    EXPECT_EQ(out["tokens"].size(), out["ids"].size());
    EXPECT_EQ(out["pieces"].size(), out["ids"].size());

    write_file(dir + "/chat.jsonl",
               "{\"id\": \"a1\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, "
               "{\"role\": \"assistant\", \"content\": \"hello\"}]}\n");
    r = run_cuset("tokenize --tokenizer '" + kGolden + "/qwen25' --chat-format chatml --format json '" + dir +
                  "/chat.jsonl'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json chat = json::parse(r.out);
    EXPECT_EQ(chat["id"], "a1");
    EXPECT_EQ(chat["format"], "chatml");
    EXPECT_EQ(chat["roles"].size(), chat["ids"].size());
    EXPECT_EQ(chat["trainable"].size(), chat["ids"].size());
    std::string target;
    for (size_t t = 0; t < chat["ids"].size(); ++t)
        if (chat["trainable"][t] == 1) target += chat["pieces"][t].get<std::string>();
    EXPECT_EQ(target, "hello<|im_end|>") << r.out;

    r = run_cuset("tokenize --tokenizer '" + dir + "/missing' '" + dir + "/in.txt'");
    EXPECT_EQ(r.exit_code, 3) << r.err;
}

}  // namespace
