// In-process data parallelism for tests: `world` ranks as threads of the test process, each with
// its own c10d Gloo process group over a loopback TCPStore (as torchrun would start them).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cuset/train/comm.h"
#include "cuset/train/distributed.h"

namespace cuset::test {

// Runs body(comm) on ranks 0..world-1 at once; a failure on a rank is reported with its rank.
inline void on_gloo_ranks(int world, int port, int64_t timeout_s, const std::function<void(const cuset::Comm&)>& body) {
    cuset::ProcessGroupOptions pg;
    pg.timeout_s = timeout_s;
    pg.backend = "gloo";
    std::vector<std::string> errors(static_cast<size_t>(world));
    std::vector<std::thread> threads;
    for (int r = 0; r < world; ++r)
        threads.emplace_back([&, r] {
            try {
                cuset::DistEnv env;
                env.rank = r;
                env.world = world;
                env.master_port = port;
                cuset::Distributed dist(env, pg, c10::Device(c10::kCPU));
                body(dist.comm());
            } catch (const std::exception& e) {
                errors[static_cast<size_t>(r)] = e.what();
            }
        });
    for (auto& t : threads) t.join();
    for (int r = 0; r < world; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "rank " << r;
}

}  // namespace cuset::test
