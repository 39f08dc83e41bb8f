// The JSON and JSONL readers of core (json_io.h, input_file.h): hand-worked cases, and a seeded
// bad-input fuzz (random nesting, sizes and bytes) against independent expectations: nlohmann's
// own serialiser and parser for the texts, std::getline for the lines. A bounded number of cases,
// so that it runs in CI in a few seconds (ctest TIMEOUT in tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/json_io.h"
#include "test_util.h"

using cuset::InputError;
using cuset::json_depth_problem;
using cuset::json_parse;
using cuset::kJsonMaxDepth;
using nlohmann::json;

namespace {

std::string nested(size_t depth, char open = '[', char close = ']') {
    return std::string(depth, open) + std::string(depth, close);
}

// The message of the cuset::Error `f` throws ("" when it throws none); any other exception fails.
template <typename F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const cuset::Error& e) {
        return e.what();
    }
    return "";
}

// A random JSON value of exactly `depth` levels of arrays/objects (0 = a scalar), with strings
// of random bytes that include the characters the depth scan must not count: brackets, quotes,
// backslashes, NUL and invalid UTF-8 (dumped with replacement, so the text stays JSON).
json random_value(std::mt19937_64& g, size_t depth) {
    std::uniform_int_distribution<int> pick(0, 5);
    if (depth == 0) {
        switch (pick(g)) {
            case 0: return nullptr;
            case 1: return static_cast<int64_t>(g() % 2000) - 1000;
            case 2: return std::ldexp(static_cast<double>(g() % 1000), -3);
            case 3: return (g() & 1) != 0;
            default: {
                static const std::string kChars = "[]{}\"\\\n\t,:ab\x01\xc3\xa9";
                std::string s;
                const size_t n = g() % 12;
                for (size_t i = 0; i < n; ++i) s += kChars[g() % kChars.size()];
                return s;
            }
        }
    }
    const size_t n = 1 + g() % 3;
    const size_t deep = g() % n;  // the child that carries the full depth; the others stay shallow
    const size_t side = std::min<size_t>(depth, 3);
    if (g() & 1) {
        json a = json::array();
        for (size_t i = 0; i < n; ++i) a.push_back(random_value(g, i == deep ? depth - 1 : g() % side));
        return a;
    }
    json o = json::object();
    for (size_t i = 0; i < n; ++i)
        o["k" + std::to_string(i) + "[{\""] = random_value(g, i == deep ? depth - 1 : g() % side);
    return o;
}

std::string dump(const json& j, bool pretty) {
    return pretty ? j.dump(1, ' ', false, json::error_handler_t::replace) : j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

TEST(JsonDepth, HandWorkedCases) {
    EXPECT_EQ(json_depth_problem("[[1]]", 2), "");
    EXPECT_NE(json_depth_problem("[[1]]", 1), "");
    EXPECT_EQ(json_depth_problem("{\"a\": [{}]}", 3), "");
    EXPECT_NE(json_depth_problem("{\"a\": [{}]}", 2), "");
    // Brackets inside strings, also after an escaped quote, are not nesting.
    EXPECT_EQ(json_depth_problem("[\"[[[[{{{{\"]", 1), "");
    EXPECT_EQ(json_depth_problem("[\"\\\"[[[[\"]", 1), "");
    EXPECT_EQ(json_depth_problem("[\"\\\\\"]", 1), "");  // an escaped backslash does not escape the quote
    EXPECT_NE(json_depth_problem("[\"\\\\\", [[]]]", 2), "");
    // Sequential (not nested) brackets never add up.
    std::string flat;
    for (int i = 0; i < 10000; ++i) flat += "[],";
    EXPECT_EQ(json_depth_problem("[" + flat + "1]", 2), "");
    // Where: the column on one line, line and column on several (the opening bracket past the limit).
    EXPECT_EQ(json_depth_problem("[[[", 2), "JSON nested deeper than 2 levels at column 3 (the most cuset reads)");
    EXPECT_EQ(json_depth_problem("{\n \"a\":\n  [[", 2),
              "JSON nested deeper than 2 levels at line 3, column 4 (the most cuset reads)");
}

TEST(JsonParse, ErrorsAreOneLineCusetErrorsNamingWhere) {
    const std::string deep = nested(1000000);
    std::string msg = error_of([&] { json_parse(deep, "x.json"); });
    EXPECT_EQ(msg.rfind("x.json: JSON nested deeper than 128 levels at column 129", 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos);
    try {
        json_parse(deep, "key 'generate.stop'", cuset::ExitCode::kUsage);
        FAIL() << "no error";
    } catch (const cuset::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("key 'generate.stop'"), std::string::npos);
    }
    msg = error_of([&] { json_parse("{\"a\": ", "data.jsonl:7"); });
    EXPECT_EQ(msg.rfind("data.jsonl:7: not valid JSON (", 0), 0u) << msg;
    EXPECT_EQ(msg.find("[json.exception"), std::string::npos) << msg;
    // The limit itself is accepted, one more level is not.
    EXPECT_EQ(json_parse(nested(kJsonMaxDepth), "x"), json::parse(nested(kJsonMaxDepth)));
    EXPECT_NE(error_of([&] { json_parse(nested(kJsonMaxDepth + 1), "x"); }), "");
    EXPECT_NE(error_of([&] { json_parse(nested(kJsonMaxDepth + 1, '{', '}'), "x"); }), "");
}

// Random values of random depth, dumped by nlohmann (one line or indented): the parse gives the
// value back when it is at most kJsonMaxDepth deep, and a depth error otherwise.
// The typed reader: each field of the type asked, else one InputError naming where and the key.
TEST(JsonFields, TypedFieldsAndOneLineErrors) {
    const nlohmann::json j = nlohmann::json::parse(
        R"({"id": 7, "name": "x", "n": 3, "big": 18446744073709551615, "f": 1.5, "b": true, "nul": null, "s": "3"})");
    const cuset::JsonFields f(j, "gen.jsonl:4");
    EXPECT_EQ(f.id("id"), "7");
    EXPECT_EQ(f.id("name"), "x");
    EXPECT_EQ(f.string("name"), "x");
    EXPECT_EQ(f.integer("n"), 3);
    EXPECT_EQ(f.integer_or("absent", -1), -1);
    EXPECT_EQ(f.integer_or("nul", -1), -1);  // null is absent
    EXPECT_DOUBLE_EQ(f.number_or("f", 0), 1.5);
    EXPECT_DOUBLE_EQ(f.number_or("n", 0), 3.0);
    EXPECT_DOUBLE_EQ(f.number("f"), 1.5);
    EXPECT_TRUE(f.boolean_or("b", false));
    EXPECT_FALSE(f.opt_string("nul").has_value());
    EXPECT_FALSE(f.has("nul"));
    auto message = [&](auto&& read) -> std::string {
        try {
            read();
        } catch (const cuset::InputError& e) {
            return e.what();
        }
        return "no error";
    };
    EXPECT_EQ(message([&] { f.integer_or("s", 0); }), "gen.jsonl:4: \"s\" must be an integer");
    EXPECT_EQ(message([&] { f.integer_or("f", 0); }), "gen.jsonl:4: \"f\" must be an integer");
    EXPECT_EQ(message([&] { f.integer_or("big", 0); }), "gen.jsonl:4: \"big\" must be an integer of 64 bits");
    EXPECT_EQ(message([&] { f.string("n"); }), "gen.jsonl:4: \"n\" must be a string");
    EXPECT_EQ(message([&] { f.string("absent"); }), "gen.jsonl:4: \"absent\" must be a string");
    EXPECT_EQ(message([&] { f.id("f"); }), "gen.jsonl:4: \"f\" must be an integer or a string");
    EXPECT_EQ(message([&] { f.boolean_or("n", false); }), "gen.jsonl:4: \"n\" must be true or false");
    EXPECT_EQ(message([&] { f.number_or("name", 0); }), "gen.jsonl:4: \"name\" must be a number");
    EXPECT_EQ(message([&] { f.number("absent"); }), "gen.jsonl:4: \"absent\" must be a number");
    EXPECT_EQ(message([&] { f.number("nul"); }), "gen.jsonl:4: \"nul\" must be a number");
    EXPECT_EQ(message([&] { cuset::JsonFields(nlohmann::json::array(), "x.jsonl:1"); }), "x.jsonl:1: expected a JSON object");
}

TEST(JsonParseFuzz, RandomNestingRoundTripsOrIsRefused) {
    std::mt19937_64 g(20261202);
    for (int c = 0; c < 600; ++c) {
        const size_t depth = c % 3 == 0 ? kJsonMaxDepth - 2 + g() % 5 : g() % 40;
        const json v = random_value(g, depth);
        const std::string text = dump(v, c % 2 == 0);
        const std::string msg = error_of([&] {
            const json back = json_parse(text, "f.json");
            // Equal to nlohmann's own reading of the text (the value itself unless replaced bytes).
            EXPECT_EQ(back, json::parse(text)) << "case " << c;
        });
        if (depth <= kJsonMaxDepth) EXPECT_EQ(msg, "") << "case " << c << " depth " << depth;
        else EXPECT_NE(msg.find("f.json: JSON nested deeper than 128 levels"), std::string::npos) << msg;
    }
}

// Random byte damage (flips, truncations, insertions of brackets, quotes and NULs) of valid texts:
// the result is nlohmann's parse exactly when the depth scan passes, and never anything but a
// cuset::Error otherwise (no other exception, no crash), whatever the nesting.
TEST(JsonParseFuzz, DamagedTextsParseAsNlohmannOrFailAsInputErrors) {
    std::mt19937_64 g(7);
    const std::string kBytes = std::string("[]{}\",:\\\0\n x1e-", 16);
    size_t refused = 0, parsed = 0;
    for (int c = 0; c < 1500; ++c) {
        std::string text = dump(random_value(g, g() % (c % 5 == 0 ? 400 : 20)), c % 2 == 0);
        const int edits = 1 + static_cast<int>(g() % 4);
        for (int e = 0; e < edits && !text.empty(); ++e) {
            const size_t at = g() % text.size();
            switch (g() % 3) {
                case 0: text[at] = kBytes[g() % kBytes.size()]; break;
                case 1: text.resize(at); break;
                default: text.insert(at, std::string(1 + g() % 300, kBytes[g() % 4])); break;
            }
        }
        const bool shallow = json_depth_problem(text).empty();
        bool reference_ok = false;
        json reference;
        if (shallow) {
            try {
                reference = json::parse(text);
                reference_ok = true;
            } catch (const json::exception&) {
            }
        }
        try {
            const json j = json_parse(text, "d.jsonl:1");
            ASSERT_TRUE(reference_ok) << "case " << c << " parsed although nlohmann refuses it";
            EXPECT_EQ(j, reference) << "case " << c;
            ++parsed;
        } catch (const InputError& e) {
            EXPECT_FALSE(reference_ok) << "case " << c << ": " << e.what();
            EXPECT_EQ(std::string(e.what()).rfind("d.jsonl:1: ", 0), 0u) << e.what();
            EXPECT_LT(std::string(e.what()).size(), 600u);
            ++refused;
        }
    }
    EXPECT_GT(parsed, 0u);  // both outcomes were exercised
    EXPECT_GT(refused, 0u);
}

// ---------------------------------------------------------------- input files and lines

namespace {

std::vector<std::string> getline_lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

std::vector<std::string> reader_lines(const std::string& path, size_t max_line) {
    cuset::LineReader r(path, "test file", max_line);
    std::vector<std::string> out;
    for (std::string l; r.next(l);) {
        out.push_back(l);
        EXPECT_EQ(r.line_no(), static_cast<int64_t>(out.size()));
    }
    return out;
}

}  // namespace

// Random files (line lengths across the reader's 64 KiB buffer, CR, NUL, no final newline): the
// lines are std::getline's; with a bound, a longer line is an error naming the file and its line.
TEST(LineReaderFuzz, LinesAreGetlinesAndLongLinesAreRefused) {
    std::mt19937_64 g(11);
    const std::string dir = cuset::test::scratch_dir("json-io-lines");
    for (int c = 0; c < 60; ++c) {
        std::string text;
        const size_t n_lines = g() % 8;
        size_t longest = 0;
        for (size_t i = 0; i < n_lines; ++i) {
            const size_t len = g() % 4 == 0 ? g() % 200000 : g() % 50;
            std::string line(len, 'a');
            for (char& ch : line) ch = static_cast<char>(" \r\0x{\"\t"[g() % 7]);
            text += line;
            longest = std::max(longest, len);
            if (i + 1 < n_lines || g() % 2) text += '\n';
        }
        const std::string path = dir + "/f" + std::to_string(c) + ".jsonl";
        cuset::test::write_file(path, text);
        EXPECT_EQ(reader_lines(path, cuset::kMaxRecordBytes), getline_lines(text)) << "case " << c;
        if (longest > 10) {
            const std::vector<std::string> expect = getline_lines(text);
            size_t first_long = 0;
            while (expect[first_long].size() <= longest / 2) ++first_long;
            std::string msg = error_of([&] { reader_lines(path, longest / 2); });
            EXPECT_EQ(msg.rfind(path + ":" + std::to_string(first_long + 1) + ": a line longer than " +
                                    std::to_string(longest / 2) + " bytes", 0),
                      0u)
                << msg;
        }
    }
}

TEST(InputFile, FifosDevicesAndFoldersAreRefusedWithoutBlocking) {
    const std::string dir = cuset::test::scratch_dir("json-io-kinds");
    const std::string fifo = dir + "/metrics.jsonl";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto t0 = std::chrono::steady_clock::now();
    struct Case {
        std::string path, kind;
    };
    for (const Case& k : {Case{fifo, "a FIFO"}, Case{"/dev/zero", "a character device"}, Case{dir, "a folder"}}) {
        std::string msg = error_of([&] { cuset::LineReader r(k.path, "metrics file"); });
        EXPECT_EQ(msg, "metrics file '" + k.path + "' is " + k.kind + ", not a regular file; give the file itself");
        msg = error_of([&] { cuset::read_input_file(k.path, "summary"); });
        EXPECT_NE(msg.find("is " + k.kind), std::string::npos) << msg;
        msg = error_of([&] { cuset::require_regular_file(k.path, "x"); });
        EXPECT_NE(msg.find("is " + k.kind), std::string::npos) << msg;
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
    // A missing file: "cannot read", naming it; require_regular_file leaves it to the caller.
    EXPECT_NE(error_of([&] { cuset::read_input_file(dir + "/absent", "tasks file"); })
                  .find("cannot read tasks file '" + dir + "/absent'"),
              std::string::npos);
    EXPECT_EQ(error_of([&] { cuset::require_regular_file(dir + "/absent", "x"); }), "");
    // A size bound on whole files.
    cuset::test::write_file(dir + "/big.json", std::string(1000, ' '));
    EXPECT_NE(error_of([&] { cuset::read_input_file(dir + "/big.json", "x", 999); }).find("1000 bytes"), std::string::npos);
    EXPECT_EQ(cuset::read_input_file(dir + "/big.json", "x", 1000).size(), 1000u);
}
