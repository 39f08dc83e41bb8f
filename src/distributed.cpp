// c10d process group set-up and the trainer's Comm over it.
#define USE_C10D_GLOO 1
#include "cuset/distributed.h"

#include <cstdlib>
#include <limits>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#if defined(CUSET_WITH_CUDA)
#define USE_C10D_NCCL 1
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "cuset/error.h"
#include "cuset/log.h"

namespace cuset {

namespace {

bool env_int(const char* name, int64_t* out) {
    const char* v = std::getenv(name);
    if (!v || !*v) return false;
    char* end = nullptr;
    long long x = std::strtoll(v, &end, 10);
    if (*end != '\0' || x < 0)
        throw UsageError(std::string("environment variable ") + name + "='" + v + "' is not a non-negative integer");
    *out = x;
    return true;
}

std::string env_str(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

// The Gloo backend is constructed here (not inside LibTorch), from c10d's header compiled against
// Debian's gloo headers, which may be older than the gloo LibTorch was built with. The types that
// could differ sit behind pointers, so the layouts agree; the trailing padding guarantees that
// even a larger object than this translation unit sees fits in the allocation.
class PaddedGloo : public c10d::ProcessGroupGloo {
public:
    using c10d::ProcessGroupGloo::ProcessGroupGloo;

private:
    [[maybe_unused]] char padding_[4096] = {};
};

}  // namespace

DistEnv dist_env_from_environment() {
    DistEnv e;
    int64_t rank = 0, world = 0, local = 0, port = 0;
    if (env_int("WORLD_SIZE", &world)) {
        if (!env_int("RANK", &rank)) throw UsageError("WORLD_SIZE is set but RANK is not (start with torchrun)");
        if (!env_int("LOCAL_RANK", &local)) local = rank;
        e.launcher = "torchrun";
    } else if (env_int("SLURM_NTASKS", &world)) {
        if (!env_int("SLURM_PROCID", &rank)) throw UsageError("SLURM_NTASKS is set but SLURM_PROCID is not");
        if (!env_int("SLURM_LOCALID", &local)) local = 0;
        e.launcher = "slurm";
    } else {
        return e;
    }
    if (world < 1 || rank >= world)
        throw UsageError(strprintf("rank %lld is not below the world size %lld", (long long)rank, (long long)world));
    e.rank = rank;
    e.world = world;
    e.local_rank = local;
    e.master_addr = env_str("MASTER_ADDR", "127.0.0.1");
    if (env_int("MASTER_PORT", &port)) e.master_port = port;
    if (e.master_port <= 0 || e.master_port > 65535)
        throw UsageError(strprintf("MASTER_PORT=%lld is not a TCP port", (long long)e.master_port));
    return e;
}

class ProcessGroupHandle {
public:
    c10::intrusive_ptr<c10d::Store> store;
    c10::intrusive_ptr<c10d::Backend> backend;
    c10::Device device{c10::kCPU};  // where collective buffers live (the GPU for NCCL)
    std::chrono::milliseconds timeout{300000};
    int64_t bucket_bytes = 25 << 20;
    int64_t rank = 0;
};

namespace {

// Runs one collective and waits for it, turning c10d's exceptions into one clear line.
void wait_or_fail(const c10::intrusive_ptr<c10d::Work>& work, const ProcessGroupHandle& pg, const char* what) {
    try {
        work->wait(pg.timeout);
    } catch (const std::exception& e) {
        std::string msg = e.what();
        msg = msg.substr(0, msg.find('\n'));
        throw RuntimeFailure(strprintf("distributed: rank %lld: %s failed (%s); another rank probably died or "
                                       "stalled past distributed.timeout_s = %lld s",
                                       (long long)pg.rank, what, msg.c_str(),
                                       (long long)(pg.timeout.count() / 1000)));
    }
}

void all_reduce_sum(ProcessGroupHandle& pg, at::Tensor& t, const char* what) {
    std::vector<at::Tensor> v{t};
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::SUM;
    o.timeout = pg.timeout;
    c10::intrusive_ptr<c10d::Work> w;
    try {
        w = pg.backend->allreduce(v, o);
    } catch (const std::exception& e) {
        std::string msg = e.what();
        throw RuntimeFailure(strprintf("distributed: rank %lld: %s failed (%s)", (long long)pg.rank, what,
                                       msg.substr(0, msg.find('\n')).c_str()));
    }
    wait_or_fail(w, pg, what);
}

}  // namespace

Distributed::Distributed(const DistEnv& env, const Config& cfg, c10::Device device) : env_(env) {
    pg_ = std::make_shared<ProcessGroupHandle>();
    pg_->timeout = std::chrono::milliseconds(cfg.distributed.timeout_s * 1000);
    pg_->bucket_bytes = cfg.distributed.bucket_mb << 20;
    pg_->rank = env.rank;
    std::string backend = cfg.distributed.backend;
    if (backend == "auto") backend = device.is_cuda() ? "nccl" : "gloo";
    log_info("distributed: rank %lld of %lld (local %lld, %s), %s backend, rendezvous %s:%lld", (long long)env.rank,
             (long long)env.world, (long long)env.local_rank, env.launcher.c_str(), backend.c_str(),
             env.master_addr.c_str(), (long long)env.master_port);
    try {
        c10d::TCPStoreOptions so;
        so.port = static_cast<uint16_t>(env.master_port);
        so.isServer = env.rank == 0;
        so.numWorkers = static_cast<size_t>(env.world);
        so.waitWorkers = true;
        so.timeout = pg_->timeout;
        auto tcp = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
        pg_->store = c10::make_intrusive<c10d::PrefixStore>("cuset", tcp);
    } catch (const std::exception& e) {
        std::string msg = e.what();
        throw RuntimeFailure(strprintf("distributed: rank %lld could not join the rendezvous at %s:%lld within %lld s (%s)",
                                       (long long)env.rank, env.master_addr.c_str(), (long long)env.master_port,
                                       (long long)cfg.distributed.timeout_s, msg.substr(0, msg.find('\n')).c_str()));
    }
    try {
        if (backend == "gloo") {
            auto opts = c10d::ProcessGroupGloo::Options::create_default(pg_->timeout);
            std::string ifname = env_str("GLOO_SOCKET_IFNAME", "");
            if (!ifname.empty()) {
                opts->devices = {c10d::ProcessGroupGloo::createDeviceForInterface(ifname)};
            } else if (env.master_addr == "127.0.0.1" || env.master_addr == "localhost") {
                opts->devices = {c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")};
            }
            pg_->backend = c10::make_intrusive<PaddedGloo>(pg_->store, static_cast<int>(env.rank),
                                                           static_cast<int>(env.world), opts);
            pg_->device = c10::Device(c10::kCPU);
        } else {
#if defined(CUSET_WITH_CUDA)
            auto opts = c10d::ProcessGroupNCCL::Options::create();
            opts->timeout = pg_->timeout;
            pg_->backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(pg_->store, static_cast<int>(env.rank),
                                                                       static_cast<int>(env.world), opts);
            pg_->device = device;
#else
            throw UsageError("config error: 'distributed.backend' is nccl but this build has no CUDA support");
#endif
        }
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        std::string msg = e.what();
        throw RuntimeFailure(strprintf("distributed: rank %lld could not create the %s process group (%s)",
                                       (long long)env.rank, backend.c_str(), msg.substr(0, msg.find('\n')).c_str()));
    }
}

Distributed::~Distributed() = default;

Comm Distributed::comm() const {
    Comm c;
    c.rank = env_.rank;
    c.world = env_.world;
    c.local_rank = env_.local_rank;
    std::shared_ptr<ProcessGroupHandle> pg = pg_;
    c.sum_vec = [pg](std::vector<double> v) {
        at::Tensor t = at::tensor(v, at::kDouble).to(pg->device);  // [n] fp64
        all_reduce_sum(*pg, t, "all-reduce of step statistics");
        t = t.cpu();
        return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
    };
    c.sum = [c](double x) { return c.sum_vec({x})[0]; };
    c.sum_grads = [pg](const std::vector<at::Tensor>& params) {
        // Buckets of fp32 gradients (bf16 models too: the sum is taken in fp32), flattened, summed,
        // written back. Parameters without a gradient contribute zeros so every rank sends the
        // same buckets.
        at::NoGradGuard no_grad;
        size_t i = 0;
        while (i < params.size()) {
            size_t j = i;
            int64_t numel = 0;
            while (j < params.size() && (j == i || (numel + params[j].numel()) * 4 <= pg->bucket_bytes))
                numel += params[j++].numel();
            c10::Device dev = params[i].device();
            at::Tensor flat = at::empty({numel}, at::TensorOptions().dtype(at::kFloat).device(dev));  // [numel] fp32
            int64_t off = 0;
            for (size_t k = i; k < j; ++k) {
                int64_t n = params[k].numel();
                at::Tensor g = params[k].grad();
                if (g.defined()) flat.narrow(0, off, n).copy_(g.reshape({-1}));
                else flat.narrow(0, off, n).zero_();
                off += n;
            }
            at::Tensor send = flat.device() == pg->device ? flat : flat.to(pg->device);
            all_reduce_sum(*pg, send, "gradient all-reduce");
            if (!send.is_same(flat)) flat.copy_(send);
            off = 0;
            for (size_t k = i; k < j; ++k) {
                int64_t n = params[k].numel();
                at::Tensor g = params[k].mutable_grad();
                at::Tensor part = flat.narrow(0, off, n).view(params[k].sizes());
                if (g.defined()) g.copy_(part);
                else params[k].mutable_grad() = part.to(params[k].scalar_type()).clone();
                off += n;
            }
            i = j;
        }
    };
    c.barrier = [pg] {
        // A one-element all-reduce: works the same on every backend and honours the timeout.
        at::Tensor t = at::zeros({1}, at::TensorOptions().dtype(at::kFloat).device(pg->device));
        all_reduce_sum(*pg, t, "barrier");
    };
    return c;
}

std::unique_ptr<Distributed> distributed_init(const DistEnv& env, const Config& cfg, c10::Device device) {
    if (env.world <= 1) return nullptr;
    return std::make_unique<Distributed>(env, cfg, device);
}

}  // namespace cuset
