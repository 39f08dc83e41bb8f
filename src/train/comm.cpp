// Collectives built on the Comm's primitives.
#include "cuset/train/comm.h"

#include <algorithm>
#include <cstddef>

namespace cuset {

// An all-gather of variable counts through the sum all-reduce: each rank fills its own slots,
// zeros elsewhere, and x + 0 is exact.
std::vector<double> gather_over_ranks(const Comm& comm, const std::vector<double>& local) {
    if (comm.world == 1) return local;
    std::vector<double> counts(static_cast<size_t>(comm.world), 0.0);
    counts[static_cast<size_t>(comm.rank)] = static_cast<double>(local.size());
    counts = comm.sum_vec(std::move(counts));
    size_t offset = 0, total = 0;
    for (int64_t r = 0; r < comm.world; ++r) {
        if (r < comm.rank) offset += static_cast<size_t>(counts[static_cast<size_t>(r)]);
        total += static_cast<size_t>(counts[static_cast<size_t>(r)]);
    }
    std::vector<double> all(total, 0.0);
    std::copy(local.begin(), local.end(), all.begin() + static_cast<std::ptrdiff_t>(offset));
    return comm.sum_vec(std::move(all));
}

}  // namespace cuset
