// The configuration engine: a schema of typed keys, read from YAML (errors with file:line:column)
// and from `--set key=value` overrides, with type, range and choice checks, the closest key for an
// unknown one, printing as YAML and a hash. It knows no key: the application hands it the schema
// (app/config_schema.h) and the object the keys fill.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <variant>
#include <vector>

namespace cuset {

// What a key's text must be. kEnum: one of the key's choices.
enum class ConfigKind { kBool, kInt, kDouble, kString, kEnum };

// A key's value as the engine reads, prints and hashes it: bool (kBool), int64_t (kInt), double
// (kDouble), std::string (kString, and the choice's name for kEnum).
using ConfigValue = std::variant<bool, int64_t, double, std::string>;

// One key of a schema: its path, what it accepts, its default and help, and the member it fills in
// the configuration object (`root`: the schema user's type, which only `get` and `set` know).
struct ConfigKey {
    std::string path;  // "section.sub.key"
    ConfigKind kind = ConfigKind::kString;
    ConfigValue default_value;
    double lo = -std::numeric_limits<double>::infinity();  // kInt, kDouble
    double hi = std::numeric_limits<double>::infinity();
    std::vector<std::string> choices;  // kEnum
    bool hashed = true;                // part of ConfigSchema::hash()
    std::string hashed_while;          // a kBool key: this one is hashed only while that one is true
    std::string help;
    std::function<ConfigValue(const void* root)> get;
    std::function<void(void* root, const ConfigValue& value)> set;
};

// One `--set key.path=value` override, applied after the file.
struct Override {
    std::string key;
    std::string value;
};

// Parses "a.b.c=value"; throws UsageError if there is no '='.
Override override_parse(const std::string& arg);

// The keys of a configuration, in the order they are printed. A section with a boolean key
// `enabled` also takes a boolean for itself (`sandbox: off` sets sandbox.enabled).
class ConfigSchema {
public:
    // Appends a key (its path must be new); the reference is valid until the next add().
    ConfigKey& add(ConfigKey key);

    const std::vector<ConfigKey>& keys() const { return keys_; }
    const ConfigKey* find(const std::string& path) const;
    // True when `prefix` names a section ("objective" of "objective.method").
    bool is_section(const std::string& prefix) const;

    // Every key of `root` set to its default.
    void set_defaults(void* root) const;
    // Reads `file` (empty: none) into `root`, then the overrides in order. Throws UsageError with
    // file:line:column (or --set) and the key path on any problem: unreadable or malformed file,
    // unknown key (with the closest one), wrong type, out of range, not a choice.
    void read(void* root, const std::string& file, const std::vector<Override>& overrides) const;
    // Every key as YAML, in schema order, with its help as a comment.
    std::string to_yaml(const void* root) const;
    // FNV-1a 64 of "path=value\n" of the hashed keys, 16 hex digits.
    std::string hash(const void* root) const;
    // The key closest to `key` by edit distance ("" if none is reasonably close).
    std::string closest_key(const std::string& key) const;

private:
    std::vector<ConfigKey> keys_;
};

}  // namespace cuset
