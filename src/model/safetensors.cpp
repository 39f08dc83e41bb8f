// Safetensors reader (mmap + full header validation), sharded folders and the atomic writer.
// Format: u64 little-endian header length N, N bytes of JSON, then the data area; each tensor's
// data_offsets are relative to the start of the data area.
#include "cuset/model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"

namespace cuset {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A header larger than this is certainly corrupt (the reference reader uses the same bound).
constexpr uint64_t kMaxHeaderBytes = 100u * 1024u * 1024u;

struct DtypeInfo {
    StDtype dtype;
    const char* name;
    size_t size;
};

constexpr DtypeInfo kDtypes[] = {
    {StDtype::kF64, "F64", 8},         {StDtype::kF32, "F32", 4},
    {StDtype::kF16, "F16", 2},         {StDtype::kBF16, "BF16", 2},
    {StDtype::kF8E4M3, "F8_E4M3", 1},  {StDtype::kF8E5M2, "F8_E5M2", 1},
    {StDtype::kI64, "I64", 8},         {StDtype::kI32, "I32", 4},
    {StDtype::kI16, "I16", 2},         {StDtype::kI8, "I8", 1},
    {StDtype::kU64, "U64", 8},         {StDtype::kU32, "U32", 4},
    {StDtype::kU16, "U16", 2},         {StDtype::kU8, "U8", 1},
    {StDtype::kBool, "BOOL", 1},
};

const DtypeInfo& dtype_info(StDtype d) {
    for (const DtypeInfo& i : kDtypes)
        if (i.dtype == d) return i;
    throw RuntimeFailure("internal error: unknown safetensors dtype");
}

std::string shape_str(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// numel x element size, false on overflow.
bool byte_length(const std::vector<int64_t>& shape, size_t elem, uint64_t* out) {
    uint64_t n = elem;
    for (int64_t d : shape)
        if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return false;
    *out = n;
    return true;
}

[[noreturn]] void bad_file(const std::string& path, const std::string& what) {
    throw InputError("safetensors file '" + path + "': " + what);
}

[[noreturn]] void bad_tensor(const std::string& path, const std::string& name, const std::string& what) {
    throw InputError("safetensors file '" + path + "': tensor '" + name + "': " + what);
}

// Parses the header JSON, failing on a duplicate top-level name (nlohmann keeps the last one
// silently, which would hide a corrupt or malicious header).
json parse_header(const std::string& path, const char* begin, const char* end) {
    std::set<std::string> seen;
    std::string duplicate;
    json::parser_callback_t cb = [&](int depth, json::parse_event_t event, json& parsed) {
        if (event == json::parse_event_t::key && depth == 1 && duplicate.empty()) {
            const std::string& key = parsed.get_ref<const std::string&>();
            if (!seen.insert(key).second) duplicate = key;
        }
        return true;
    };
    if (std::string p = json_depth_problem(std::string_view(begin, static_cast<size_t>(end - begin))); !p.empty())
        bad_file(path, "header: " + p);
    json header;
    try {
        header = json::parse(begin, end, cb);
    } catch (const json::exception& e) {
        bad_file(path, std::string("header is not valid JSON (") + quote_bounded(e.what()) + ")");
    }
    if (!duplicate.empty()) bad_tensor(path, duplicate, "appears twice in the header");
    if (!header.is_object()) bad_file(path, "header is not a JSON object");
    return header;
}

}  // namespace

size_t st_dtype_size(StDtype dtype) { return dtype_info(dtype).size; }

const char* st_dtype_name(StDtype dtype) { return dtype_info(dtype).name; }

bool st_dtype_parse(const std::string& name, StDtype* out) {
    for (const DtypeInfo& i : kDtypes)
        if (name == i.name) {
            *out = i.dtype;
            return true;
        }
    return false;
}

int64_t TensorView::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

// ---------------------------------------------------------------- SafetensorsFile

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
    // O_NONBLOCK: a FIFO under this name is refused below instead of blocking the open.
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) bad_file(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        bad_file(path, "not a regular file");
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ < 8) {
        ::close(fd);
        bad_file(path, "truncated: " + std::to_string(size_) +
                           " bytes, shorter than the 8-byte header length field");
    }
    map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    int err = errno;
    ::close(fd);
    if (map_ == MAP_FAILED) {
        map_ = nullptr;
        bad_file(path, std::string("cannot map: ") + std::strerror(err));
    }
    try {
        const uint8_t* base = static_cast<const uint8_t*>(map_);
        uint64_t header_len = 0;
        for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | base[i];  // little-endian
        if (header_len > size_ - 8)
            bad_file(path, "header length " + std::to_string(header_len) + " is beyond the end of the file (" +
                               std::to_string(size_) + " bytes; truncated?)");
        if (header_len > kMaxHeaderBytes)
            bad_file(path, "header length " + std::to_string(header_len) + " exceeds 100 MiB");
        if (header_len < 2) bad_file(path, "header length " + std::to_string(header_len) + " is too small");
        const char* hbegin = reinterpret_cast<const char*>(base + 8);
        json header = parse_header(path, hbegin, hbegin + header_len);

        const uint8_t* data = base + 8 + header_len;
        const uint64_t data_size = size_ - 8 - header_len;
        std::vector<std::pair<uint64_t, uint64_t>> spans;  // (begin, end) per tensor
        for (auto it = header.begin(); it != header.end(); ++it) {
            const std::string& name = it.key();
            const json& v = it.value();
            if (name == "__metadata__") {
                if (!v.is_object()) bad_file(path, "__metadata__ is not a JSON object");
                for (auto m = v.begin(); m != v.end(); ++m) {
                    if (!m.value().is_string())
                        bad_file(path, "__metadata__ value of '" + m.key() + "' is not a string");
                    metadata_[m.key()] = m.value().get<std::string>();
                }
                continue;
            }
            if (!v.is_object()) bad_tensor(path, name, "header entry is not a JSON object");
            TensorView t;
            t.name = name;
            t.file = path;
            auto dt = v.find("dtype");
            if (dt == v.end() || !dt->is_string()) bad_tensor(path, name, "missing or non-string 'dtype'");
            if (!st_dtype_parse(dt->get<std::string>(), &t.dtype))
                bad_tensor(path, name, "unsupported dtype '" + dt->get<std::string>() + "'");
            auto sh = v.find("shape");
            if (sh == v.end() || !sh->is_array()) bad_tensor(path, name, "missing or non-array 'shape'");
            for (const json& d : *sh) {
                if (!d.is_number_unsigned()) bad_tensor(path, name, "shape " + sh->dump() + " has a non-natural entry");
                uint64_t x = d.get<uint64_t>();
                if (x > static_cast<uint64_t>(INT64_MAX)) bad_tensor(path, name, "shape entry too large");
                t.shape.push_back(static_cast<int64_t>(x));
            }
            auto off = v.find("data_offsets");
            if (off == v.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
                !(*off)[1].is_number_unsigned())
                bad_tensor(path, name, "'data_offsets' must be two natural numbers");
            uint64_t b = (*off)[0].get<uint64_t>(), e = (*off)[1].get<uint64_t>();
            if (b > e) bad_tensor(path, name, "data_offsets [" + std::to_string(b) + ", " + std::to_string(e) + "] are reversed");
            if (e > data_size)
                bad_tensor(path, name, "data_offsets [" + std::to_string(b) + ", " + std::to_string(e) +
                                           "] out of range: the data area has " + std::to_string(data_size) +
                                           " bytes (truncated file?)");
            uint64_t need = 0;
            size_t elem = st_dtype_size(t.dtype);
            if (!byte_length(t.shape, elem, &need))
                bad_tensor(path, name, "shape " + shape_str(t.shape) + " overflows");
            if (need != e - b)
                bad_tensor(path, name, "shape " + shape_str(t.shape) + " x " + st_dtype_name(t.dtype) + " (" +
                                           std::to_string(elem) + " bytes) = " + std::to_string(need) +
                                           " bytes, but data_offsets span " + std::to_string(e - b) + " bytes");
            t.data = data + b;
            t.n_bytes = static_cast<size_t>(need);
            index_[name] = tensors_.size();
            tensors_.push_back(std::move(t));
            spans.emplace_back(b, e);
        }
        // Overlap: sorted by start, each non-empty tensor must begin at or after the previous end.
        std::vector<size_t> order(spans.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return spans[a] < spans[b]; });
        size_t prev = SIZE_MAX;
        for (size_t i : order) {
            if (spans[i].first == spans[i].second) continue;  // empty tensors occupy nothing
            if (prev != SIZE_MAX && spans[i].first < spans[prev].second)
                bad_tensor(path, tensors_[i].name,
                           "data_offsets [" + std::to_string(spans[i].first) + ", " + std::to_string(spans[i].second) +
                               "] overlap tensor '" + tensors_[prev].name + "' [" + std::to_string(spans[prev].first) +
                               ", " + std::to_string(spans[prev].second) + "]");
            prev = i;
        }
    } catch (...) {
        ::munmap(map_, size_);
        map_ = nullptr;
        throw;
    }
}

SafetensorsFile::~SafetensorsFile() {
    if (map_) ::munmap(map_, size_);
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &tensors_[it->second];
}

void SafetensorsFile::prefetch() const {
    if (!map_) return;
#ifdef MADV_POPULATE_READ
    // Maps every page in one call (reading it when not cached): a full load then takes no page
    // fault per 4 KiB, which otherwise costs more than the copy itself.
    if (::madvise(map_, size_, MADV_POPULATE_READ) == 0) return;
#endif
    ::madvise(map_, size_, MADV_WILLNEED);
}

// ---------------------------------------------------------------- SafetensorsCheckpoint

SafetensorsCheckpoint::SafetensorsCheckpoint(const std::string& path) {
    auto add_file = [&](const std::string& file) -> const SafetensorsFile& {
        files_.push_back(std::make_unique<SafetensorsFile>(file));
        return *files_.back();
    };
    auto add_all = [&](const SafetensorsFile& f) {
        for (const TensorView& t : f.tensors()) {
            auto [it, fresh] = by_name_.emplace(t.name, &t);
            if (!fresh)
                throw InputError("checkpoint '" + path + "': tensor '" + t.name + "' is in both '" + it->second->file +
                                 "' and '" + t.file + "'");
        }
    };

    std::error_code ec;
    if (fs::is_regular_file(path, ec)) {
        add_all(add_file(path));
    } else if (!fs::is_directory(path, ec)) {
        throw InputError("model checkpoint '" + path +
                         "' does not exist: point model.path at a Hugging Face model folder (config.json + *.safetensors)");
    } else if (fs::path index_path = fs::path(path) / kSafetensorsIndexFile; fs::exists(index_path)) {
        const std::string ip = index_path.string();
        const json index = json_read_file(ip, "index");
        if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
            throw InputError("index '" + ip + "' has no 'weight_map' object");
        std::map<std::string, std::string> weight_map;
        std::set<std::string> shards;
        for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
            if (!it.value().is_string())
                throw InputError("index '" + ip + "': tensor '" + it.key() + "' maps to a non-string shard");
            std::string shard = it.value().get<std::string>();
            if (shard.empty() || shard.find('/') != std::string::npos || shard == "." || shard == "..")
                throw InputError("index '" + ip + "': tensor '" + it.key() + "' maps to an invalid shard name '" +
                                 shard + "'");
            weight_map[it.key()] = shard;
            shards.insert(shard);
        }
        for (const std::string& shard : shards) {
            std::string sp = (fs::path(path) / shard).string();
            if (!fs::exists(sp)) throw InputError("index '" + ip + "' lists shard '" + shard + "' which does not exist");
            add_all(add_file(sp));
        }
        for (const auto& [name, shard] : weight_map) {
            auto it = by_name_.find(name);
            if (it == by_name_.end() || fs::path(it->second->file).filename() != shard)
                throw InputError("index '" + ip + "' maps tensor '" + name + "' to shard '" + shard +
                                 "', which does not contain it");
        }
    } else if (fs::path single = fs::path(path) / "model.safetensors"; fs::exists(single)) {
        add_all(add_file(single.string()));
    } else {
        throw InputError("model folder '" + path + "' has neither model.safetensors nor model.safetensors.index.json");
    }
    for (const auto& [name, view] : by_name_) names_.push_back(name);
}

const TensorView* SafetensorsCheckpoint::find(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
}

const TensorView& SafetensorsCheckpoint::get(const std::string& name) const {
    const TensorView* t = find(name);
    if (!t) throw InputError("checkpoint has no tensor '" + name + "'");
    return *t;
}

size_t SafetensorsCheckpoint::total_bytes() const {
    size_t n = 0;
    for (const auto& [name, view] : by_name_) n += view->n_bytes;
    return n;
}

// ---------------------------------------------------------------- writer

void safetensors_write(const std::string& path, const std::vector<TensorBytes>& tensors,
                       const std::map<std::string, std::string>& metadata) {
    nlohmann::ordered_json header;
    nlohmann::ordered_json meta = {{"format", "pt"}};
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = meta;
    uint64_t offset = 0;
    std::set<std::string> names;
    for (const TensorBytes& t : tensors) {
        uint64_t need = 0;
        if (!byte_length(t.shape, st_dtype_size(t.dtype), &need) || need != t.n_bytes)
            throw RuntimeFailure("safetensors write '" + path + "': tensor '" + t.name + "' has shape " +
                                 shape_str(t.shape) + " but " + std::to_string(t.n_bytes) + " bytes");
        if (t.name == "__metadata__" || !names.insert(t.name).second)
            throw RuntimeFailure("safetensors write '" + path + "': duplicate or reserved tensor name '" + t.name + "'");
        header[t.name] = {{"dtype", st_dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + need}}};
        offset += need;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');  // the data area starts 8-byte aligned
    uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
    std::vector<std::pair<const void*, size_t>> parts{{len, 8}, {text.data(), text.size()}};
    for (const TensorBytes& t : tensors) parts.emplace_back(t.data, t.n_bytes);
    atomic_write(path, parts);
}

std::vector<std::vector<size_t>> safetensors_plan_shards(const std::vector<size_t>& n_bytes,
                                                         int64_t max_shard_bytes) {
    std::vector<std::vector<size_t>> shards(1);
    uint64_t in_shard = 0;
    for (size_t i = 0; i < n_bytes.size(); ++i) {
        if (max_shard_bytes > 0 && !shards.back().empty() &&
            in_shard + n_bytes[i] > static_cast<uint64_t>(max_shard_bytes)) {
            shards.emplace_back();
            in_shard = 0;
        }
        shards.back().push_back(i);
        in_shard += n_bytes[i];
    }
    return shards;
}

std::string safetensors_shard_name(size_t i, size_t n_shards) {
    if (n_shards == 1) return "model.safetensors";
    return strprintf("model-%05zu-of-%05zu.safetensors", i + 1, n_shards);
}

void safetensors_write_index(const std::string& dir, const std::map<std::string, std::string>& weight_map,
                             uint64_t total_size) {
    json index = {{"metadata", {{"total_size", total_size}}}, {"weight_map", weight_map}};
    std::string text = index.dump(2) + "\n";
    atomic_write((fs::path(dir) / kSafetensorsIndexFile).string(), std::string_view(text));
}

std::vector<std::string> safetensors_write_sharded(const std::string& dir, const std::vector<TensorBytes>& tensors,
                                                   int64_t max_shard_bytes) {
    std::vector<size_t> sizes;
    uint64_t total = 0;
    for (const TensorBytes& t : tensors) {
        sizes.push_back(t.n_bytes);
        total += t.n_bytes;
    }
    std::vector<std::vector<size_t>> plan = safetensors_plan_shards(sizes, max_shard_bytes);
    std::vector<std::string> written;
    std::map<std::string, std::string> weight_map;
    for (size_t s = 0; s < plan.size(); ++s) {
        std::string name = safetensors_shard_name(s, plan.size());
        std::vector<TensorBytes> shard;
        for (size_t i : plan[s]) {
            shard.push_back(tensors[i]);
            weight_map[tensors[i].name] = name;
        }
        safetensors_write((fs::path(dir) / name).string(), shard);
        written.push_back(name);
    }
    if (plan.size() > 1) {
        safetensors_write_index(dir, weight_map, total);
        written.emplace_back(kSafetensorsIndexFile);
    }
    return written;
}

}  // namespace cuset
