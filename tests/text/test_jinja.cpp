// The Jinja interpreter (text/jinja.h): a corpus of small templates rendered by jinja2 in
// transformers' chat-template environment (tests/golden/chat_template.py, jinja.json), the
// provenance of message bytes through the string operations that keep them (hand-worked
// offsets), {% generation %} ranges, and the one-line refusal of constructs outside the subset.
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/text/jinja.h"

namespace {

using cuset::jinja::Output;
using cuset::jinja::Template;
using cuset::jinja::Value;
using ojson = nlohmann::ordered_json;

const std::string kGolden = std::string(CUSET_TEST_WORK) + "/golden/chat_template";


ojson load(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error("missing fixture " + path + " (run the golden_chat_template test first)");
    std::stringstream ss;
    ss << f.rdbuf();
    return ojson::parse(ss.str());
}

Output render(const std::string& tmpl, const Value& ctx) { return Template(tmpl, "t.jinja").render(ctx); }

std::string error_of(const std::string& tmpl, const Value& ctx = Value::dict()) {
    try {
        Template(tmpl, "t.jinja").render(ctx);
    } catch (const cuset::InputError& e) {
        return e.what();
    }
    return "";
}

TEST(Jinja, RendersAsJinja2InTransformersEnvironment) {
    ojson fx = load(kGolden + "/jinja.json");
    size_t checked = 0;
    for (const ojson& c : fx) {
        const std::string t = c["template"].get<std::string>();
        Value ctx = cuset::jinja::value_from_json(c["context"]);
        if (c.contains("error")) {
            EXPECT_FALSE(error_of(t, ctx).empty()) << t << "\n jinja2 raised: " << c["error"];
        } else {
            std::string got;
            try {
                got = render(t, ctx).text;
            } catch (const std::exception& e) {
                ADD_FAILURE() << t << "\n raised: " << e.what();
                continue;
            }
            EXPECT_EQ(got, c["text"].get<std::string>()) << t;
        }
        ++checked;
    }
    EXPECT_GE(checked, 50u);
}

// Every chat template trl ships (72, of some 30 model families) renders as transformers renders it
// on each conversation, with the same {% generation %} byte ranges, and refuses what it refuses.
TEST(Jinja, EveryTrlTemplateRendersAsTransformers) {
    ojson fx = load(kGolden + "/trl_templates.json");
    const std::string dir = fx["dir"].get<std::string>();  // trl's chat_templates, where the golden script read them
    std::map<std::string, std::unique_ptr<Template>> parsed;
    size_t rendered = 0;
    for (const ojson& c : fx["cases"]) {
        const std::string name = c["template"].get<std::string>();
        auto& t = parsed[name];
        if (!t) {
            std::ifstream f(dir + "/" + name);
            ASSERT_TRUE(f.good()) << dir << "/" << name;
            std::stringstream ss;
            ss << f.rdbuf();
            t = std::make_unique<Template>(ss.str(), name);  // an unsupported construct fails the test here
        }
        Value ctx = cuset::jinja::value_from_json(c["context"]);
        const std::string where = name + " " + c["id"].get<std::string>();
        if (c.contains("error")) {
            EXPECT_THROW(t->render(ctx), cuset::InputError) << where << ": transformers raised " << c["error"];
            continue;
        }
        Output o = t->render(ctx);
        EXPECT_EQ(o.text, c["text"].get<std::string>()) << where;
        std::vector<std::pair<size_t, size_t>> gen;
        for (const ojson& g : c["generation"]) gen.push_back({g[0].get<size_t>(), g[1].get<size_t>()});
        EXPECT_EQ(o.generation, gen) << where;
        ++rendered;
    }
    EXPECT_GE(parsed.size(), 70u);
    EXPECT_GE(rendered, 600u);
}

// Bytes of a tagged string keep their source and offset through strip, split, slicing and
// concatenation; an operation that rewrites the text (upper) drops them.
TEST(Jinja, ProvenanceOfMessageBytes) {
    Value ctx = Value::dict();
    ctx.set("c", Value::tagged("  <think>\nr\n</think>\n\nanswer ", 7));
    Output o = render("[{{ c | trim }}]{{ c.split('</think>')[-1].lstrip('\\n') }}|{{ 'x' + c[2:9] }}|{{ c | upper }}", ctx);
    // "[" + "<think>\nr\n</think>\n\nanswer" + "]" + "answer " + "|x" + "<think>" + "|" + upper
    ASSERT_EQ(o.text.substr(0, 28), "[<think>\nr\n</think>\n\nanswer]");
    ASSERT_GE(o.spans.size(), 3u);
    EXPECT_EQ(o.spans[0].begin, 1u);
    EXPECT_EQ(o.spans[0].end, 27u);
    EXPECT_EQ(o.spans[0].source, 7);
    EXPECT_EQ(o.spans[0].offset, 2u);  // trim dropped two spaces
    EXPECT_EQ(o.spans[1].begin, 28u);  // "answer " after "</think>\n\n"
    EXPECT_EQ(o.spans[1].end, 35u);
    EXPECT_EQ(o.spans[1].offset, 22u);
    EXPECT_EQ(o.spans[2].begin, 37u);  // "<think>" after "|x"
    EXPECT_EQ(o.spans[2].end, 44u);
    EXPECT_EQ(o.spans[2].offset, 2u);
    EXPECT_EQ(o.spans.size(), 3u) << "upper() keeps no provenance";
}

TEST(Jinja, GenerationRanges) {
    Output o = render("a{% generation %}bc{% endgeneration %}d{% for i in [1, 2] %}{% generation %}{{ i }}{% endgeneration %}{% endfor %}",
                      Value::dict());
    EXPECT_EQ(o.text, "abcd12");
    ASSERT_EQ(o.generation.size(), 3u);
    EXPECT_EQ(o.generation[0], std::make_pair(size_t{1}, size_t{3}));
    EXPECT_EQ(o.generation[1], std::make_pair(size_t{4}, size_t{5}));
    EXPECT_EQ(o.generation[2], std::make_pair(size_t{5}, size_t{6}));
    EXPECT_TRUE(Template("{% generation %}x{% endgeneration %}", "t").has_generation());
    EXPECT_FALSE(Template("x", "t").has_generation());
}

// A construct outside the subset is refused when the template is parsed, with the template's
// name, the line and the construct.
TEST(Jinja, UnsupportedConstructNamesLineAndConstruct) {
    struct Case {
        std::string tmpl, line, what;
    };
    const Case cases[] = {
        {"a\n{% include 'other.jinja' %}", "t.jinja:2:", "{% include %}"},
        {"{% extends 'base' %}", "t.jinja:1:", "{% extends %}"},
        {"x\ny\n{{ m | wordcount }}", "t.jinja:3:", "filter 'wordcount'"},
        {"{% if x is divisible %}{% endif %}", "t.jinja:1:", "test 'divisible'"},
        {"\n{{ 'a {}'.format(1) }}", "t.jinja:2:", "method 'format()'"},
        {"{{ cycler(1, 2) }}", "t.jinja:1:", "unknown function 'cycler'"},
        {"{% call m() %}x{% endcall %}", "t.jinja:1:", "{% call %}"},
        {"{% filter upper %}x{% endfilter %}", "t.jinja:1:", "{% filter %}"},
        {"{% for x in y recursive %}{% endfor %}", "t.jinja:1:", "recursive"},
        {"{% macro m() %}{% generation %}x{% endgeneration %}{% endmacro %}", "t.jinja:1:", "generation"},
    };
    for (const Case& c : cases) {
        try {
            Template t(c.tmpl, "t.jinja");
            ADD_FAILURE() << "accepted: " << c.tmpl;
        } catch (const cuset::InputError& e) {
            const std::string msg = e.what();
            EXPECT_EQ(msg.rfind(c.line, 0), 0u) << msg;
            EXPECT_NE(msg.find("unsupported construct"), std::string::npos) << msg;
            EXPECT_NE(msg.find(c.what), std::string::npos) << msg;
            EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
        }
    }
}

TEST(Jinja, RuntimeErrorsNameTheLine) {
    EXPECT_EQ(error_of("a\n\n{{ raise_exception('roles must alternate') }}"), "t.jinja:3: raise_exception: roles must alternate");
    EXPECT_EQ(error_of("{{ x.y }}"), "t.jinja:1: 'x' is undefined");
    EXPECT_NE(error_of("{% for x in 3 %}{% endfor %}").find("not iterable"), std::string::npos);
    EXPECT_NE(error_of("{{ 'a' + 1 }}").find("unsupported operand"), std::string::npos);
    EXPECT_NE(error_of("{% if x %}").find("missing {% endif %}"), std::string::npos);
}

}  // namespace
