// c10d process group set-up and the Comm over it.
#define USE_C10D_GLOO 1
#include "cuset/train/distributed.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#if defined(CUSET_WITH_CUDA)
#define USE_C10D_NCCL 1
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace cuset {

namespace {

// The most ranks a process group may have here (c10d counts ranks in an int; no job has more).
constexpr int64_t kMaxWorld = 1 << 20;

bool env_int(const char* name, int64_t* out, int64_t max = kMaxWorld) {
    const char* v = std::getenv(name);
    if (!v || !*v) return false;
    char* end = nullptr;
    errno = 0;
    long long x = std::strtoll(v, &end, 10);
    // strtoll saturates on overflow (ERANGE): 99999999999999999999 is not LLONG_MAX ranks.
    if (*end != '\0' || errno == ERANGE || x < 0 || x > max)
        throw UsageError(std::string("environment variable ") + name + "='" + quote_bounded(v, 40) +
                         "' is not an integer in [0, " + std::to_string(max) + "]");
    *out = x;
    return true;
}

// A host name or an IP address (IPv6 also in brackets): nothing else reaches the TCP store.
bool plausible_host(const std::string& h) {
    if (h.empty() || h.size() > 255) return false;
    for (char c : h)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == ':' || c == '[' ||
              c == ']'))
            return false;
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
        // A rank without a world size is a launch that went wrong, not a single process.
        for (const char* v : {"RANK", "LOCAL_RANK"})
            if (int64_t x = 0; env_int(v, &x) && x != 0)
                throw UsageError(strprintf("environment variable %s=%lld is set but WORLD_SIZE is not (torchrun sets "
                                           "both; unset %s to run one process)", v, (long long)x, v));
        return e;
    }
    if (world < 1 || rank >= world)
        throw UsageError(strprintf("rank %lld is not below the world size %lld", (long long)rank, (long long)world));
    e.rank = rank;
    e.world = world;
    e.local_rank = local;
    if (local >= world)
        throw UsageError(strprintf("local rank %lld is not below the world size %lld", (long long)local, (long long)world));
    e.master_addr = env_str("MASTER_ADDR", "127.0.0.1");
    if (!plausible_host(e.master_addr))
        throw UsageError("environment variable MASTER_ADDR='" + quote_bounded(e.master_addr, 80) +
                         "' is not a host name or IP address");
    if (env_int("MASTER_PORT", &port, 65535)) e.master_port = port;
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

// Starts one sum all-reduce; the caller waits on the returned work.
c10::intrusive_ptr<c10d::Work> all_reduce_sum_async(ProcessGroupHandle& pg, at::Tensor& t, const char* what) {
    std::vector<at::Tensor> v{t};
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::SUM;
    o.timeout = pg.timeout;
    try {
        return pg.backend->allreduce(v, o);
    } catch (const std::exception& e) {
        std::string msg = e.what();
        throw RuntimeFailure(strprintf("distributed: rank %lld: %s failed (%s)", (long long)pg.rank, what,
                                       msg.substr(0, msg.find('\n')).c_str()));
    }
}

void all_reduce_sum(ProcessGroupHandle& pg, at::Tensor& t, const char* what) {
    wait_or_fail(all_reduce_sum_async(pg, t, what), pg, what);
}

// Runs `start` (one c10d call), turning a failure to start into one clear line, and waits.
template <typename Start>
void run_collective(ProcessGroupHandle& pg, const char* what, Start start) {
    c10::intrusive_ptr<c10d::Work> work;
    try {
        work = start();
    } catch (const std::exception& e) {
        std::string msg = e.what();
        throw RuntimeFailure(strprintf("distributed: rank %lld: %s failed (%s)", (long long)pg.rank, what,
                                       msg.substr(0, msg.find('\n')).c_str()));
    }
    wait_or_fail(work, pg, what);
}

// A tensor on the process group's device (a copy when it lives elsewhere), contiguous.
at::Tensor on_group_device(const ProcessGroupHandle& pg, const at::Tensor& t) {
    return t.device() == pg.device ? t.contiguous() : t.to(pg.device).contiguous();
}

// Starts one collective from `src` (on the group's device) into `out` through `start(dst)`, and
// returns the function that waits for it; a result on another device than the group's (CPU
// tensors over NCCL) lands in a buffer there and is copied back when waited for. The tensors stay
// alive in the returned function until then.
template <typename Start>
Comm::Wait collective_start(const std::shared_ptr<ProcessGroupHandle>& pg, const char* what, const at::Tensor& src,
                            const at::Tensor& out, Start start) {
    const bool direct = out.device() == pg->device && out.is_contiguous();
    at::Tensor dst = direct ? out.view({-1}) : at::empty({out.numel()}, src.options());  // [numel of out]
    c10::intrusive_ptr<c10d::Work> work;
    try {
        work = start(dst);
    } catch (const std::exception& e) {
        std::string msg = e.what();
        throw RuntimeFailure(strprintf("distributed: rank %lld: %s failed (%s)", (long long)pg->rank, what,
                                       msg.substr(0, msg.find('\n')).c_str()));
    }
    return [pg, work, src, dst, out, direct, what] {
        wait_or_fail(work, *pg, what);
        if (!direct) out.view({-1}).copy_(dst);
    };
}

// The step's gradient sum across ranks, overlapped with the last backward of the step. Parameters
// are grouped into fp32 buckets of distributed.bucket_mb in reverse order (the order backward
// finishes them); once armed, a hook after each parameter's gradient accumulation marks it
// final, and bucket k is packed and its all-reduce started as soon as it and buckets 0..k-1 are
// complete. Launching strictly in bucket order keeps the sequence of collectives the same on every
// rank, whatever order the autograd engine finishes parameters in; finish() launches whatever
// backward did not reach (unused parameters, or a rank whose step failed before its backward),
// waits for all and writes the sums back into the gradients.
class GradReducer : public std::enable_shared_from_this<GradReducer> {
public:
    explicit GradReducer(std::shared_ptr<ProcessGroupHandle> pg) : pg_(std::move(pg)) {}

    void arm(const std::vector<at::Tensor>& params) {
        plan(params);
        std::fill(final_.begin(), final_.end(), false);
        for (Bucket& b : buckets_) b.n_final = 0;
        next_ = 0;
        armed_ = true;
    }

    void finish(const std::vector<at::Tensor>& params) {
        if (!armed_) {
            plan(params);
            next_ = 0;
        }
        armed_ = false;
        at::NoGradGuard no_grad;
        const size_t during_backward = next_;
        while (next_ < buckets_.size()) launch(buckets_[next_++]);
        log_debug("gradient all-reduce: %zu of %zu bucket(s) started during backward", during_backward,
                  buckets_.size());
        for (Bucket& b : buckets_) {
            wait_or_fail(b.work, *pg_, "gradient all-reduce");
            b.work.reset();
            if (!b.send.is_same(b.flat)) b.flat.copy_(b.send);
            int64_t off = 0;
            for (size_t k : b.params) {
                const at::Tensor& p = params_[k];
                at::Tensor part = b.flat.narrow(0, off, p.numel()).view(p.sizes());
                at::Tensor g = p.mutable_grad();
                if (g.defined()) g.copy_(part);
                else p.mutable_grad() = part.to(p.scalar_type()).clone();
                off += p.numel();
            }
        }
    }

    // Called by the autograd engine after parameter i's gradient is accumulated.
    void on_final(size_t i) {
        if (!armed_ || i >= final_.size() || final_[i]) return;
        final_[i] = true;
        ++buckets_[bucket_of_[i]].n_final;
        at::NoGradGuard no_grad;
        while (next_ < buckets_.size() && buckets_[next_].n_final == buckets_[next_].params.size())
            launch(buckets_[next_++]);
    }

private:
    struct Bucket {
        std::vector<size_t> params;  // indices into params_
        size_t n_final = 0;
        at::Tensor flat;  // [numel] fp32 on the parameters' device, reused every step
        at::Tensor send;  // flat, or its copy on the process group's device
        c10::intrusive_ptr<c10d::Work> work;
    };

    struct FinalHook : public torch::autograd::PostAccumulateGradHook {
        FinalHook(std::weak_ptr<GradReducer> r, size_t i) : reducer(std::move(r)), index(i) {}
        void operator()(const torch::autograd::Variable&) override {
            if (auto r = reducer.lock()) r->on_final(index);
        }
        std::weak_ptr<GradReducer> reducer;
        size_t index;
    };

    // Buckets for this parameter list (once; the trainer passes the same tensors every step).
    void plan(const std::vector<at::Tensor>& params) {
        bool same = params.size() == params_.size();
        for (size_t i = 0; same && i < params.size(); ++i) same = params[i].is_same(params_[i]);
        if (same) return;
        params_ = params;
        buckets_.clear();
        bucket_of_.assign(params.size(), 0);
        final_.assign(params.size(), false);
        int64_t numel = 0;
        for (size_t r = 0; r < params.size(); ++r) {
            const size_t i = params.size() - 1 - r;
            const int64_t n = params[i].numel();
            if (buckets_.empty() || (numel > 0 && (numel + n) * 4 > pg_->bucket_bytes)) {
                buckets_.emplace_back();
                numel = 0;
            }
            buckets_.back().params.push_back(i);
            bucket_of_[i] = buckets_.size() - 1;
            numel += n;
        }
        for (Bucket& b : buckets_) {
            int64_t total = 0;
            for (size_t k : b.params) total += params_[k].numel();
            b.flat = at::empty({total}, at::TensorOptions().dtype(at::kFloat).device(params_[b.params[0]].device()));
            b.send = b.flat.device() == pg_->device ? b.flat : b.flat.to(pg_->device);
        }
        std::weak_ptr<GradReducer> self = weak_from_this();
        for (size_t i = 0; i < params_.size(); ++i)
            torch::autograd::impl::set_post_acc_grad_hooks(params_[i], std::make_unique<FinalHook>(self, i));
    }

    // Packs a bucket's gradients (zeros for a parameter without one) and starts its all-reduce.
    void launch(Bucket& b) {
        int64_t off = 0;
        for (size_t k : b.params) {
            const at::Tensor& p = params_[k];
            at::Tensor g = p.grad();
            if (g.defined()) b.flat.narrow(0, off, p.numel()).copy_(g.reshape({-1}));
            else b.flat.narrow(0, off, p.numel()).zero_();
            off += p.numel();
        }
        if (!b.send.is_same(b.flat)) b.send.copy_(b.flat);
        b.work = all_reduce_sum_async(*pg_, b.send, "gradient all-reduce");
    }

    std::shared_ptr<ProcessGroupHandle> pg_;
    std::vector<at::Tensor> params_;
    std::vector<Bucket> buckets_;
    std::vector<size_t> bucket_of_;  // parameter -> bucket
    std::vector<bool> final_;        // parameter's gradient is final for this step
    size_t next_ = 0;                // next bucket to launch
    bool armed_ = false;
};

}  // namespace

Distributed::Distributed(const DistEnv& env, const ProcessGroupOptions& o, c10::Device device) : env_(env) {
    pg_ = std::make_shared<ProcessGroupHandle>();
    pg_->timeout = std::chrono::milliseconds(o.timeout_s * 1000);
    pg_->bucket_bytes = static_cast<int64_t>(o.bucket_mb * (1 << 20));
    pg_->rank = env.rank;
    std::string backend = o.backend;
    if (backend == "auto") backend = device.is_cuda() ? "nccl" : "gloo";
    log_info("distributed: rank %lld of %lld (local %lld, %s), %s backend, rendezvous %s:%lld", (long long)env.rank,
             (long long)env.world, (long long)env.local_rank, env.launcher.c_str(), backend.c_str(),
             env.master_addr.c_str(), (long long)env.master_port);
    // c10d logs each failed connection attempt with a stack trace (some 40 lines before the one
    // line below says what failed): quiet, unless TORCH_CPP_LOG_LEVEL asks for c10's log.
    if (!std::getenv("TORCH_CPP_LOG_LEVEL")) FLAGS_caffe2_log_level = c10::GLOG_FATAL;
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
                                       (long long)o.timeout_s, msg.substr(0, msg.find('\n')).c_str()));
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
    c.sum_tensor = [pg](at::Tensor& t) {
        at::Tensor buf = on_group_device(*pg, t);
        all_reduce_sum(*pg, buf, "all-reduce");
        if (!buf.is_same(t)) t.copy_(buf);
    };
    c.all_gather = [pg, world = env_.world](const at::Tensor& t) {
        at::Tensor in = on_group_device(*pg, t).reshape({-1});                    // [n]
        at::Tensor out = at::empty({world * in.numel()}, in.options());            // [world * n]
        c10d::AllgatherOptions o;
        o.timeout = pg->timeout;
        run_collective(*pg, "all-gather", [&] { return pg->backend->_allgather_base(out, in, o); });
        return out.to(t.device());
    };
    c.reduce_scatter = [pg, world = env_.world](const at::Tensor& t) {
        at::Tensor in = on_group_device(*pg, t).reshape({-1});                    // [world * n]
        if (in.numel() % world != 0)
            throw RuntimeFailure(strprintf("distributed: reduce-scatter of %lld elements over %lld ranks",
                                           (long long)in.numel(), (long long)world));
        at::Tensor out = at::empty({in.numel() / world}, in.options());            // [n]
        c10d::ReduceScatterOptions o;
        o.reduceOp = c10d::ReduceOp::SUM;
        o.timeout = pg->timeout;
        run_collective(*pg, "reduce-scatter", [&] { return pg->backend->_reduce_scatter_base(out, in, o); });
        return out.to(t.device());
    };
    c.broadcast = [pg](at::Tensor& t, int64_t root) {
        std::vector<at::Tensor> v{on_group_device(*pg, t)};
        c10d::BroadcastOptions o;
        o.rootRank = root;
        o.timeout = pg->timeout;
        run_collective(*pg, "broadcast", [&] { return pg->backend->broadcast(v, o); });
        if (!v[0].is_same(t)) t.copy_(v[0]);
    };
    // Started here, waited for by the returned function (collective_start).
    c.reduce_scatter_start = [pg, world = env_.world](const at::Tensor& in, const at::Tensor& out) -> Comm::Wait {
        at::Tensor src = on_group_device(*pg, in).reshape({-1});  // [world * n]
        if (src.numel() != world * out.numel())
            throw RuntimeFailure(strprintf("distributed: reduce-scatter of %lld elements into %lld over %lld ranks",
                                           (long long)src.numel(), (long long)out.numel(), (long long)world));
        c10d::ReduceScatterOptions o;
        o.reduceOp = c10d::ReduceOp::SUM;
        o.timeout = pg->timeout;
        return collective_start(pg, "gradient reduce-scatter", src, out,
                                [&](at::Tensor& dst) { return pg->backend->_reduce_scatter_base(dst, src, o); });
    };
    c.all_gather_start = [pg, world = env_.world](const at::Tensor& in, const at::Tensor& out) -> Comm::Wait {
        at::Tensor src = on_group_device(*pg, in).reshape({-1});  // [n]
        if (out.numel() != world * src.numel())
            throw RuntimeFailure(strprintf("distributed: all-gather of %lld elements into %lld over %lld ranks",
                                           (long long)src.numel(), (long long)out.numel(), (long long)world));
        c10d::AllgatherOptions o;
        o.timeout = pg->timeout;
        return collective_start(pg, "weight all-gather", src, out,
                                [&](at::Tensor& dst) { return pg->backend->_allgather_base(dst, src, o); });
    };
    auto reducer = std::make_shared<GradReducer>(pg);
    c.grads_will_be_final = [reducer](const std::vector<at::Tensor>& params) { reducer->arm(params); };
    c.sum_grads = [reducer](const std::vector<at::Tensor>& params) { reducer->finish(params); };
    c.barrier = [pg] {
        // A one-element all-reduce: works the same on every backend and honours the timeout.
        at::Tensor t = at::zeros({1}, at::TensorOptions().dtype(at::kFloat).device(pg->device));
        all_reduce_sum(*pg, t, "barrier");
    };
    return c;
}

void distributed_check(const DistEnv& /*env*/, const std::string& backend, c10::Device device) {
    if (backend == "nccl" && !device.is_cuda())
        throw UsageError("config error: 'distributed.backend' is nccl, which needs CUDA devices, but the run is on " +
                         device.str() + " (use gloo or auto)");
}

std::unique_ptr<Distributed> distributed_init(const DistEnv& env, const ProcessGroupOptions& o, c10::Device device) {
    distributed_check(env, o.backend, device);
    if (env.world <= 1) return nullptr;
    return std::make_unique<Distributed>(env, o, device);
}

}  // namespace cuset
