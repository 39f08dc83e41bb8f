// The Jinja interpreter (text/jinja.h): a corpus of small templates rendered by jinja2 in
// transformers' chat-template environment (tests/golden/chat_template.py, jinja.json), the
// provenance of message bytes through the string operations that keep them (hand-worked
// offsets), {% generation %} ranges, and the one-line refusal of constructs outside the subset.
#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/text/jinja.h"
#include "test_util.h"

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

// groupby and pprint, from the same corpus (the values jinja2 rendered): groupby's (grouper, list)
// tuples sorted by key, with dotted and integer attribute paths, default, case folding, the fields
// as attributes and the errors; pprint as pprint.pformat (dicts by sorted key, lines broken at 80
// code points, long strings cut at spaces, a groupby item written by its own repr).
// The filters are one table: each of its names is a filter Jinja2 has, and Jinja2's others are
// exactly the ones docs/data.md says cuset does not implement; one of those, run, fails naming it.
TEST(Jinja, FiltersAreOneTableAndTheDocsListTheRest) {
    const std::vector<std::string> ours = cuset::jinja::filter_names();
    std::vector<std::string> missing = cuset::jinja::unimplemented_jinja2_filters();
    EXPECT_EQ(ours.size() + missing.size(), 54u) << "Jinja2 3.1 has 53 builtin filters; transformers adds tojson";
    for (const std::string& f : ours) EXPECT_EQ(std::count(ours.begin(), ours.end(), f), 1) << f;
    const std::string docs = cuset::test::read_file(std::string(CUSET_SOURCE_DIR) + "/docs/data.md");
    const std::string lead = "Jinja2 filters cuset does not implement (";
    const size_t from = docs.find(lead);
    ASSERT_NE(from, std::string::npos);
    const size_t to = docs.find(')', from);
    std::vector<std::string> listed;
    for (size_t at = docs.find('`', from); at < to; at = docs.find('`', at + 1)) {
        const size_t close = docs.find('`', at + 1);
        listed.push_back(docs.substr(at + 1, close - at - 1));
        at = close;
    }
    std::sort(listed.begin(), listed.end());
    std::sort(missing.begin(), missing.end());
    EXPECT_EQ(listed, missing);
    for (const std::string& f : missing) {
        cuset::jinja::Template t("{% if x %}{{ 'a' | " + f + " }}{% endif %}", "t.jinja");
        try {
            t.render(cuset::jinja::value_from_json(nlohmann::ordered_json{{"x", true}}));
            ADD_FAILURE() << f << " rendered";
        } catch (const cuset::InputError& e) {
            EXPECT_NE(std::string(e.what()).find("filter '" + f + "'"), std::string::npos) << e.what();
        }
    }
}

TEST(Jinja, GroupbyAndPprintAsJinja2) {
    ojson fx = load(kGolden + "/jinja.json");
    size_t groupby = 0, pprint = 0;
    for (const ojson& c : fx) {
        const std::string t = c["template"].get<std::string>();
        const bool g = t.find("groupby") != std::string::npos, p = t.find("pprint") != std::string::npos;
        if (!g && !p) continue;
        Value ctx = cuset::jinja::value_from_json(c["context"]);
        if (c.contains("error")) {
            EXPECT_FALSE(error_of(t, ctx).empty()) << t << "\n jinja2 raised: " << c["error"];
        } else {
            try {
                EXPECT_EQ(render(t, ctx).text, c["text"].get<std::string>()) << t;
            } catch (const std::exception& e) {
                ADD_FAILURE() << t << "\n raised: " << e.what();
            }
        }
        groupby += g;
        pprint += p;
    }
    EXPECT_GE(groupby, 9u);
    EXPECT_GE(pprint, 4u);
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

// What Jinja2 refuses when it compiles a template is refused when the template is loaded, with the
// template's name, the line and the reason, on one line: a syntax error, an unknown tag, a filter or
// test of no known name outside a conditional, `break` outside a loop.
TEST(Jinja, LoadTimeRefusalsNameLineAndReason) {
    struct Case {
        std::string tmpl, line, what;
    };
    const Case cases[] = {
        {"a\n{% do x %}", "t.jinja:2:", "unknown tag 'do'"},
        {"x\ny\n{{ m | from_json }}", "t.jinja:3:", "no filter named 'from_json'"},
        {"{% for m in messages %}\n{{ m | fromjson }}{% endfor %}", "t.jinja:2:", "no filter named 'fromjson'"},
        {"{% if false %}{% for m in x %}{{ m | fromjson }}{% endfor %}{% endif %}", "t.jinja:1:", "no filter named 'fromjson'"},
        {"{{ x is divisible }}", "t.jinja:1:", "no test named 'divisible'"},
        {"\n\n{% break %}", "t.jinja:3:", "'break' outside of a loop"},
        {"{% for x in y %}{% macro m() %}{% continue %}{% endmacro %}{% endfor %}", "t.jinja:1:", "'continue' outside of a loop"},
        {"{% macro m() %}x{% endmacro m %}", "t.jinja:1:", "expected the end of the tag"},
        {"{% macro m() %}{% generation %}x{% endgeneration %}{% endmacro %}", "t.jinja:1:", "generation"},
        {"{{ 99999999999999999999 }}", "t.jinja:1:", "out of cuset's 64-bit range"},
        {"{{ 'a' 'b }}", "t.jinja:1:", "unterminated string literal"},
    };
    for (const Case& c : cases) {
        try {
            Template t(c.tmpl, "t.jinja");
            ADD_FAILURE() << "accepted: " << c.tmpl;
        } catch (const cuset::InputError& e) {
            const std::string msg = e.what();
            EXPECT_EQ(msg.rfind(c.line, 0), 0u) << msg;
            EXPECT_NE(msg.find(c.what), std::string::npos) << msg;
            EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
        }
    }
}

// As in Jinja2, a name looked up while rendering is an error only when it is evaluated: the
// filters, methods and functions of real templates in branches not taken (DeepSeek-V3.2's
// from_json, Step-3.5's fromjson, Kimi-K2's .append(), Hunyuan's .update(), granite vision's
// .index(), Apertus' str()), an {% include %}; reached, each names the template line.
TEST(Jinja, LookupIsLazy) {
    const std::string not_taken =
        "{% if false %}{{ x|from_json }}{{ x|fromjson }}{{ l.append(1) }}{{ d.update({}) }}{{ l.index(1) }}{{ str(1) }}"
        "{{ x is nosuchtest }}{% include 'tools.jinja' %}{% endif %}ok{{ 5|nosuch if false }}";
    EXPECT_EQ(render(not_taken, Value::dict()).text, "ok");
    const std::pair<std::string, std::string> taken[] = {
        {"\n{% if true %}{{ 'x'|from_json }}{% endif %}", "t.jinja:2: No filter named 'from_json'."},
        {"{% set l = [1] %}\n\n{{ l.append(2) }}", "t.jinja:3: access to attribute 'append' of 'list' object is unsafe"},
        {"{{ {}.update({'a': 1}) }}", "t.jinja:1: access to attribute 'update' of 'dict' object is unsafe"},
        {"{{ [1, 2].index(3) }}", "t.jinja:1: 3 is not in list"},
        {"{{ str(1) }}", "t.jinja:1: 'str' is undefined"},
        {"{% if true %}\n{% include 'tools.jinja' %}{% endif %}", "t.jinja:2: {% include %}: no loader for this environment specified"},
        {"{% if x is defined %}{{ x is nosuchtest }}{% endif %}", "t.jinja:1: No test named 'nosuchtest'."},
        {"{{ 'x'.encode() }}", "t.jinja:1: unsupported construct: str.encode()"},
        {"{% if true %}{{ 'a b'|wordwrap(1) }}{% endif %}", "t.jinja:1: unsupported construct: filter 'wordwrap'"},
    };
    Value ctx = Value::dict();
    ctx.set("x", Value::integer(1));
    for (const auto& [tmpl, want] : taken) {
        const std::string got = error_of(tmpl, ctx);
        EXPECT_EQ(got.substr(0, want.size()), want) << tmpl;
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
