// Device selection and the build/runtime report behind `cuset-train --version`.
#pragma once

#include <string>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

namespace cuset {

// "auto" -> cuda when a GPU is available, else cpu; "cpu", "cuda", "cuda:N" as given.
// Throws UsageError when CUDA is asked for but not available.
c10::Device device_resolve(const std::string& spec);

// Peak bytes allocated by LibTorch on `device` since the last device_reset_peak() (the CUDA
// caching allocator's statistics); -1 on the CPU, where LibTorch keeps no such count.
int64_t device_peak_allocated(c10::Device device);
void device_reset_peak(c10::Device device);
// Total memory of a GPU in bytes; -1 on the CPU or when unknown.
int64_t device_total_memory(c10::Device device);

// The scaled_dot_product_attention kernel LibTorch selects on `device` for attention of this
// shape ("flash_attention", "efficient_attention", "cudnn_attention", "math"), as
// at::_fused_sdp_choice reports it; with_mask: an explicit boolean mask (padding, packed rows).
std::string sdpa_backend_for(c10::Device device, c10::ScalarType dtype, int64_t n_head, int64_t n_head_kv,
                             int64_t head_dim, int64_t seq, bool with_mask);

// Multi-line text: project version, LibTorch version, CUDA compiled/available, device count.
std::string version_report();

}  // namespace cuset
