// The collectives of data parallelism, as the training step and sharding use them: sums of host
// values and tensors, all-gather, reduce-scatter, broadcast, barrier, and the step's gradient sum
// overlapped with backward. The default Comm is one process (every collective is the identity);
// train/distributed.h makes one over a c10d process group. Nothing here knows the trainer.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <ATen/core/Tensor.h>

namespace cuset {

struct Comm {
    int64_t rank = 0;
    int64_t world = 1;
    int64_t local_rank = 0;  // GPU index on this node

    // Sum of a small host vector over ranks (statistics, denominators).
    std::function<std::vector<double>(std::vector<double>)> sum_vec = [](std::vector<double> v) { return v; };
    // In-place sum of a tensor over ranks.
    std::function<void(at::Tensor&)> sum_tensor = [](at::Tensor&) {};
    // [n] -> [world * n]: every rank's tensor, in rank order (same shape and dtype on every rank).
    std::function<at::Tensor(const at::Tensor&)> all_gather = [](const at::Tensor& t) { return t.clone(); };
    // [world * n] -> [n]: the sum over ranks of every rank's input, of which rank r keeps part r.
    std::function<at::Tensor(const at::Tensor&)> reduce_scatter = [](const at::Tensor& t) { return t.clone(); };
    // In place: every rank's tensor becomes rank `root`'s.
    std::function<void(at::Tensor&, int64_t root)> broadcast = [](at::Tensor&, int64_t) {};
    std::function<void()> barrier = [] {};

    // Asynchronous forms, to overlap communication with computation: each starts the collective
    // and returns the function that waits for it (once) and leaves the result in `out`. The
    // tensors must stay alive until then. Every rank must start the same collectives in the same
    // order.
    using Wait = std::function<void()>;
    // out [n] = the sum over ranks of in [world * n]'s part `rank` (fp32 or the model dtype).
    std::function<Wait(const at::Tensor& in, const at::Tensor& out)> reduce_scatter_start =
        [](const at::Tensor& in, const at::Tensor& out) {
            out.view({-1}).copy_(in.reshape({-1}));
            return Wait([] {});
        };
    // out [world * n] = every rank's in [n], in rank order.
    std::function<Wait(const at::Tensor& in, const at::Tensor& out)> all_gather_start =
        [](const at::Tensor& in, const at::Tensor& out) {
            out.view({-1}).copy_(in.reshape({-1}));
            return Wait([] {});
        };

    // The step's gradient sum. grads_will_be_final is called just before the step's last backward
    // pass: from then on a data-parallel Comm sums gradient buckets across ranks as backward makes
    // them final (overlapping communication with the rest of backward). sum_grads completes the
    // sum in place (once per step, on every rank, before any other collective of the step that
    // follows backward, and before normalisation).
    std::function<void(const std::vector<at::Tensor>& params)> grads_will_be_final = [](const std::vector<at::Tensor>&) {};
    std::function<void(const std::vector<at::Tensor>& params)> sum_grads = [](const std::vector<at::Tensor>&) {};

    bool is_main() const { return rank == 0; }
    double sum(double x) const { return sum_vec({x})[0]; }
};

// Every rank's values, in rank order, on every rank (the ranks may hold different counts).
// Every rank must call it.
std::vector<double> gather_over_ranks(const Comm& comm, const std::vector<double>& local);

}  // namespace cuset
