// Device resolution and the version report.
#include "cuset/model/device.h"

#include <climits>
#include <sstream>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <torch/cuda.h>
#include <torch/version.h>

#include "cuset/core/error.h"
#include "cuset/core/version.h"
#include "cuset/model/model.h"
#ifdef CUSET_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>

#include "cuset/model/cuda_runtime_info.h"
#endif
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/SDPBackend.h>

namespace cuset {

c10::Device device_resolve(const std::string& spec, bool check) {
    if (spec == "auto") return torch::cuda::is_available() ? c10::Device("cuda:0") : c10::Device("cpu");
    if (spec == "cpu") return c10::Device("cpu");
    if (spec.rfind("cuda", 0) == 0) {
        if (!check) return c10::Device(spec == "cuda" ? "cuda:0" : spec);
        if (!torch::cuda::is_available())
            throw UsageError("config error: key 'train.device' is '" + spec +
                             "' but no CUDA device is available (use cpu or auto)");
        c10::Device d(spec == "cuda" ? "cuda:0" : spec);
        if (d.index() >= static_cast<int>(torch::cuda::device_count()))
            throw UsageError("config error: key 'train.device' is '" + spec + "' but only " +
                             std::to_string(torch::cuda::device_count()) + " GPU(s) are visible");
        return d;
    }
    throw UsageError("config error: key 'train.device' expects auto, cpu, cuda or cuda:N, got '" +
                     spec + "'");
}

c10::Device device_for_rank(const std::string& spec, int64_t world, int64_t local_rank, bool check) {
    c10::Device d = device_resolve(spec, check);
    if (d.is_cuda() && world > 1) d = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(local_rank));
    return d;
}

c10::ScalarType dtype_resolve(const std::string& name, c10::Device device) {
    if (name == "auto") return device.is_cuda() ? at::kBFloat16 : at::kFloat;
    return dtype_from_name(name);
}

Runtime runtime_resolve(const std::string& device, const std::string& dtype, int64_t threads, int64_t world,
                        int64_t local_rank, bool check) {
    Runtime rt;
    rt.device = device_for_rank(device, world, local_rank, check);
    rt.dtype = dtype_resolve(dtype, rt.device);
    rt.threads = threads;
    return rt;
}

void runtime_use_threads(const Runtime& rt) {
    if (rt.threads > 0) at::set_num_threads(static_cast<int>(rt.threads));
}

void cpu_allocator_keep_pages() {
#if defined(__GLIBC__)
    mallopt(M_MMAP_MAX, 0);              // large blocks come from the heap, reused after free
    mallopt(M_TRIM_THRESHOLD, INT_MAX);  // and the heap's top is not given back between steps
#endif
}

int64_t device_peak_allocated(c10::Device device) {
#ifdef CUSET_WITH_CUDA
    if (device.is_cuda()) {
        auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
        return stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
    }
#endif
    (void)device;
    return -1;
}

void device_reset_peak(c10::Device device) {
#ifdef CUSET_WITH_CUDA
    if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
#endif
    (void)device;
}

int64_t device_total_memory(c10::Device device) {
#ifdef CUSET_WITH_CUDA
    if (device.is_cuda()) {
        long long b = cuda::device_total_memory(device.index() < 0 ? 0 : device.index());
        return b > 0 ? b : -1;
    }
#endif
    (void)device;
    return -1;
}

std::string sdpa_backend_for(c10::Device device, c10::ScalarType dtype, int64_t n_head, int64_t n_head_kv,
                             int64_t head_dim, int64_t seq, bool with_mask) {
    at::NoGradGuard no_grad;
    auto opts = at::TensorOptions().dtype(dtype).device(device);
    at::Tensor q = at::empty({1, n_head, seq, head_dim}, opts);     // [1, H, T, E]
    at::Tensor k = at::empty({1, n_head_kv, seq, head_dim}, opts);  // [1, K, T, E]
    std::optional<at::Tensor> mask;
    if (with_mask) mask = at::ones({1, 1, seq, seq}, at::TensorOptions().dtype(at::kBool).device(device));
    int64_t choice = at::_fused_sdp_choice(q, k, k, mask, 0.0, !with_mask, std::nullopt, n_head != n_head_kv);
    switch (static_cast<at::SDPBackend>(choice)) {
        case at::SDPBackend::flash_attention: return "flash_attention";
        case at::SDPBackend::efficient_attention: return "efficient_attention";
        case at::SDPBackend::cudnn_attention: return "cudnn_attention";
        case at::SDPBackend::math: return "math";
        case at::SDPBackend::overrideable: return "overrideable";
        default: return "error";
    }
}

std::string version_report() {
    std::ostringstream os;
    os << "cuset-train " << CUSET_VERSION << "\n";
    os << "LibTorch " << TORCH_VERSION << "\n";
#ifdef CUSET_WITH_CUDA
    int rt = cuda::runtime_version_compiled();
    os << "CUDA kernels: compiled (runtime " << rt / 1000 << "." << (rt % 1000) / 10 << ")\n";
#else
    os << "CUDA kernels: not compiled\n";
#endif
    bool avail = torch::cuda::is_available();
    os << "CUDA available: " << (avail ? "yes" : "no") << "\n";
    os << "CUDA devices: " << (avail ? torch::cuda::device_count() : 0) << "\n";
    return os.str();
}

}  // namespace cuset
