// Data parallelism on torch.distributed's C++ core (c10d): the process group from torchrun's or
// Slurm's environment through a TCPStore, Gloo on CPUs and NCCL on GPUs, and the `Comm`
// (train/comm.h) over it: sums of host values and tensors, all-gather, reduce-scatter,
// broadcast, barrier, and the bucketed fp32 gradient all-reduce overlapped with the last
// backward of a step. Every
// collective has the configured timeout, so a dead rank fails the others with a clear error.
// No engine of our own: c10d does the communication.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "cuset/train/comm.h"

namespace cuset {

struct DistEnv {
    int64_t rank = 0;
    int64_t world = 1;
    int64_t local_rank = 0;
    std::string master_addr = "127.0.0.1";
    int64_t master_port = 29500;
    std::string launcher = "none";  // torchrun | slurm | none
};

// torchrun: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT. Slurm (srun): SLURM_PROCID,
// SLURM_NTASKS, SLURM_LOCALID with MASTER_ADDR / MASTER_PORT exported by the job script.
// UsageError when a variable is malformed or one of a set is missing.
DistEnv dist_env_from_environment();

// distributed.* of the process group.
struct ProcessGroupOptions {
    std::string backend = "auto";  // auto (nccl on CUDA, gloo on the CPU) | nccl | gloo
    int64_t timeout_s = 300;       // rendezvous and collectives
    double bucket_mb = 25.0;       // gradient bucket size
};

class ProcessGroupHandle;  // owns the c10d store and backend

class Distributed {
public:
    Distributed(const DistEnv& env, const ProcessGroupOptions& o, c10::Device device);
    ~Distributed();
    Comm comm() const;
    const DistEnv& env() const { return env_; }

private:
    DistEnv env_;
    std::shared_ptr<ProcessGroupHandle> pg_;
};

// UsageError when the backend cannot serve the device (nccl on a CPU); checked before any
// collective, for one process as for many. (The variables themselves are checked by
// dist_env_from_environment: integers in range, RANK < WORLD_SIZE, LOCAL_RANK < WORLD_SIZE, a
// host name in MASTER_ADDR, a TCP port in MASTER_PORT, no RANK without WORLD_SIZE.)
void distributed_check(const DistEnv& env, const std::string& backend, c10::Device device);

// distributed_check(), then joins the process group when the environment describes more than one
// rank; nullptr otherwise.
std::unique_ptr<Distributed> distributed_init(const DistEnv& env, const ProcessGroupOptions& o, c10::Device device);

}  // namespace cuset
