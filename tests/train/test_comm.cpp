// The collectives of train/comm.h over a real c10d Gloo process group: two ranks in two threads
// of this process (each with its own process group over a loopback TCPStore), every collective
// checked against values worked out by hand; and the one-process Comm, where each is the identity.
#include <gtest/gtest.h>

#include <unistd.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>

#include "cuset/core/config.h"
#include "cuset/train/comm.h"
#include "cuset/train/distributed.h"
#include "gloo_ranks.h"
#include "test_util.h"

namespace {

// Runs body(comm) on ranks 0 and 1 at once.
void on_two_ranks(int port, const std::function<void(const cuset::Comm&)>& body) {
    cuset::test::on_gloo_ranks(2, port, 60, body);
}

}  // namespace

TEST(Comm, OneProcessCollectivesAreTheIdentity) {
    cuset::Comm c;
    at::Tensor t = at::arange(6, at::kFloat);
    EXPECT_TRUE(at::equal(c.all_gather(t), t));
    EXPECT_TRUE(at::equal(c.reduce_scatter(t), t));
    at::Tensor u = t.clone();
    c.sum_tensor(u);
    c.broadcast(u, 0);
    EXPECT_TRUE(at::equal(u, t));
    EXPECT_EQ(c.sum_vec({1.5, 2.0}), (std::vector<double>{1.5, 2.0}));
    EXPECT_EQ(cuset::gather_over_ranks(c, {3.0}), std::vector<double>{3.0});
}

TEST(Comm, GlooCollectivesOnTwoRanks) {
    std::vector<std::vector<float>> gathered(2), scattered(2), summed(2), broadcast(2);
    std::vector<std::vector<double>> host(2), ragged(2);
    on_two_ranks(cuset::test::free_port(0), [&](const cuset::Comm& c) {
        const int r = static_cast<int>(c.rank);
        auto vec = [](const at::Tensor& t) {
            at::Tensor f = t.to(at::kFloat).contiguous();
            return std::vector<float>(f.data_ptr<float>(), f.data_ptr<float>() + f.numel());
        };
        // Rank r holds [10r, 10r + 1, 10r + 2].
        at::Tensor mine = at::arange(3, at::kFloat) + 10.0 * r;
        gathered[r] = vec(c.all_gather(mine));
        // Rank r holds [1, 2, 3, 4] * (r + 1): the sum is [3, 6, 9, 12]; rank 0 keeps [3, 6].
        scattered[r] = vec(c.reduce_scatter(at::arange(1, 5, at::kFloat) * (r + 1)));
        at::Tensor s = at::full({2}, r + 1.0, at::kFloat);
        c.sum_tensor(s);
        summed[r] = vec(s);
        at::Tensor b = at::full({2}, r == 1 ? 7.0 : -1.0, at::kFloat);
        c.broadcast(b, 1);
        broadcast[r] = vec(b);
        host[r] = c.sum_vec({1.0 * r, 0.5});
        // Rank 0 holds one value, rank 1 three: everyone gets all four in rank order.
        ragged[r] = cuset::gather_over_ranks(c, r == 0 ? std::vector<double>{9} : std::vector<double>{1, 2, 3});
        c.barrier();
    });
    for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(gathered[r], (std::vector<float>{0, 1, 2, 10, 11, 12})) << "rank " << r;
        EXPECT_EQ(summed[r], (std::vector<float>{3, 3})) << "rank " << r;
        EXPECT_EQ(broadcast[r], (std::vector<float>{7, 7})) << "rank " << r;
        EXPECT_EQ(host[r], (std::vector<double>{1.0, 1.0})) << "rank " << r;
        EXPECT_EQ(ragged[r], (std::vector<double>{9, 1, 2, 3})) << "rank " << r;
    }
    EXPECT_EQ(scattered[0], (std::vector<float>{3, 6}));
    EXPECT_EQ(scattered[1], (std::vector<float>{9, 12}));
}
