// The device memory of a KernelBench candidate's emulated run: a shared library the judge builds
// once per machine (kernelbench-<hash>/device.so) and the run stage's harness loads before the
// candidate, with RTLD_GLOBAL so that the emulator's runtime in every extension finds it.
//
// On a GPU, device memory is reached only by kernels and by copies the runtime makes (torch's
// data-movement operators, cudaMemcpy/cudaMemset); host code that reads or writes it through a
// pointer faults. Here torch's CPU allocator (what the run's "CUDA" tensors are made with) is
// replaced by one whose allocations lie in a region reserved at start, and the allocations are
// closed (PROT_NONE) while forward runs except inside an open window: a kernel launch, one of the
// emulator's copies, one of torch's data-movement operators (the harness's dispatch trace opens
// it), the harness's own work. Memory made while closed is open until the next close (torch
// writes a new tensor's host values into it, as into host memory before a copy); every close
// closes all of it. Host code that touches closed memory (torch's computing kernels reached
// around the trace, numpy, Python's reading of elements, a thread, a forked child, a host loop
// over data_ptr()) takes SIGSEGV; the handler prints one line, "cuset-device-memory: ...", and
// ends the process with status 87, which the judge reads as not-kernel-output.
//
// The library is in the candidate's process, so a candidate written against it can open the
// region itself (docs/judge.md says so); it closes the paths that compute outputs on the host
// without asking the judge for access.
#undef __CUDACC__
#undef __NVCC__
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

namespace {

constexpr size_t kRegionBytes = size_t(1) << 40;  // address space only: no memory until allocated
constexpr int kExitStatus = 87;

char* g_base = nullptr;
size_t g_top = 0;  // bytes of the region handed out so far (a bump pointer)
size_t g_page = 4096;
std::mutex g_mu;
int g_depth = 1;  // > 0: open
struct Block {
    size_t bytes;
    bool closed;
};
std::map<uintptr_t, Block> g_live;       // allocations by address
std::multimap<size_t, uintptr_t> g_free;  // freed ranges by size, for reuse
std::atomic<unsigned long long> g_host_reads{0};

bool inside(const void* p) {
    const char* c = static_cast<const char*>(p);
    return g_base != nullptr && c >= g_base && c < g_base + kRegionBytes;
}

void set_closed(uintptr_t at, Block& b, bool closed) {
    if (b.closed == closed) return;
    ::mprotect(reinterpret_cast<void*>(at), b.bytes, closed ? PROT_NONE : PROT_READ | PROT_WRITE);
    b.closed = closed;
}

void* allocate_bytes(size_t n) {
    const size_t bytes = (n + g_page - 1) / g_page * g_page;
    std::lock_guard<std::mutex> lock(g_mu);
    uintptr_t at = 0;
    auto it = g_free.lower_bound(bytes);
    if (it != g_free.end()) {
        at = it->second;
        const size_t have = it->first;
        g_free.erase(it);
        if (have > bytes) g_free.emplace(have - bytes, at + bytes);
    } else {
        if (g_top + bytes > kRegionBytes) return nullptr;
        at = reinterpret_cast<uintptr_t>(g_base) + g_top;
        g_top += bytes;
    }
    void* p = ::mmap(reinterpret_cast<void*>(at), bytes, PROT_READ | PROT_WRITE,
                     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        g_free.emplace(bytes, at);
        return nullptr;
    }
    g_live[at] = {bytes, false};
    return p;
}

void free_bytes(void* p) {
    if (p == nullptr) return;
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_live.find(reinterpret_cast<uintptr_t>(p));
    if (it == g_live.end()) return;
    const size_t bytes = it->second.bytes;
    // The pages go back to the system; the range stays reserved (and closed) for reuse.
    ::mmap(p, bytes, PROT_NONE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    g_live.erase(it);
    g_free.emplace(bytes, reinterpret_cast<uintptr_t>(p));
}

void delete_bytes(void* p) { free_bytes(p); }

struct DeviceAllocator final : c10::Allocator {
    c10::DataPtr allocate(size_t n) override {
        if (n == 0) return {nullptr, nullptr, &delete_bytes, c10::Device(c10::DeviceType::CPU)};
        void* p = allocate_bytes(n);
        TORCH_CHECK(p != nullptr, "cuset's device memory: cannot allocate ", n, " bytes");
        return {p, p, &delete_bytes, c10::Device(c10::DeviceType::CPU)};
    }
    c10::DeleterFnPtr raw_deleter() const override { return &delete_bytes; }
    void copy_data(void* dest, const void* src, size_t count) const override { default_copy_data(dest, src, count); }
};

DeviceAllocator g_allocator;

void write_all(const char* s) {
    size_t n = std::strlen(s);
    while (n > 0) {
        const ssize_t w = ::write(2, s, n);
        if (w <= 0) return;
        s += w;
        n -= static_cast<size_t>(w);
    }
}

void on_fault(int sig, siginfo_t* info, void*) {
    if (!inside(info->si_addr)) {
        // Not device memory: the fault is the program's own, as it would be without this library.
        ::signal(sig, SIG_DFL);
        return;
    }
    char line[256];
    std::snprintf(line, sizeof line,
                  "\ncuset-device-memory: host code touched device memory (%s at byte %zu of the device region); on a "
                  "GPU only kernels and copies reach it\n",
                  sig == SIGSEGV ? "SIGSEGV" : "SIGBUS",
                  static_cast<size_t>(static_cast<char*>(info->si_addr) - g_base));
    write_all(line);
    ::_exit(kExitStatus);
}

}  // namespace

extern "C" {

// Reserves the region, makes the allocator torch's CPU allocator and installs the fault
// handler; the region starts open. 0 on success, else an errno value.
int cuset_device_install(void) {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_base != nullptr) return 0;
    g_page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    void* p = ::mmap(nullptr, kRegionBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return errno;
    g_base = static_cast<char*>(p);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = &on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(SIGSEGV, &sa, nullptr) != 0 || ::sigaction(SIGBUS, &sa, nullptr) != 0) return errno;
    c10::SetCPUAllocator(&g_allocator, /*priority=*/100);
    return 0;
}

// A window in which host code may touch device memory; windows nest, the outermost close closes.
void cuset_device_open(void) {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_depth++ > 0) return;
    for (auto& [at, b] : g_live) set_closed(at, b, false);
}

void cuset_device_close(void) {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_depth == 0 || --g_depth > 0) return;
    for (auto& [at, b] : g_live) set_closed(at, b, true);
}

// 1 when `p` lies in a live allocation of device memory.
int cuset_device_owns(const void* p) {
    std::lock_guard<std::mutex> lock(g_mu);
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = g_live.upper_bound(a);
    if (it == g_live.begin()) return 0;
    --it;
    return a >= it->first && a < it->first + it->second.bytes ? 1 : 0;
}

// Bytes of device memory copied to host memory by the emulator's runtime (cudaMemcpy and its
// kin, told by where the source and the destination lie), counted for the harness.
void cuset_device_read_to_host(size_t n) { g_host_reads.fetch_add(n); }
unsigned long long cuset_device_host_reads(void) { return g_host_reads.load(); }

// A pointer among a kernel launch's arguments (the emulator's runtime asks for each non-null one
// that is not pinned host memory): device memory passes; any other ends the run with its line,
// as a GPU faults where the kernel first reads or writes through it. The emulated kernel runs on
// the host and could otherwise carry device memory to host code and back.
void cuset_device_kernel_arg(const void* p, unsigned index, unsigned long long launch) {
    if (inside(p)) return;
    char line[256];
    std::snprintf(line, sizeof line,
                  "\ncuset-device-memory: kernel launch %llu was given host memory (argument %u); on a GPU a kernel "
                  "reaches only device memory\n",
                  launch, index + 1);
    write_all(line);
    ::_exit(kExitStatus);
}

// cudaMalloc and cudaFree of the emulator's runtime, when this library is loaded.
void* cuset_device_malloc(size_t n) { return allocate_bytes(n == 0 ? 1 : n); }
void cuset_device_free(void* p) { free_bytes(p); }

}  // extern "C"
