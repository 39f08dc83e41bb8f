// cuemu runtime: fibers and barriers for device code, and the subset of the CUDA runtime API the
// bundled programs use, implemented on host memory. See cuemu.h.
// threadIdx & co. are declared `extern const` to programs (device_launch_parameters.h); here they
// are declared writable, and defined below.
#define __STORAGE__ extern
#include "cuemu.h"
#include <cstdint>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <mutex>
#include <sys/mman.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define CUEMU_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define CUEMU_UNPOISON(p, n) ((void)0)
#endif

// The judge's device memory of a KernelBench candidate's run (judge/kernelbench/device.cpp), when
// the process has loaded it before this runtime: cudaMalloc takes memory from it, and kernels and
// the runtime's copies run in an open window, the only code besides torch's data movement that
// may touch it. Elsewhere (CUDABench programs) the weak symbols are null and nothing changes.
extern "C" {
void cuset_device_open(void) __attribute__((weak));
void cuset_device_close(void) __attribute__((weak));
void* cuset_device_malloc(size_t n) __attribute__((weak));
void cuset_device_free(void* p) __attribute__((weak));
int cuset_device_owns(const void* p) __attribute__((weak));
void cuset_device_read_to_host(size_t n) __attribute__((weak));
void cuset_device_kernel_arg(const void* p, unsigned index, unsigned long long launch) __attribute__((weak));
}
namespace cuemu {
// A copy of n bytes from `src` to `dst` that brings device memory to the host is counted there.
static void note_copy(void* dst, const void* src, size_t n, bool from_device)
{
    if (!cuset_device_owns || !cuset_device_read_to_host || cuset_device_owns(dst)) return;
    if (from_device || cuset_device_owns(src)) cuset_device_read_to_host(n);
}
struct DeviceWindow {
    DeviceWindow() { if (cuset_device_open) cuset_device_open(); }
    ~DeviceWindow() { if (cuset_device_close) cuset_device_close(); }
    DeviceWindow(const DeviceWindow&) = delete;
    DeviceWindow& operator=(const DeviceWindow&) = delete;
};
}  // namespace cuemu

extern "C" void cuemu_switch(void** save_sp, void* to_sp);
asm(R"(
.text
.globl cuemu_switch
.type cuemu_switch,@function
cuemu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
)");

namespace cuemu {
struct Warp {
    int alive = 0, arrived = 0;
    unsigned gen = 0;
    uint64_t slot[2][32];
    unsigned valid[2] = {0, 0};
    int op[2] = {0, 0};
};
struct Block {
    uint3 idx;
    int alive = 0, arrived = 0, nthreads = 0;
    unsigned gen = 0;
    int acc[2] = {0, 0};
    std::vector<Warp> warps;
    std::vector<char> smem;
    std::vector<void*> poisoned;  // static __shared__ variables already poisoned in this block
};
struct Fiber {
    void* sp = nullptr;
    char* stack = nullptr;
    uint3 tid;
    Block* blk = nullptr;
    int linear = 0;
    bool done = false;
    bool plain = false;
};

}  // namespace cuemu
extern "C" {
uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
int warpSize = 32;
}
namespace cuemu {
static Fiber* cur = nullptr;
static void* sched_sp = nullptr;
static dim3& g_grid = gridDim;
static dim3& g_block = blockDim;
// Makes f the running thread: what threadIdx and blockIdx read.
static inline void enter(Fiber* f)
{
    cur = f;
    threadIdx = f->tid;
    blockIdx = f->blk->idx;
}
// The launch's body and its argument (Launch::run).
static void (*g_body)(void*) = nullptr;
static void* g_fn = nullptr;
static unsigned long long progress = 0;
static bool used_sync = false;
static int grid_alive = 0, grid_arrived = 0;
static unsigned grid_gen = 0;
static bool in_coop = false;
static const size_t kStack = 64 * 1024;
static std::vector<char*> stack_pool;
static size_t smem_limit = 48 * 1024;
static cudaError_t last_error = cudaSuccess;
static unsigned long long n_launches = 0;
static unsigned long long n_stream_launches = 0;  // on a stream other than a default one

// Pinned host memory (cudaMallocHost, cudaHostAlloc): on a GPU with unified addressing a kernel
// may read and write it, so a kernel given a pointer into it is not refused.
static std::mutex pinned_mu;
static std::vector<std::pair<const char*, size_t>> pinned;
static bool is_pinned(const void* p)
{
    std::lock_guard<std::mutex> lock(pinned_mu);
    for (const auto& [at, n] : pinned)
        if ((const char*)p >= at && (const char*)p <= at + n) return true;
    return false;
}

void kernel_pointer_arg(const void* p, unsigned index)
{
    if (!cuset_device_kernel_arg || p == nullptr || is_pinned(p)) return;
    cuset_device_kernel_arg(p, index, n_launches + 1);
}

void fail(const char* what)
{
    if (cur && !cur->plain)
        fprintf(stderr, "cuemu: %s (block %u,%u,%u thread %u,%u,%u)\n", what, cur->blk->idx.x, cur->blk->idx.y,
                cur->blk->idx.z, cur->tid.x, cur->tid.y, cur->tid.z);
    else
        fprintf(stderr, "cuemu: %s\n", what);
    fflush(stderr);
    _Exit(86);
}

static Fiber* need_fiber(const char* what)
{
    used_sync = true;
    if (!cur) fail("device intrinsic called outside a kernel");
    if (cur->plain) fail(what);
    return cur;
}

int linear_tid() { return cur->linear; }
int lane_id() { return cur->linear & 31; }
int block_threads() { return (int)(g_block.x * g_block.y * g_block.z); }
void* dyn_smem() { return cur->blk->smem.data(); }

void poison_shared(void* p, size_t n)
{
    std::vector<void*>& done = cur->blk->poisoned;
    if (std::find(done.begin(), done.end(), p) != done.end()) return;
    done.push_back(p);
    // A new block finds garbage in shared memory, not its predecessor's data. 0x7F bytes are a huge
    // finite float/double (fmaxf would silently skip a NaN) and a large int.
    memset(p, 0x7F, n);
}

static void yield_to_sched() { cuemu_switch(&cur->sp, sched_sp); }

void syncthreads()
{
    Fiber* f = need_fiber("__syncthreads in a kernel whose thread 0 never synchronised");
    Block* b = f->blk;
    unsigned g = b->gen;
    ++progress;
    if (++b->arrived == b->alive) { b->arrived = 0; ++b->gen; return; }
    while (b->gen == g) yield_to_sched();
}

int sync_reduce(int pred, int kind)
{
    Fiber* f = need_fiber("__syncthreads_count in a kernel whose thread 0 never synchronised");
    Block* b = f->blk;
    unsigned g = b->gen;
    int& acc = b->acc[g & 1];
    if (b->arrived == 0) acc = (kind == 1) ? 1 : 0;
    if (kind == 0) acc += pred != 0;
    else if (kind == 1) acc = acc && pred;
    else acc = acc || pred;
    ++progress;
    if (++b->arrived == b->alive) { b->arrived = 0; ++b->gen; }
    else while (b->gen == g) yield_to_sched();
    return b->acc[g & 1];
}

unsigned long long warp_exchange(unsigned mask, unsigned long long bits, int mode, int arg, int width, int op)
{
    Fiber* f = need_fiber("warp collective in a kernel whose thread 0 never used one");
    Warp& w = f->blk->warps[f->linear >> 5];
    const int lane = f->linear & 31;
    if (!(mask & (1u << lane))) fail("warp collective called by a lane outside its mask");
    if (width <= 0 || width > 32 || (width & (width - 1))) fail("invalid shuffle width");
    const unsigned g = w.gen;
    const int k = g & 1;
    if (w.arrived == 0) { w.valid[k] = 0; w.op[k] = op; }
    else if (w.op[k] != op) fail("lanes of a warp are in different warp collectives (divergence)");
    w.slot[k][lane] = bits;
    w.valid[k] |= 1u << lane;
    ++progress;
    if (++w.arrived == w.alive) { w.arrived = 0; ++w.gen; }
    else while (w.gen == g) yield_to_sched();

    const unsigned present = w.valid[k];
    if (op == 0) return 0;  // __syncwarp
    if ((mask & present) != mask) fail("warp collective: a lane named in the mask has exited or did not participate");
    if (op == 2) {
        unsigned r = 0;
        for (int l = 0; l < 32; ++l)
            if ((present >> l & 1u) && (mask >> l & 1u) && w.slot[k][l]) r |= 1u << l;
        return r;
    }
    const int seg = lane & ~(width - 1), in_seg = lane & (width - 1);
    int src = lane;
    switch (mode) {
    case 0: src = seg + (arg & (width - 1)); break;
    case 1: src = (in_seg >= arg) ? lane - arg : lane; break;
    case 2: src = (in_seg + arg < width) ? lane + arg : lane; break;
    case 3: src = lane ^ arg; if ((src & ~(width - 1)) != seg) src = lane; break;
    }
    if (src < 0 || src > 31 || !(present >> src & 1u)) fail("shuffle reads a lane that has exited or is not in the warp");
    return w.slot[k][src];
}

void syncwarp(unsigned mask) { (void)warp_exchange(mask, 0, 0, 0, 32, 0); }

void grid_sync()
{
    need_fiber("grid sync outside a cooperative launch");
    if (!in_coop) fail("grid.sync() in a kernel not launched with cudaLaunchCooperativeKernel");
    unsigned g = grid_gen;
    ++progress;
    if (++grid_arrived == grid_alive) { grid_arrived = 0; ++grid_gen; return; }
    while (grid_gen == g) yield_to_sched();
}

unsigned long long grid_rank()
{
    uint3 b = cur->blk->idx;
    unsigned long long block_lin = b.x + (unsigned long long)g_grid.x * (b.y + (unsigned long long)g_grid.y * b.z);
    return block_lin * block_threads() + cur->linear;
}
unsigned long long grid_size() { return (unsigned long long)g_grid.x * g_grid.y * g_grid.z * block_threads(); }

static void finish_current()
{
    Fiber* f = cur;
    f->done = true;
    ++progress;
    Block* b = f->blk;
    if (--b->alive > 0 && b->arrived > 0 && b->arrived == b->alive) { b->arrived = 0; ++b->gen; }
    Warp& w = b->warps[f->linear >> 5];
    if (--w.alive > 0 && w.arrived > 0 && w.arrived == w.alive) { w.arrived = 0; ++w.gen; }
    if (in_coop && --grid_alive > 0 && grid_arrived > 0 && grid_arrived == grid_alive) { grid_arrived = 0; ++grid_gen; }
}

static void fiber_entry()
{
    g_body(g_fn);
    finish_current();
    cuemu_switch(&cur->sp, sched_sp);
    fail("finished fiber resumed");
}

static char* get_stack(size_t i)
{
    while (stack_pool.size() <= i) stack_pool.push_back((char*)malloc(kStack));
    CUEMU_UNPOISON(stack_pool[i], kStack);
    return stack_pool[i];
}

static void init_fiber(Fiber& f, size_t stack_index)
{
    f.stack = get_stack(stack_index);
    uintptr_t top = ((uintptr_t)f.stack + kStack) & ~(uintptr_t)15;
    void** sp = (void**)top;
    *--sp = nullptr;                    // fake return address of fiber_entry
    *--sp = (void*)&fiber_entry;        // popped by `ret`
    for (int r = 0; r < 6; ++r) *--sp = nullptr;  // rbp rbx r12-r15
    f.sp = sp;
    f.done = false;
    f.plain = false;
}

static void setup_block(Block& b, uint3 idx, size_t smem)
{
    b.idx = idx;
    b.nthreads = block_threads();
    b.alive = b.nthreads;
    b.arrived = 0;
    b.gen = 0;
    b.warps.assign((b.nthreads + 31) / 32, Warp{});
    for (size_t w = 0; w < b.warps.size(); ++w) b.warps[w].alive = std::min(32, b.nthreads - (int)w * 32);
    b.smem.assign(smem, (char)0xFF);  // uninitialised shared memory reads as NaN / -1
    b.poisoned.clear();
}

static uint3 thread_coords(int linear)
{
    uint3 t;
    t.x = linear % g_block.x;
    t.y = (linear / g_block.x) % g_block.y;
    t.z = linear / (g_block.x * g_block.y);
    return t;
}

// CUEMU_SCHED picks the order in which threads (and blocks) run: "forward" (default), "reverse",
// "random" (a new random order each round, seeded by CUEMU_SEED) or "chaos" (each step resumes a
// random thread) or "lag" (one random warp of each block only runs when every other thread is
// blocked, so the others run as far ahead as the barriers allow). A race-free program passes under
// every order; together they expose most missing barriers (lag finds the write-after-read ones).
static int sched_mode()
{
    static int mode = [] {
        const char* e = getenv("CUEMU_SCHED");
        if (!e || !strcmp(e, "forward")) return 0;
        if (!strcmp(e, "reverse")) return 1;
        if (!strcmp(e, "random")) return 2;
        if (!strcmp(e, "chaos")) return 3;
        if (!strcmp(e, "lag")) return 4;
        fail("CUEMU_SCHED must be forward, reverse, random, chaos or lag");
    }();
    return mode;
}
static unsigned long long rng_state = 0;
static unsigned long long next_random()
{
    if (!rng_state) {
        const char* e = getenv("CUEMU_SEED");
        rng_state = 0x9E3779B97F4A7C15ull ^ (e ? strtoull(e, nullptr, 10) : 1ull);
    }
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return rng_state;
}
static void make_order(std::vector<size_t>& order, size_t n)
{
    order.resize(n);
    for (size_t i = 0; i < n; ++i) order[i] = (sched_mode() == 1) ? n - 1 - i : i;
    if (sched_mode() >= 2)
        for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[next_random() % i]);
}

static void run_fibers_chaos(std::vector<Fiber>& fs)
{
    std::vector<size_t> live(fs.size());
    for (size_t i = 0; i < fs.size(); ++i) live[i] = i;
    unsigned long long idle_steps = 0;
    while (!live.empty()) {
        const size_t pick = next_random() % live.size();
        Fiber& f = fs[live[pick]];
        const unsigned long long before = progress;
        enter(&f);
        cuemu_switch(&sched_sp, f.sp);
        cur = nullptr;
        if (f.done) { live[pick] = live.back(); live.pop_back(); }
        idle_steps = (progress == before) ? idle_steps + 1 : 0;
        if (idle_steps > 64 * live.size() + 64) {
            // Possibly a deadlock: give every live thread one more turn before deciding.
            const unsigned long long mark = progress;
            for (size_t i : live) { enter(&fs[i]); cuemu_switch(&sched_sp, fs[i].sp); cur = nullptr; }
            if (progress == mark) fail("deadlock: every remaining thread waits at a barrier that cannot complete");
            for (size_t k = 0; k < live.size();)
                if (fs[live[k]].done) { live[k] = live.back(); live.pop_back(); } else ++k;
            idle_steps = 0;
        }
    }
}

static void run_fibers_lag(std::vector<Fiber>& fs)
{
    const int n_warps = (block_threads() + 31) / 32;
    const int slow = (int)(next_random() % n_warps);
    auto round = [&](bool laggards) {
        for (Fiber& f : fs) {
            if (f.done || ((f.linear >> 5) == slow) != laggards) continue;
            enter(&f);
            cuemu_switch(&sched_sp, f.sp);
        }
        cur = nullptr;
    };
    auto remaining = [&] { size_t r = 0; for (Fiber& f : fs) r += !f.done; return r; };
    while (remaining()) {
        unsigned long long before = progress;
        round(false);
        if (progress != before) continue;  // the fast threads can still move
        round(true);
        if (progress == before) fail("deadlock: every remaining thread waits at a barrier that cannot complete");
    }
}

static void run_fibers(std::vector<Fiber>& fs)
{
    if (sched_mode() == 3) { run_fibers_chaos(fs); return; }
    if (sched_mode() == 4) { run_fibers_lag(fs); return; }
    size_t remaining = fs.size();
    std::vector<size_t> order;
    while (remaining) {
        unsigned long long before = progress;
        make_order(order, fs.size());
        for (size_t o : order) {
            Fiber& f = fs[o];
            if (f.done) continue;
            enter(&f);
            cuemu_switch(&sched_sp, f.sp);
            if (f.done) --remaining;
        }
        cur = nullptr;
        if (remaining && progress == before) fail("deadlock: every remaining thread waits at a barrier that cannot complete");
    }
}

static uint3 block_coords(unsigned long long lin)
{
    uint3 b;
    b.x = lin % g_grid.x;
    b.y = (lin / g_grid.x) % g_grid.y;
    b.z = lin / ((unsigned long long)g_grid.x * g_grid.y);
    return b;
}

void Launch::run(void (*body)(void*), void* fn)
{
    DeviceWindow window;
    ++n_launches;
    // 0, cudaStreamLegacy (1) and cudaStreamPerThread (2) are default streams.
    if ((uintptr_t)stream > 2) ++n_stream_launches;
    const unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    if (threads == 0 || threads > 1024 || b.z > 64 || g.x == 0 || g.y == 0 || g.z == 0 || g.y > 65535 || g.z > 65535) {
        fprintf(stderr, "cuemu: invalid launch configuration grid(%u,%u,%u) block(%u,%u,%u)\n", g.x, g.y, g.z, b.x, b.y, b.z);
        last_error = cudaErrorInvalidConfiguration;
        return;
    }
    if (smem > smem_limit) {
        fprintf(stderr, "cuemu: %zu bytes of dynamic shared memory exceed the limit %zu\n", smem, smem_limit);
        last_error = cudaErrorInvalidValue;
        return;
    }
    if (getenv("CUEMU_TRACE")) fprintf(stderr, "cuemu: launch %llu grid(%u,%u,%u) block(%u,%u,%u) smem %zu%s\n", n_launches, g.x, g.y, g.z, b.x, b.y, b.z, smem, coop ? " coop" : "");
    g_grid = g;
    g_block = b;
    g_body = body;
    g_fn = fn;
    const unsigned long long n_blocks = (unsigned long long)g.x * g.y * g.z;
    const int nt = (int)threads;

    if (coop) {
        int per_sm = 0;
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, nullptr, nt, smem);
        if (n_blocks > (unsigned long long)per_sm * 4) {
            fprintf(stderr, "cuemu: cooperative launch of %llu blocks exceeds co-residency (%d per SM x 4 SMs)\n", n_blocks, per_sm);
            last_error = cudaErrorCooperativeLaunchTooLarge;
            return;
        }
        in_coop = true;
        std::vector<Block> blocks(n_blocks);
        std::vector<Fiber> fs(n_blocks * nt);
        grid_alive = (int)(n_blocks * nt);
        grid_arrived = 0;
        for (unsigned long long bl = 0; bl < n_blocks; ++bl) {
            setup_block(blocks[bl], block_coords(bl), smem);
            for (int t = 0; t < nt; ++t) {
                Fiber& f = fs[bl * nt + t];
                init_fiber(f, bl * nt + t);
                f.tid = thread_coords(t);
                f.linear = t;
                f.blk = &blocks[bl];
            }
        }
        run_fibers(fs);
        in_coop = false;
        return;
    }

    Block blk;
    std::vector<Fiber> fs(nt);
    bool plain = false;
    std::vector<size_t> block_order, thread_order;
    if (sched_mode() >= 2 && n_blocks > 10000000) fail("random block order of more than 10^7 blocks");
    if (sched_mode() >= 2) make_order(block_order, n_blocks);
    for (unsigned long long step = 0; step < n_blocks; ++step) {
        const unsigned long long bl = sched_mode() == 0 ? step : sched_mode() == 1 ? n_blocks - 1 - step : block_order[step];
        setup_block(blk, block_coords(bl), smem);
        if (plain) {  // the probe block never synchronised: run threads one after another
            Fiber f;
            f.plain = true;
            f.blk = &blk;
            make_order(thread_order, nt);
            for (size_t t : thread_order) {
                f.tid = thread_coords((int)t);
                f.linear = t;
                enter(&f);
                body(fn);
            }
            cur = nullptr;
            continue;
        }
        used_sync = false;
        for (int t = 0; t < nt; ++t) {
            init_fiber(fs[t], t);
            fs[t].tid = thread_coords(t);
            fs[t].linear = t;
            fs[t].blk = &blk;
        }
        run_fibers(fs);
        if (step == 0 && !used_sync && !getenv("CUEMU_NO_PLAIN")) plain = true;
    }
}
}  // namespace cuemu

// The number of launches so far, valid or not: the judge of KernelBench candidates reads it from an
// extension built with this runtime, to tell a forward that launched no kernel of its own, ...
extern "C" unsigned long long cuemu_launch_count(void) { return cuemu::n_launches; }
// ... and the number of them made on a stream the program created (not a default stream).
extern "C" unsigned long long cuemu_stream_launch_count(void) { return cuemu::n_stream_launches; }

// ------------------------------------------------------------------ runtime API
using namespace cuemu;
// Mutation testing of the programs' own checks: CUEMU_PERTURB=N corrupts the N-th device-to-host
// copy (one byte near the middle of the buffer); CUEMU_PERTURB_MODE=gross flips bit 6 of the top
// byte of an 8-byte-aligned word (exponent bits of float/double/half, bit 30 of an int), "mild"
// flips bit 0 of byte 2 (a 2^-7 relative change of a float).
static int d2h_count = 0;
static void count_report() { if (getenv("CUEMU_COUNT")) fprintf(stderr, "cuemu: %d device-to-host copies\n", d2h_count); }
static void after_d2h(void* dst, size_t n)
{
    static bool registered = (atexit(count_report), true);
    (void)registered;
    ++d2h_count;
    const char* e = getenv("CUEMU_PERTURB");
    if (!e || atoi(e) != d2h_count || n == 0) return;
    const char* mode = getenv("CUEMU_PERTURB_MODE");
    bool mild = mode && strcmp(mode, "mild") == 0;
    size_t base = (n / 2) & ~(size_t)7;
    size_t off = mild ? base + 2 : base + 7;
    if (off >= n) off = n - 1;
    ((unsigned char*)dst)[off] ^= mild ? 0x01 : 0x40;
    fprintf(stderr, "cuemu: perturbed byte %zu of a %zu-byte copy\n", off, n);
}
extern "C" {
// Device buffers of 2 MiB and more sit on transparent huge pages where the kernel offers them:
// a GPU's strided (column) accesses would otherwise miss the TLB on every element.
static void* device_alloc(size_t n)
{
    if (cuset_device_malloc) return cuset_device_malloc(n);
#if defined(__SANITIZE_ADDRESS__)
    return malloc(n ? n : 1);  // under AddressSanitizer: exact sizes, so that any access past the end is reported
#endif
    const size_t huge = 2u << 20;
    if (n < huge) return malloc(n ? n : 1);
    void* p = aligned_alloc(huge, (n + huge - 1) / huge * huge);
    if (p) madvise(p, (n + huge - 1) / huge * huge, MADV_HUGEPAGE);
    return p;
}
cudaError_t cudaMalloc(void** p, size_t n)
{
    *p = device_alloc(n);
    if (!*p) return cudaErrorMemoryAllocation;
    // A device allocation reads as zero, as a fresh allocation does on NVIDIA's drivers (they clear
    // memory before a process sees it): CUDABench's references rely on it (DWT_Haar compares
    // entries its kernel never writes against 0). Shared memory stays poisoned (setup_block): on a
    // GPU it holds what the previous block left.
    DeviceWindow window;
    memset(*p, 0, n);
    return cudaSuccess;
}
cudaError_t cudaFree(void* p)
{
    if (cuset_device_free) cuset_device_free(p);
    else free(p);
    return cudaSuccess;
}
cudaError_t cudaMallocHost(void** p, size_t n)
{
    *p = malloc(n ? n : 1);
    if (!*p) return cudaErrorMemoryAllocation;
    std::lock_guard<std::mutex> lock(cuemu::pinned_mu);
    cuemu::pinned.emplace_back((const char*)*p, n);
    return cudaSuccess;
}
cudaError_t cudaFreeHost(void* p)
{
    {
        std::lock_guard<std::mutex> lock(cuemu::pinned_mu);
        auto& v = cuemu::pinned;
        v.erase(std::remove_if(v.begin(), v.end(), [&](const auto& e) { return e.first == (const char*)p; }), v.end());
    }
    free(p);
    return cudaSuccess;
}
cudaError_t cudaHostAlloc(void** p, size_t n, unsigned int) { return cudaMallocHost(p, n); }
cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t w, size_t h)
{
    *pitch = (w + 511) & ~(size_t)511;
    return cudaMalloc(p, *pitch * h);
}
cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind k) { DeviceWindow w; note_copy(d, s, n, false); memcpy(d, s, n); if (k == cudaMemcpyDeviceToHost) after_d2h(d, n); return cudaSuccess; }
cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t) { DeviceWindow w; note_copy(d, s, n, false); memcpy(d, s, n); if (k == cudaMemcpyDeviceToHost) after_d2h(d, n); return cudaSuccess; }
cudaError_t cudaMemcpy2D(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, cudaMemcpyKind k)
{
    DeviceWindow window;
    note_copy(d, s, w * h, false);
    for (size_t r = 0; r < h; ++r) memcpy((char*)d + r * dp, (const char*)s + r * sp, w);
    if (k == cudaMemcpyDeviceToHost) after_d2h(d, dp * (h - 1) + w);
    return cudaSuccess;
}
cudaError_t cudaMemset(void* d, int v, size_t n) { DeviceWindow w; memset(d, v, n); return cudaSuccess; }
cudaError_t cudaMemsetAsync(void* d, int v, size_t n, cudaStream_t) { DeviceWindow w; memset(d, v, n); return cudaSuccess; }
cudaError_t cudaMemcpyToSymbol(const void* sym, const void* src, size_t n, size_t off, cudaMemcpyKind)
{
    DeviceWindow window;
    memcpy((char*)sym + off, src, n);
    return cudaSuccess;
}
cudaError_t cudaMemcpyFromSymbol(void* dst, const void* sym, size_t n, size_t off, cudaMemcpyKind)
{
    DeviceWindow window;
    note_copy(dst, sym, n, true);
    memcpy(dst, (const char*)sym + off, n);
    return cudaSuccess;
}
cudaError_t cudaGetLastError(void) { cudaError_t e = last_error; last_error = cudaSuccess; return e; }
cudaError_t cudaPeekAtLastError(void) { return last_error; }
const char* cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "cuemu error"; }
const char* cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : "cudaErrorCuemu"; }
cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
cudaError_t cudaStreamCreate(cudaStream_t* s) { *s = (cudaStream_t)malloc(8); return cudaSuccess; }
cudaError_t cudaStreamDestroy(cudaStream_t s) { free((void*)s); return cudaSuccess; }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) { return cudaStreamCreate(s); }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
cudaError_t cudaSetDevice(int) { return cudaSuccess; }
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int)
{
    switch (a) {
    case cudaDevAttrMultiProcessorCount: *v = 4; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = 232448; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *v = 49152; break;
    case cudaDevAttrCooperativeLaunch: *v = 1; break;
    case cudaDevAttrMaxThreadsPerBlock: *v = 1024; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *v = 2048; break;
    case cudaDevAttrWarpSize: *v = 32; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *v = 233472; break;
    case cudaDevAttrComputeCapabilityMajor: *v = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
    default: *v = 0; break;
    }
    return cudaSuccess;
}
cudaError_t cudaFuncSetAttribute(const void*, cudaFuncAttribute a, int v)
{
    if (a == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (v > 232448) return cudaErrorInvalidValue;
        smem_limit = std::max(smem_limit, (size_t)v);
    }
    return cudaSuccess;
}
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* a, const void*)
{
    memset(a, 0, sizeof(*a));
    a->maxThreadsPerBlock = 1024;
    a->numRegs = 32;
    return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* n, const void*, int bs, size_t, unsigned int)
{
    *n = bs > 0 ? std::max(1, std::min(2, 2048 / bs)) : 0;
    return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void* f, int bs, size_t sm)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, f, bs, sm, 0);
}
}

// ------------------------------------------------------------------ arrays and texture objects
// A CUDA array: rows of w elements of the channel format's size, h rows (1 for a 1D array).
struct cudaArray {
    cudaChannelFormatDesc desc;
    size_t w = 0, h = 1, elem = 0;
    std::vector<unsigned char> data;
};
namespace cuemu {
struct Texture {
    const unsigned char* base = nullptr;
    size_t w = 0, h = 1, pitch = 0, elem = 0;
    cudaChannelFormatDesc desc;
    cudaTextureDesc td;
};
static size_t format_bytes(const cudaChannelFormatDesc& d) { return (size_t)(d.x + d.y + d.z + d.w) / 8; }

static float half_bits_to_float(unsigned short h)
{
    const unsigned sign = (h >> 15) & 1u, ex = (h >> 10) & 31u, man = h & 1023u;
    float v;
    if (ex == 0) v = std::ldexp((float)man, -24);
    else if (ex == 31) v = man ? NAN : INFINITY;
    else v = std::ldexp((float)(man | 1024u), (int)ex - 25);
    return sign ? -v : v;
}

// Channel c of the texel at p as a float: float formats as they are, integers as values or,
// normalised, in [0, 1] (unsigned) or [-1, 1] (signed).
static float channel_value(const Texture& t, const unsigned char* p, int c, bool normalise)
{
    const int bits[4] = {t.desc.x, t.desc.y, t.desc.z, t.desc.w};
    size_t off = 0;
    for (int k = 0; k < c; ++k) off += (size_t)bits[k] / 8;
    p += off;
    const int b = bits[c];
    if (t.desc.f == cudaChannelFormatKindFloat) {
        if (b == 32) { float f; memcpy(&f, p, 4); return f; }
        if (b == 16) { unsigned short h; memcpy(&h, p, 2); return half_bits_to_float(h); }
        fail("texture: unsupported float channel width");
    }
    const bool sign = t.desc.f == cudaChannelFormatKindSigned;
    double v;
    if (b == 8) v = sign ? (double)*(const int8_t*)p : (double)*p;
    else if (b == 16) { uint16_t u; memcpy(&u, p, 2); v = sign ? (double)(int16_t)u : (double)u; }
    else if (b == 32) { uint32_t u; memcpy(&u, p, 4); v = sign ? (double)(int32_t)u : (double)u; }
    else fail("texture: unsupported channel width");
    if (!normalise) return (float)v;
    const double top = sign ? std::ldexp(1.0, b - 1) - 1 : std::ldexp(1.0, b) - 1;
    return (float)std::max(-1.0, v / top);
}

// Texel index i along an axis of n texels under address mode m; -1 = outside (border).
static long long address(long long i, long long n, cudaTextureAddressMode m)
{
    if (i >= 0 && i < n) return i;
    switch (m) {
    case cudaAddressModeWrap: { long long r = i % n; return r < 0 ? r + n : r; }
    case cudaAddressModeMirror: {
        long long r = i % (2 * n);
        if (r < 0) r += 2 * n;
        return r < n ? r : 2 * n - 1 - r;
    }
    case cudaAddressModeBorder: return -1;
    default: return i < 0 ? 0 : n - 1;
    }
}

static const unsigned char* texel(const Texture& t, long long ix, long long iy)
{
    return t.base + (size_t)iy * t.pitch + (size_t)ix * t.elem;
}

void tex_sample(cudaTextureObject_t obj, int dims, bool fetch, double x, double y, void* out, size_t n)
{
    const Texture* t = reinterpret_cast<const Texture*>(obj);
    if (!t) fail("texture fetch from texture object 0");
    const int channels = (t->desc.x > 0) + (t->desc.y > 0) + (t->desc.z > 0) + (t->desc.w > 0);
    if (fetch) {
        long long i = (long long)x;
        if (i < 0 || (size_t)i >= t->w * t->h) { memset(out, 0, n); return; }
        const bool norm = t->td.readMode == cudaReadModeNormalizedFloat && t->desc.f != cudaChannelFormatKindFloat;
        if (!norm) { memcpy(out, t->base + (size_t)i * t->elem, std::min(n, t->elem)); return; }
        float f[4] = {0, 0, 0, 0};
        for (int c = 0; c < channels; ++c) f[c] = channel_value(*t, t->base + (size_t)i * t->elem, c, true);
        memcpy(out, f, std::min(n, sizeof(f)));
        return;
    }
    const long long w = (long long)t->w, h = dims == 2 ? (long long)t->h : 1;
    double u = x, v = dims == 2 ? y : 0.0;
    if (t->td.normalizedCoords) { u *= (double)w; v *= (double)h; }
    const bool linear = t->td.filterMode == cudaFilterModeLinear;
    const bool norm = t->td.readMode == cudaReadModeNormalizedFloat && t->desc.f != cudaChannelFormatKindFloat;
    if (!linear && !norm) {
        long long ix = address((long long)std::floor(u), w, t->td.addressMode[0]);
        long long iy = dims == 2 ? address((long long)std::floor(v), h, t->td.addressMode[1]) : 0;
        if (ix < 0 || iy < 0) { memset(out, 0, n); return; }
        memcpy(out, texel(*t, ix, iy), std::min(n, t->elem));
        return;
    }
    // Float result: the (bi)linear blend of the neighbouring texels (weights from u - 0.5), or
    // the nearest texel's converted channels.
    float acc[4] = {0, 0, 0, 0};
    auto add = [&](long long ix, long long iy, double wgt) {
        ix = address(ix, w, t->td.addressMode[0]);
        iy = dims == 2 ? address(iy, h, t->td.addressMode[1]) : 0;
        for (int c = 0; c < channels; ++c) {
            float val = (ix < 0 || iy < 0) ? t->td.borderColor[c] : channel_value(*t, texel(*t, ix, iy), c, norm);
            acc[c] += (float)(wgt * val);
        }
    };
    if (!linear) {
        add((long long)std::floor(u), (long long)std::floor(v), 1.0);
    } else {
        const double fu = u - 0.5, fv = v - 0.5;
        const long long i0 = (long long)std::floor(fu), j0 = (long long)std::floor(fv);
        const double a = fu - (double)i0, b = fv - (double)j0;
        if (dims == 1) {
            add(i0, 0, 1 - a);
            add(i0 + 1, 0, a);
        } else {
            add(i0, j0, (1 - a) * (1 - b));
            add(i0 + 1, j0, a * (1 - b));
            add(i0, j0 + 1, (1 - a) * b);
            add(i0 + 1, j0 + 1, a * b);
        }
    }
    memcpy(out, acc, std::min(n, sizeof(acc)));
}
}  // namespace cuemu

extern "C" {
struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f)
{
    cudaChannelFormatDesc d;
    d.x = x; d.y = y; d.z = z; d.w = w; d.f = f;
    return d;
}
cudaError_t cudaMallocArray(cudaArray_t* array, const struct cudaChannelFormatDesc* desc, size_t width, size_t height, unsigned int)
{
    if (!array || !desc || width == 0 || format_bytes(*desc) == 0) return cudaErrorInvalidValue;
    cudaArray* a = new cudaArray;
    a->desc = *desc;
    a->w = width;
    a->h = height ? height : 1;
    a->elem = format_bytes(*desc);
    a->data.assign(a->w * a->h * a->elem, 0);  // zeroed, as device memory (cudaMalloc)
    *array = a;
    return cudaSuccess;
}
cudaError_t cudaFreeArray(cudaArray_t array) { delete array; return cudaSuccess; }
cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc* desc, cudaArray_const_t array)
{
    *desc = array->desc;
    return cudaSuccess;
}
cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch, size_t width, size_t height, enum cudaMemcpyKind)
{
    DeviceWindow window;
    const size_t row = dst->w * dst->elem;
    if (wOffset + width > row || hOffset + height > dst->h || (height > 1 && spitch < width)) return cudaErrorInvalidValue;
    for (size_t r = 0; r < height; ++r) memcpy(dst->data.data() + (hOffset + r) * row + wOffset, (const char*)src + r * spitch, width);
    return cudaSuccess;
}
cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count, enum cudaMemcpyKind)
{
    DeviceWindow window;
    const size_t off = hOffset * dst->w * dst->elem + wOffset;
    if (off + count > dst->data.size()) return cudaErrorInvalidValue;
    memcpy(dst->data.data() + off, src, count);
    return cudaSuccess;
}
cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t width, size_t height, enum cudaMemcpyKind k)
{
    DeviceWindow window;
    const size_t row = src->w * src->elem;
    if (wOffset + width > row || hOffset + height > src->h || (height > 1 && dpitch < width)) return cudaErrorInvalidValue;
    note_copy(dst, nullptr, width * height, true);
    for (size_t r = 0; r < height; ++r) memcpy((char*)dst + r * dpitch, src->data.data() + (hOffset + r) * row + wOffset, width);
    if (k == cudaMemcpyDeviceToHost && height) after_d2h(dst, dpitch * (height - 1) + width);
    return cudaSuccess;
}
cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count, enum cudaMemcpyKind k)
{
    DeviceWindow window;
    const size_t off = hOffset * src->w * src->elem + wOffset;
    if (off + count > src->data.size()) return cudaErrorInvalidValue;
    note_copy(dst, nullptr, count, true);
    memcpy(dst, src->data.data() + off, count);
    if (k == cudaMemcpyDeviceToHost) after_d2h(dst, count);
    return cudaSuccess;
}
cudaError_t cudaCreateTextureObject(cudaTextureObject_t* obj, const struct cudaResourceDesc* res, const struct cudaTextureDesc* td, const struct cudaResourceViewDesc*)
{
    if (!obj || !res || !td) return cudaErrorInvalidValue;
    Texture* t = new Texture;
    t->td = *td;
    switch (res->resType) {
    case cudaResourceTypeArray: {
        cudaArray* a = res->res.array.array;
        if (!a) { delete t; return cudaErrorInvalidValue; }
        t->base = a->data.data(); t->desc = a->desc; t->w = a->w; t->h = a->h; t->elem = a->elem; t->pitch = a->w * a->elem;
        break;
    }
    case cudaResourceTypeLinear:
        t->desc = res->res.linear.desc;
        t->elem = format_bytes(t->desc);
        if (!t->elem) { delete t; return cudaErrorInvalidValue; }
        t->base = (const unsigned char*)res->res.linear.devPtr;
        t->w = res->res.linear.sizeInBytes / t->elem; t->h = 1; t->pitch = res->res.linear.sizeInBytes;
        break;
    case cudaResourceTypePitch2D:
        t->desc = res->res.pitch2D.desc;
        t->elem = format_bytes(t->desc);
        if (!t->elem) { delete t; return cudaErrorInvalidValue; }
        t->base = (const unsigned char*)res->res.pitch2D.devPtr;
        t->w = res->res.pitch2D.width; t->h = res->res.pitch2D.height; t->pitch = res->res.pitch2D.pitchInBytes;
        break;
    default:
        delete t;
        return cudaErrorInvalidValue;
    }
    *obj = (cudaTextureObject_t)t;
    return cudaSuccess;
}
cudaError_t cudaDestroyTextureObject(cudaTextureObject_t obj) { delete (Texture*)obj; return cudaSuccess; }
}
