// Conversions between mapped safetensors views and LibTorch tensors, and writing named tensors.
#include "cuset/model/safetensors_torch.h"

#include <cstring>

#include "cuset/core/error.h"

namespace cuset {

namespace {

struct DtypePair {
    StDtype st;
    c10::ScalarType torch;
};

constexpr DtypePair kPairs[] = {
    {StDtype::kF64, at::kDouble},         {StDtype::kF32, at::kFloat},
    {StDtype::kF16, at::kHalf},           {StDtype::kBF16, at::kBFloat16},
    {StDtype::kF8E4M3, at::kFloat8_e4m3fn}, {StDtype::kF8E5M2, at::kFloat8_e5m2},
    {StDtype::kI64, at::kLong},           {StDtype::kI32, at::kInt},
    {StDtype::kI16, at::kShort},          {StDtype::kI8, at::kChar},
    {StDtype::kU64, at::kUInt64},         {StDtype::kU32, at::kUInt32},
    {StDtype::kU16, at::kUInt16},         {StDtype::kU8, at::kByte},
    {StDtype::kBool, at::kBool},
};

// A CPU tensor over the mapped bytes: read-only by contract, only ever a copy source. Elements
// that are not aligned to their size (legal in the format) are copied to aligned memory first.
at::Tensor borrow(const TensorView& v) {
    at::ScalarType t = st_dtype_to_torch(v.dtype);
    size_t elem = st_dtype_size(v.dtype);
    if (reinterpret_cast<uintptr_t>(v.data) % elem != 0) {
        at::Tensor out = at::empty(v.shape, at::TensorOptions().dtype(t));
        std::memcpy(out.data_ptr(), v.data, v.n_bytes);
        return out;
    }
    return at::from_blob(const_cast<uint8_t*>(v.data), v.shape, at::TensorOptions().dtype(t));
}

// CPU, contiguous copies in `dtype` (Undefined: keep) of `tensors`, held in `keep`.
std::vector<TensorBytes> as_bytes(const NamedTensors& tensors, c10::ScalarType dtype, std::vector<at::Tensor>& keep) {
    std::vector<TensorBytes> out;
    for (const auto& [name, t] : tensors) {
        at::ScalarType to = dtype == c10::ScalarType::Undefined ? t.scalar_type() : dtype;
        at::Tensor c = t.detach().to(at::kCPU, to).contiguous();
        keep.push_back(c);
        TensorBytes b;
        b.name = name;
        b.dtype = st_dtype_from_torch(c.scalar_type());
        b.shape = c.sizes().vec();
        b.data = c.data_ptr();
        b.n_bytes = c.nbytes();
        out.push_back(std::move(b));
    }
    return out;
}

}  // namespace

c10::ScalarType st_dtype_to_torch(StDtype dtype) {
    for (const DtypePair& p : kPairs)
        if (p.st == dtype) return p.torch;
    throw RuntimeFailure("internal error: unmapped safetensors dtype");
}

StDtype st_dtype_from_torch(c10::ScalarType dtype) {
    for (const DtypePair& p : kPairs)
        if (p.torch == dtype) return p.st;
    throw RuntimeFailure(std::string("safetensors cannot store dtype ") + c10::toString(dtype));
}

at::Tensor tensor_from_view(const TensorView& view, c10::ScalarType dtype, c10::Device device) {
    return borrow(view).to(at::TensorOptions().dtype(dtype).device(device), /*non_blocking=*/false, /*copy=*/true);
}

at::Tensor tensor_from_view(const TensorView& view, c10::Device device) {
    return tensor_from_view(view, st_dtype_to_torch(view.dtype), device);
}

void tensor_copy_from_view(at::Tensor& dst, const TensorView& view) {
    at::Tensor src = borrow(view);
    if (!src.sizes().equals(dst.sizes()))
        throw InputError("tensor '" + view.name + "' in '" + view.file + "' has shape " +
                         c10::str(src.sizes()) + ", expected " + c10::str(dst.sizes()));
    dst.copy_(src);
}

std::map<std::string, at::Tensor> safetensors_load(const std::string& path, c10::Device device) {
    SafetensorsCheckpoint ckpt(path);
    std::map<std::string, at::Tensor> out;
    for (const std::string& name : ckpt.names()) out[name] = tensor_from_view(ckpt.get(name), device);
    return out;
}

void safetensors_save(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata, c10::ScalarType dtype) {
    std::vector<at::Tensor> keep;
    safetensors_write(path, as_bytes(tensors, dtype, keep), metadata);
}

std::vector<std::string> safetensors_save_sharded(const std::string& dir, const NamedTensors& tensors,
                                                  int64_t max_shard_bytes, c10::ScalarType dtype) {
    std::vector<size_t> sizes;
    uint64_t total = 0;
    for (const auto& [name, t] : tensors) {
        size_t elem = dtype == c10::ScalarType::Undefined ? t.element_size() : c10::elementSize(dtype);
        sizes.push_back(static_cast<size_t>(t.numel()) * elem);
        total += sizes.back();
    }
    std::vector<std::vector<size_t>> plan = safetensors_plan_shards(sizes, max_shard_bytes);
    std::vector<std::string> written;
    std::map<std::string, std::string> weight_map;
    for (size_t s = 0; s < plan.size(); ++s) {
        std::string file = safetensors_shard_name(s, plan.size());
        NamedTensors shard;
        for (size_t i : plan[s]) {
            shard.push_back(tensors[i]);
            weight_map[tensors[i].first] = file;
        }
        safetensors_save(dir + "/" + file, shard, {}, dtype);
        written.push_back(file);
    }
    if (plan.size() > 1) {
        safetensors_write_index(dir, weight_map, total);
        written.emplace_back(kSafetensorsIndexFile);
    }
    return written;
}

}  // namespace cuset
