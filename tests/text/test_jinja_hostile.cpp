// Hostile chat templates (a template arrives with a model folder from a hub): each one that once
// crashed cuset (SIGFPE, a stack overflow), hung it, or grew it toward the machine's memory now ends
// in one InputError line naming the template and its line, within seconds and bounded memory; a
// stop request ends a long render; error messages are one clipped line whatever the template says.
#include <csignal>
#include <chrono>
#include <string>

#include <sys/resource.h>

#include <gtest/gtest.h>

#include "cuset/core/error.h"
#include "cuset/core/signals.h"
#include "cuset/text/jinja.h"

namespace {

using cuset::jinja::Template;
using cuset::jinja::Value;

std::string repeat(const std::string& s, size_t n) {
    std::string out;
    out.reserve(s.size() * n);
    for (size_t k = 0; k < n; ++k) out += s;
    return out;
}

struct Outcome {
    std::string error;  // the InputError's message; "" when it rendered
    double seconds = 0;
};

Outcome run(const std::string& tmpl) {
    Outcome o;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        Template t(tmpl, "hostile.jinja");
        t.render(Value::dict());
    } catch (const cuset::InputError& e) {
        o.error = e.what();
    }
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return o;
}

// Release builds end every case below in under 2.5 s (the slowest spend the 20M-step budget); the
// bound leaves room for sanitizer and debug builds, which are many times slower.
constexpr double kMaxSeconds = 60;

TEST(JinjaHostile, EachEndsInOneLineNamingTheTemplateLine) {
    struct Case {
        const char* what;
        std::string tmpl;
        std::string expect;  // a part of the message after "hostile.jinja:<line>: "
        int line = 1;
    };
    const Case cases[] = {
        {"INT64_MIN // -1 (was SIGFPE)", "{{ (-9223372036854775807 - 1) // -1 }}", "integer overflow"},
        {"2 ** 2**63-1 (was endless)", "{{ 2 ** 9223372036854775807 }}", "integer overflow"},
        {"100k nested parentheses (was SIGSEGV)", "{{ " + repeat("(", 100000) + "1" + repeat(")", 100000) + " }}",
         "nesting deeper than 256 levels"},
        {"100k nested if (was SIGSEGV)", repeat("{% if true %}", 100000) + "x" + repeat("{% endif %}", 100000),
         "nesting deeper than 256 levels"},
        {"a 100k-term + chain", "{{ 'a'" + repeat(" + 'a'", 100000) + " }}", "expression nested deeper than 256 levels"},
        {"a 100k-long filter chain", "{{ 'a'" + repeat("|trim", 100000) + " }}", "expression nested deeper than 256 levels"},
        {"two nested range(99999) loops (was endless)",
         "{% for i in range(99999) %}{% for j in range(99999) %}{{ loop.index }}{% endfor %}{% endfor %}",
         "rendering takes more than 20000000 steps"},
        {"a macro calling itself twice, 60 deep (was endless)",
         "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}",
         "rendering takes more than 20000000 steps"},
        {"endless macro recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "macro calls nest deeper than 200"},
        {"'a' * 10**10 (was bad_alloc)", "{{ 'a' * 10**10 }}", "is longer than 67108864"},
        {"indent(10**12) (was bad_alloc)", "{{ 'a\\nb' | indent(10**12) }}", "is longer than 67108864"},
        {"replace('', ...) (was bad_alloc)", "{% set s = 'ab' * 1000000 %}{{ s.replace('', s) }}", "is longer than 67108864"},
        {"tojson(indent=10**9) (was bad_alloc)", "{{ [[1]] | tojson(indent=10**9) }}", "is longer than 67108864"},
        {"a list doubled 60 times", "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
         "rendering makes more than 536870912 bytes"},
        {"[1] * 10**12", "{{ [1] * 10**12 }}", "rendering makes more than 536870912 bytes"},
        {"output over 64 MiB", "{% for i in range(99999) %}{% for j in range(99999) %}" + repeat("x", 64) + "{% endfor %}{% endfor %}",
         "is longer than 67108864"},
        {"'{:>1000000000}'.format(1)", "{{ '{:>1000000000}'.format(1) }}", "is longer than 67108864"},
        {"'%1000000000d' % 1", "{{ '%1000000000d' % 1 }}", "is longer than 67108864"},
        {"a list nested 99,999 deep, printed",
         "{% set ns = namespace(x=[]) %}{% for i in range(99999) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}",
         "maximum recursion depth exceeded"},
        {"a namespace holding itself, printed", "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}", "maximum recursion depth exceeded"},
        {"raise_exception('line\\n' * 200000)", "\n\n{{ raise_exception('line\\n' * 200000) }}", "raise_exception: line\\nline\\n", 3},
    };
    for (const Case& c : cases) {
        const Outcome o = run(c.tmpl);
        const std::string head = "hostile.jinja:" + std::to_string(c.line) + ": ";
        EXPECT_EQ(o.error.rfind(head, 0), 0u) << c.what << ": " << o.error;
        EXPECT_NE(o.error.find(c.expect), std::string::npos) << c.what << ": " << o.error;
        EXPECT_EQ(o.error.find('\n'), std::string::npos) << c.what << ": not one line";
        EXPECT_LE(o.error.size(), 400u) << c.what << ": not clipped";
        EXPECT_LT(o.seconds, kMaxSeconds) << c.what;
    }
    // The whole process stayed far from the machine's memory (ru_maxrss is in KiB).
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    EXPECT_LT(ru.ru_maxrss, 2L << 20) << "peak resident memory " << ru.ru_maxrss << " KiB";
}

// What these hostile shapes look like in Jinja2 itself, where it renders them: a 100k-term `~`
// chain is one flat node, indent(-1) indents by nothing, INT64_MIN % -1 is 0, 1 ** (2**63-1) is
// 1, and a list nested 99,999 deep is released without recursing.
TEST(JinjaHostile, BoundedShapesJinja2RendersStillRender) {
    EXPECT_EQ(Template("{{ 'a'" + repeat(" ~ 'a'", 100000) + " }}", "t").render(Value::dict()).text, repeat("a", 100001));
    EXPECT_EQ(Template("{{ 'a\nb' | indent(-1) }}", "t").render(Value::dict()).text, "a\nb");
    EXPECT_EQ(Template("{{ (-9223372036854775807 - 1) % -1 }}|{{ 1 ** 9223372036854775807 }}", "t").render(Value::dict()).text, "0|1");
    EXPECT_EQ(Template("{% set ns = namespace(x=[]) %}{% for i in range(99999) %}{% set ns.x = [ns.x] %}{% endfor %}"
                       "{{ ns.x|length }}",
                       "t")
                  .render(Value::dict())
                  .text,
              "1");
}

// Bounds are the caller's to choose: a tighter budget ends sooner, with the same message.
TEST(JinjaHostile, LimitsAreTheCallers) {
    cuset::jinja::RenderLimits l;
    l.max_steps = 1000;
    try {
        Template("{% for i in range(5000) %}x{% endfor %}", "t").render(Value::dict(), l);
        ADD_FAILURE() << "rendered past the step budget";
    } catch (const cuset::InputError& e) {
        EXPECT_EQ(std::string(e.what()), "t:1: rendering takes more than 1000 steps (cuset's bound for a chat template)");
    }
}

// A stop request (SIGINT/SIGTERM through core/signals.h) ends a render that would otherwise run to
// its step budget, as StoppedBySignal naming the template line.
TEST(JinjaHostile, StopRequestEndsTheRender) {
    cuset::StopSignalScope scope(cuset::StopSignalOptions{nullptr, nullptr, /*second_exits=*/false});
    std::raise(SIGTERM);
    ASSERT_TRUE(cuset::signals_stop_requested());
    const auto t0 = std::chrono::steady_clock::now();
    try {
        Template("\n{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}", "t").render(Value::dict());
        ADD_FAILURE() << "rendered to the end";
    } catch (const cuset::StoppedBySignal& e) {
        EXPECT_EQ(std::string(e.what()).rfind("t:2: rendering stopped by a signal", 0), 0u) << e.what();
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

// Untrusted text in an error (a raise_exception message, a name) reaches stderr as one line of
// valid UTF-8, clipped.
TEST(JinjaHostile, ErrorTextIsOneCleanLine) {
    const Outcome o = run("{{ raise_exception('a\\x00b\\r\\n\\t' + '\\xff' + 'é' * 1000) }}");
    EXPECT_EQ(o.error.rfind("hostile.jinja:1: raise_exception: a\\x00b\\r\\n\\t", 0), 0u) << o.error;
    EXPECT_EQ(o.error.find('\n'), std::string::npos);
    EXPECT_LE(o.error.size(), 400u);
    EXPECT_EQ(o.error.substr(o.error.size() - 3), "...");
}

}  // namespace
