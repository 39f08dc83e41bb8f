// The configuration engine over a schema it is given: YAML parsing with positions, `--set`
// overrides, type/range/choice checks, unknown-key suggestions, printing and hashing.
// It knows no key and interprets no value; the schema and its cross-key rules are the
// application's (app/config_schema.cpp).
#include "cuset/core/config.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "cuset/core/error.h"
#include "cuset/core/input_file.h"

namespace cuset {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string kind_name(const ConfigKey& k) {
    switch (k.kind) {
        case ConfigKind::kBool: return "a boolean (true/false)";
        case ConfigKind::kInt: return "an integer";
        case ConfigKind::kDouble: return "a number";
        case ConfigKind::kString: return "a string";
        case ConfigKind::kEnum: {
            std::string s = "one of ";
            for (size_t i = 0; i < k.choices.size(); ++i) s += (i ? ", " : "") + k.choices[i];
            return s;
        }
    }
    return "?";
}

std::string format_number(double v) {
    std::ostringstream os;
    os << std::setprecision(17) << v;
    double back = 0;
    std::istringstream(os.str()) >> back;
    // Prefer the shortest representation that round-trips.
    for (int p = 1; p <= 17; ++p) {
        std::ostringstream s;
        s << std::setprecision(p) << v;
        std::istringstream(s.str()) >> back;
        if (back == v) return s.str();
    }
    return os.str();
}

std::string range_text(const ConfigKey& k) {
    std::string lo = std::isinf(k.lo) ? "-inf" : format_number(k.lo);
    std::string hi = std::isinf(k.hi) ? "inf" : format_number(k.hi);
    return "[" + lo + ", " + hi + "]";
}

// What a number key accepts, for messages: " in [0, 1]", " >= 0", " <= 5" or "" (no printed "inf").
std::string bounds_text(const ConfigKey& k) {
    if (!std::isinf(k.lo) && !std::isinf(k.hi)) return " in " + range_text(k);
    if (!std::isinf(k.lo)) return " >= " + format_number(k.lo);
    if (!std::isinf(k.hi)) return " <= " + format_number(k.hi);
    return "";
}

// Where a value came from, for error messages: "file.yaml:12:5" or "--set".
struct Origin {
    std::string where;
};

[[noreturn]] void fail(const Origin& o, const std::string& msg) {
    throw UsageError("config error: " + o.where + ": " + msg);
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// Assigns a scalar text to a key after checking its type and range.
void assign(void* root, const ConfigKey& k, const std::string& text, const Origin& o) {
    const std::string key = "'" + k.path + "'";
    auto bad = [&](const std::string& extra) {
        fail(o, "key " + key + " expects " + kind_name(k) + extra + ", got '" + quote_bounded(text) + "'");
    };
    switch (k.kind) {
        case ConfigKind::kBool: {
            std::string v = lower(text);
            bool b;
            if (v == "true" || v == "yes" || v == "on")
                b = true;
            else if (v == "false" || v == "no" || v == "off")
                b = false;
            else
                bad("");
            k.set(root, b);
            return;
        }
        case ConfigKind::kInt: {
            size_t pos = 0;
            long long v = 0;
            try {
                v = std::stoll(text, &pos, 10);
            } catch (const std::exception&) {
                bad(bounds_text(k));
            }
            if (pos != text.size()) bad(bounds_text(k));
            if (double(v) < k.lo || double(v) > k.hi)
                fail(o, "key " + key + " = " + quote_bounded(text) + " is out of range " + range_text(k));
            k.set(root, static_cast<int64_t>(v));
            return;
        }
        case ConfigKind::kDouble: {
            size_t pos = 0;
            double v = 0;
            const std::string t = lower(text);
            if (t == ".inf" || t == "+.inf" || t == "-.inf" || t == ".nan") {  // YAML's infinities and NaN
                v = NAN;
                pos = text.size();
            } else {
                try {
                    v = std::stod(text, &pos);
                } catch (const std::out_of_range&) {  // 1e999 is inf, 1e-999 is 0
                    char* end = nullptr;
                    v = std::strtod(text.c_str(), &end);
                    pos = static_cast<size_t>(end - text.c_str());
                } catch (const std::exception&) {
                    bad(bounds_text(k));
                }
            }
            if (pos != text.size()) bad(bounds_text(k));
            if (!std::isfinite(v))
                fail(o, "key " + key + " must be a finite number" + bounds_text(k) + ", got '" + quote_bounded(text) + "'");
            if (v < k.lo || v > k.hi)
                fail(o, "key " + key + " = " + quote_bounded(text) + " is out of range " + range_text(k));
            k.set(root, v);
            return;
        }
        case ConfigKind::kEnum:
            if (std::find(k.choices.begin(), k.choices.end(), text) == k.choices.end()) bad("");
            k.set(root, text);
            return;
        case ConfigKind::kString:
            k.set(root, text);
            return;
    }
}

std::string unknown_key_message(const ConfigSchema& schema, const std::string& path) {
    std::string msg = "unknown key '" + quote_bounded(path) + "'";
    // No key is that long (and the edit distance to a megabyte key would take seconds).
    std::string near = path.size() > kQuoteMaxBytes ? "" : schema.closest_key(path);
    if (!near.empty()) msg += " (did you mean '" + near + "'?)";
    else msg += " (run `cuset-train --print-config` to see every key)";
    return msg;
}

// A section with a boolean `enabled` key takes a boolean for itself: `sandbox: off`.
const ConfigKey* find_key_or_switch(const ConfigSchema& schema, const std::string& path) {
    if (const ConfigKey* k = schema.find(path)) return k;
    const ConfigKey* sw = schema.find(path + ".enabled");
    return sw && sw->kind == ConfigKind::kBool ? sw : nullptr;
}

Origin origin_of(const std::string& file, const YAML::Mark& m) {
    if (m.is_null()) return {file};
    return {file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1)};
}

// The sections a key path sits in, at most: 3 for "a.b.c.key".
size_t section_depth(const ConfigSchema& schema) {
    size_t depth = 0;
    for (const ConfigKey& k : schema.keys())
        depth = std::max(depth, static_cast<size_t>(std::count(k.path.begin(), k.path.end(), '.')));
    return depth;
}

// The top-level sections, for messages: "(model:, data:, ...)".
std::string sections_example(const ConfigSchema& schema) {
    std::vector<std::string> top;
    for (const ConfigKey& k : schema.keys()) {
        const std::string s = k.path.substr(0, k.path.find('.'));
        if (std::find(top.begin(), top.end(), s) == top.end()) top.push_back(s);
        if (top.size() == 2) break;
    }
    std::string text;
    for (const std::string& s : top) text += s + ":, ";
    return "(" + text + "...)";
}

// Before anything walks the tree: an alias used inside its own anchor (`a: &r {b: *r}`) makes a
// cycle, and absurd nesting or alias fan-out an endless walk; all are refused here.
void check_tree(const YAML::Node& node, std::vector<YAML::Node>& stack, size_t& visited, const std::string& file,
                size_t depth) {
    constexpr size_t kMaxDepth = 64, kMaxNodes = 1000000;
    if (++visited > kMaxNodes)
        fail(origin_of(file, node.Mark()), "more than 1000000 values (aliases expanding without end?)");
    if (!node.IsMap() && !node.IsSequence()) return;
    for (const YAML::Node& up : stack)
        if (up.is(node)) fail(origin_of(file, node.Mark()), "recursive alias: an anchor is used inside itself");
    if (stack.size() >= kMaxDepth)
        fail(origin_of(file, node.Mark()),
             "nested more than 64 levels deep (a configuration has " + std::to_string(depth) + ")");
    stack.push_back(node);
    for (auto it = node.begin(); it != node.end(); ++it) {
        if (node.IsMap()) {
            check_tree(it->first, stack, visited, file, depth);
            check_tree(it->second, stack, visited, file, depth);
        } else {
            check_tree(*it, stack, visited, file, depth);
        }
    }
    stack.pop_back();
}

// The position of the first byte that is not valid UTF-8, or npos.
size_t invalid_utf8_at(const std::string& s) {
    size_t i = 0;
    while (i < s.size()) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (n == 0 || (n == 2 && c < 0xC2) || i + n > s.size()) return i;
        for (size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return i;
        if (n == 3) {
            unsigned char d = static_cast<unsigned char>(s[i + 1]);
            if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d >= 0xA0)) return i;
        } else if (n == 4) {
            unsigned char d = static_cast<unsigned char>(s[i + 1]);
            if ((c == 0xF0 && d < 0x90) || c > 0xF4 || (c == 0xF4 && d >= 0x90)) return i;
        }
        i += n;
    }
    return std::string::npos;
}

void walk(const ConfigSchema& schema, void* root, const YAML::Node& node, const std::string& prefix,
          const std::string& file) {
    std::map<std::string, YAML::Mark> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
        const YAML::Node k = it->first;
        const YAML::Node v = it->second;
        Origin ko = origin_of(file, k.Mark());
        if (!k.IsScalar()) fail(ko, "keys must be plain names");
        if (!seen.emplace(k.Scalar(), k.Mark()).second) {
            const YAML::Mark& m = seen[k.Scalar()];
            fail(ko, "duplicate key '" + quote_bounded(prefix.empty() ? k.Scalar() : prefix + "." + k.Scalar()) +
                         "' (first at line " + std::to_string(m.line + 1) + "); keep one");
        }
        std::string path = prefix.empty() ? k.Scalar() : prefix + "." + k.Scalar();
        const ConfigKey* f = schema.find(path);
        if (!f && v.IsScalar()) f = find_key_or_switch(schema, path);
        if (f) {
            Origin vo = origin_of(file, v.Mark());
            if (v.IsNull()) {
                if (f->kind == ConfigKind::kString) {
                    assign(root, *f, "", vo);
                    continue;
                }
                fail(vo, "key '" + path + "' has no value; expected " + kind_name(*f));
            }
            if (!v.IsScalar()) fail(vo, "key '" + path + "' expects " + kind_name(*f) + ", got a " +
                                            (v.IsMap() ? "mapping" : "list"));
            assign(root, *f, v.Scalar(), vo);
        } else if (schema.is_section(path)) {
            if (v.IsNull()) continue;  // an empty section is fine
            if (!v.IsMap()) fail(ko, "'" + path + "' is a section; expected a mapping of keys");
            walk(schema, root, v, path, file);
        } else {
            // Name the full path of the first key below an unknown section, so the suggestion
            // can match it ('trian: {lr: ..}' -> 'trian.lr', did you mean 'train.lr').
            std::string full = path;
            for (YAML::Node n = v; n.IsMap() && n.size() > 0;) {
                auto first = n.begin();
                if (!first->first.IsScalar()) break;
                full += "." + first->first.Scalar();
                n = first->second;
            }
            fail(ko, unknown_key_message(schema, full));
        }
    }
}

void read_file(const ConfigSchema& schema, void* root, const std::string& file) {
    std::error_code dir_ec;
    if (std::filesystem::is_directory(file, dir_ec))
        throw UsageError("config error: '" + file + "' is a folder, not a YAML file (check the path given to --config)");
    if (std::string kind = non_regular_kind(file); !kind.empty())  // a FIFO would block, /dev/zero never end
        throw UsageError("config error: '" + file + "' is " + kind + ", not a YAML file (check the path given to --config)");
    std::ifstream in(file);
    if (!in)
        throw UsageError("config error: cannot read '" + file +
                         "' (check the path given to --config)");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    if (size_t bad = invalid_utf8_at(text); bad != std::string::npos) {
        size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + bad, '\n'));
        size_t bol = text.rfind('\n', bad == 0 ? 0 : bad - 1);
        size_t col = bad - (bol == std::string::npos || bad == 0 ? 0 : bol + 1) + 1;
        throw UsageError("config error: " + file + ":" + std::to_string(line) + ":" + std::to_string(col) +
                         ": not valid UTF-8 (a YAML file is UTF-8 text)");
    }
    YAML::Node node;
    try {
        node = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw UsageError("config error: " + file + ":" + std::to_string(e.mark.line + 1) + ":" +
                         std::to_string(e.mark.column + 1) + ": malformed YAML: " + e.msg);
    }
    if (node.IsNull()) return;  // an empty file is an empty config: all defaults
    if (!node.IsMap())
        throw UsageError("config error: " + file + ": the top level must be a mapping of sections " +
                         sections_example(schema));
    std::vector<YAML::Node> stack;
    size_t visited = 0;
    check_tree(node, stack, visited, file, section_depth(schema));
    walk(schema, root, node, "", file);
}

std::string yaml_scalar(const ConfigKey& k, const void* root) {
    const ConfigValue v = k.get(root);
    switch (k.kind) {
        case ConfigKind::kBool: return std::get<bool>(v) ? "true" : "false";
        case ConfigKind::kInt: return std::to_string(std::get<int64_t>(v));
        case ConfigKind::kDouble: return format_number(std::get<double>(v));
        case ConfigKind::kEnum:
        case ConfigKind::kString: {
            YAML::Emitter e;
            e << YAML::DoubleQuoted << std::get<std::string>(v);
            return e.c_str();
        }
    }
    return "";
}

}  // namespace

Override override_parse(const std::string& arg) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
        throw UsageError("--set expects key.path=value, got '" + quote_bounded(arg) + "'");
    return {arg.substr(0, eq), arg.substr(eq + 1)};
}

ConfigKey& ConfigSchema::add(ConfigKey key) {
    if (find(key.path)) throw RuntimeFailure("config schema: key '" + key.path + "' is declared twice");
    keys_.push_back(std::move(key));
    return keys_.back();
}

const ConfigKey* ConfigSchema::find(const std::string& path) const {
    for (const ConfigKey& k : keys_)
        if (k.path == path) return &k;
    return nullptr;
}

bool ConfigSchema::is_section(const std::string& prefix) const {
    for (const ConfigKey& k : keys_)
        if (k.path.size() > prefix.size() && k.path.compare(0, prefix.size(), prefix) == 0 &&
            k.path[prefix.size()] == '.')
            return true;
    return false;
}

void ConfigSchema::set_defaults(void* root) const {
    for (const ConfigKey& k : keys_) k.set(root, k.default_value);
}

void ConfigSchema::read(void* root, const std::string& file, const std::vector<Override>& overrides) const {
    if (!file.empty()) read_file(*this, root, file);
    for (const Override& o : overrides) {
        const ConfigKey* k = find_key_or_switch(*this, o.key);
        Origin origin{"--set " + o.key};
        if (!k) {
            if (is_section(o.key)) fail(origin, "'" + o.key + "' is a section, not a key");
            fail(origin, unknown_key_message(*this, o.key));
        }
        std::string v = o.value;
        // Accept YAML quoting on the command line: --set data.system_prompt='"hi"'.
        if (v.size() >= 2 && ((v.front() == '"' && v.back() == '"') ||
                              (v.front() == '\'' && v.back() == '\'')))
            v = v.substr(1, v.size() - 2);
        assign(root, *k, v, origin);
    }
}

std::string ConfigSchema::closest_key(const std::string& key) const {
    std::string best;
    size_t best_d = std::string::npos;
    for (const ConfigKey& k : keys_) {
        size_t d = edit_distance(key, k.path);
        if (d < best_d) {
            best_d = d;
            best = k.path;
        }
    }
    size_t limit = std::max<size_t>(3, key.size() / 3);
    return best_d <= limit ? best : "";
}

std::string ConfigSchema::to_yaml(const void* root) const {
    std::ostringstream os;
    std::vector<std::string> open;  // currently open section path components
    for (const ConfigKey& k : keys_) {
        std::vector<std::string> parts;
        std::stringstream ss(k.path);
        for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
        size_t common = 0;
        while (common < open.size() && common + 1 < parts.size() && open[common] == parts[common])
            ++common;
        open.resize(common);
        for (size_t i = common; i + 1 < parts.size(); ++i) {
            os << std::string(2 * i, ' ') << parts[i] << ":\n";
            open.push_back(parts[i]);
        }
        std::string value = yaml_scalar(k, root);
        std::string line = std::string(2 * (parts.size() - 1), ' ') + parts.back() + ": " + value;
        os << line;
        size_t pad = line.size() < 48 ? 48 - line.size() : 1;
        os << std::string(pad, ' ') << "# " << k.help << "\n";
    }
    return os.str();
}

std::string ConfigSchema::hash(const void* root) const {
    uint64_t h = 1469598103934665603ull;
    for (const ConfigKey& k : keys_) {
        if (!k.hashed) continue;
        if (!k.hashed_while.empty()) {
            const ConfigKey* sw = find(k.hashed_while);
            if (!sw || sw->kind != ConfigKind::kBool)
                throw RuntimeFailure("config schema: key '" + k.path + "' is hashed while '" + k.hashed_while +
                                     "', which is no boolean key");
            if (!std::get<bool>(sw->get(root))) continue;
        }
        std::string s = k.path + "=" + yaml_scalar(k, root) + "\n";
        for (unsigned char ch : s) {
            h ^= ch;
            h *= 1099511628211ull;
        }
    }
    std::ostringstream os;
    os << std::hex << std::setw(16) << std::setfill('0') << h;
    return os.str();
}

}  // namespace cuset
