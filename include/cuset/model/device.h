// Device selection and the build/runtime report behind `cuset-train --version`.
#pragma once

#include <cstdint>
#include <string>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

namespace cuset {

// "auto" -> cuda when a GPU is available, else cpu; "cpu", "cuda", "cuda:N" as given.
// Throws UsageError when CUDA is asked for but not available, unless `check` is false (a plan
// for a run that is not started here, the dry run: a CUDA device is then taken as named).
c10::Device device_resolve(const std::string& spec, bool check = true);

// The device of one rank: device_resolve(spec, check), and with several ranks (world > 1) on
// CUDA, cuda:<local_rank> (one GPU per process of a node).
c10::Device device_for_rank(const std::string& spec, int64_t world, int64_t local_rank, bool check = true);

// The compute dtype of model.dtype: "auto" -> bfloat16 on CUDA, float32 on the CPU; else
// dtype_from_name(name) (float32, bfloat16, float16).
c10::ScalarType dtype_resolve(const std::string& name, c10::Device device);

// Where one process computes, in which dtype and on how many CPU threads: resolved once per run
// by the application layer (app/options.h: train.device, model.dtype, train.threads) and handed to
// whatever computes (the trainer and its dry run, generate, score, eval).
struct Runtime {
    c10::Device device = c10::Device(c10::kCPU);
    c10::ScalarType dtype = c10::ScalarType::Float;
    int64_t threads = 0;  // intra-op CPU threads; 0 = LibTorch's default
};

// device_for_rank(device, world, local_rank, check) and dtype_resolve(dtype, that device).
Runtime runtime_resolve(const std::string& device, const std::string& dtype, int64_t threads, int64_t world = 1,
                        int64_t local_rank = 0, bool check = true);

// Gives LibTorch rt.threads intra-op threads (when > 0), before a command computes.
void runtime_use_threads(const Runtime& rt);

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

// Training on the CPU: keeps the large tensor buffers of one step in the process heap for the
// next (glibc's malloc otherwise maps every block over 32 MB afresh and unmaps it on free, so
// each step page-faults its logits, activations and gradients in again: ~5-10% of a small
// model's CPU step). Memory is then held at the run's peak instead of being returned between
// steps. No effect outside glibc; never used for GPU runs, whose host memory should go back.
void cpu_allocator_keep_pages();

// Multi-line text: project version, LibTorch version, CUDA compiled/available, device count.
std::string version_report();

}  // namespace cuset
