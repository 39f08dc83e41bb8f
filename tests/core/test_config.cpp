// The configuration engine (core/config.h) over a schema of its own: defaults, a file and --set
// overrides, the type, range and choice checks with their positions, the closest key, a section's
// switch, printing and hashing. The application's schema is tested in tests/app/test_config_schema.cpp.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

#include "cuset/core/config.h"
#include "cuset/core/error.h"
#include "test_util.h"

using cuset::ConfigKey;
using cuset::ConfigKind;
using cuset::ConfigSchema;
using cuset::ConfigValue;
using cuset::UsageError;

namespace {

struct Toy {
    int64_t steps = 0;
    double rate = 0;
    bool fast = false;
    std::string name;
    std::string mode;
    bool cache_enabled = false;
    int64_t cache_size = 0;
    std::string note;
};

template <class T>
ConfigKey& add(ConfigSchema& s, const std::string& path, ConfigKind kind, T Toy::*member, ConfigValue fallback,
               const std::string& help) {
    ConfigKey k;
    k.path = path;
    k.kind = kind;
    k.default_value = std::move(fallback);
    k.help = help;
    k.get = [member](const void* root) -> ConfigValue { return static_cast<const Toy*>(root)->*member; };
    k.set = [member](void* root, const ConfigValue& v) { static_cast<Toy*>(root)->*member = std::get<T>(v); };
    return s.add(std::move(k));
}

const ConfigSchema& toy_schema() {
    static const ConfigSchema s = [] {
        ConfigSchema t;
        ConfigKey& steps = add(t, "run.steps", ConfigKind::kInt, &Toy::steps, int64_t{10}, "optimizer steps");
        steps.lo = 1;
        steps.hi = 1000;
        ConfigKey& rate = add(t, "run.rate", ConfigKind::kDouble, &Toy::rate, 0.5, "a rate");
        rate.lo = 0;
        rate.hi = 1;
        add(t, "run.fast", ConfigKind::kBool, &Toy::fast, false, "go fast");
        add(t, "out.name", ConfigKind::kString, &Toy::name, std::string("x"), "a name");
        add(t, "out.mode", ConfigKind::kEnum, &Toy::mode, std::string("plain"), "how").choices = {"plain", "fancy"};
        add(t, "out.cache.enabled", ConfigKind::kBool, &Toy::cache_enabled, true, "cache on");
        add(t, "out.cache.size", ConfigKind::kInt, &Toy::cache_size, int64_t{4}, "cache size").hashed_while =
            "out.cache.enabled";
        add(t, "out.note", ConfigKind::kString, &Toy::note, std::string(""), "not hashed").hashed = false;
        return t;
    }();
    return s;
}

std::string write_yaml(const std::string& text) {
    static int calls = 0;
    std::string dir = cuset::test::scratch_dir("config-engine-" + std::to_string(::getpid()) + "-" + std::to_string(calls++));
    cuset::test::write_file(dir + "/t.yaml", text);
    return dir + "/t.yaml";
}

Toy read(const std::string& text, const std::vector<cuset::Override>& sets = {}) {
    Toy t;
    toy_schema().set_defaults(&t);
    toy_schema().read(&t, text.empty() ? "" : write_yaml(text), sets);
    return t;
}

std::string read_error(const std::string& text, const std::vector<cuset::Override>& sets = {}) {
    try {
        read(text, sets);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(ConfigEngine, DefaultsFileAndOverridesInOrder) {
    Toy d = read("");
    EXPECT_EQ(d.steps, 10);
    EXPECT_EQ(d.rate, 0.5);
    EXPECT_EQ(d.name, "x");
    EXPECT_TRUE(d.cache_enabled);
    Toy t = read("run:\n  steps: 20\n  fast: yes\nout:\n  mode: fancy\n  cache: off\n",
                 {cuset::override_parse("run.steps=30"), cuset::override_parse("out.name='a=b'"),
                  cuset::override_parse("run.steps=40")});
    EXPECT_EQ(t.steps, 40);
    EXPECT_TRUE(t.fast);
    EXPECT_EQ(t.mode, "fancy");
    EXPECT_FALSE(t.cache_enabled);  // a section's switch
    EXPECT_EQ(t.name, "a=b");
}

TEST(ConfigEngine, BadValuesNameTheKeyAndWhere) {
    std::string e = read_error("run:\n  steps: many\n");
    EXPECT_NE(e.find("t.yaml:2:10: key 'run.steps' expects an integer in [1, 1e+03], got 'many'"), std::string::npos) << e;
    e = read_error("run:\n  rate: 2\n");
    EXPECT_NE(e.find("key 'run.rate' = 2 is out of range [0, 1]"), std::string::npos) << e;
    e = read_error("out:\n  mode: odd\n");
    EXPECT_NE(e.find("expects one of plain, fancy"), std::string::npos) << e;
    e = read_error("", {cuset::override_parse("run.fast=maybe")});
    EXPECT_NE(e.find("--set run.fast: key 'run.fast' expects a boolean"), std::string::npos) << e;
    e = read_error("", {cuset::override_parse("out=1")});
    EXPECT_NE(e.find("'out' is a section, not a key"), std::string::npos) << e;
    e = read_error("- 1\n");
    EXPECT_NE(e.find("the top level must be a mapping of sections (run:, out:, ...)"), std::string::npos) << e;
    EXPECT_THROW(cuset::override_parse("no-equals"), UsageError);
}

TEST(ConfigEngine, UnknownKeysGetTheClosestOne) {
    std::string e = read_error("run:\n  stesp: 3\n");
    EXPECT_NE(e.find("t.yaml:2:3: unknown key 'run.stesp' (did you mean 'run.steps'?)"), std::string::npos) << e;
    e = read_error("rnu:\n  rate: 0.1\n");
    EXPECT_NE(e.find("unknown key 'rnu.rate' (did you mean 'run.rate'?)"), std::string::npos) << e;
    EXPECT_EQ(toy_schema().closest_key("out.cache.sise"), "out.cache.size");
    EXPECT_EQ(toy_schema().closest_key("something.else.entirely"), "");
}

TEST(ConfigEngine, PrintsEveryKeyWithItsHelp) {
    Toy t = read("");
    EXPECT_EQ(toy_schema().to_yaml(&t),
              "run:\n"
              "  steps: 10                                     # optimizer steps\n"
              "  rate: 0.5                                     # a rate\n"
              "  fast: false                                   # go fast\n"
              "out:\n"
              "  name: \"x\"                                     # a name\n"
              "  mode: \"plain\"                                 # how\n"
              "  cache:\n"
              "    enabled: true                               # cache on\n"
              "    size: 4                                     # cache size\n"
              "  note: \"\"                                      # not hashed\n");
}

TEST(ConfigEngine, HashSkipsUnhashedKeysAndSwitchedOffOnes) {
    const ConfigSchema& s = toy_schema();
    Toy a = read(""), b = read("", {cuset::override_parse("out.note=hello")});
    EXPECT_EQ(s.hash(&a), s.hash(&b));
    Toy c = read("", {cuset::override_parse("out.cache.size=5")});
    EXPECT_NE(s.hash(&a), s.hash(&c));
    Toy off4 = read("", {cuset::override_parse("out.cache.enabled=false")});
    Toy off5 = read("", {cuset::override_parse("out.cache.enabled=false"), cuset::override_parse("out.cache.size=5")});
    EXPECT_EQ(s.hash(&off4), s.hash(&off5));
    EXPECT_EQ(s.hash(&a).size(), 16u);
}
