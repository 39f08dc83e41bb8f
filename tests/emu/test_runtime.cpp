// The emulator's runtime (cuset/emu/runtime.h): the embedded files equal src/emu/runtime byte for
// byte, the build flags, writing them out; end to end with g++: the runtime object and a
// precompiled header built with build_flags(), then rewritten CUDA programs (a barrier-based
// block reduction over dynamic shared memory, a warp-shuffle reduction with atomics, a templated
// shared-memory histogram, cooperative groups; texture objects over a CUDA array, with point and
// linear sampling) built and run, their output checked under three thread orders, and a program
// that misuses a shuffle stopped with exit status 86. The end-to-end
// tests skip without g++ on x86-64 or the CUDA headers (CUDA_INCLUDE, default
// /usr/local/cuda/include).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cuset/core/error.h"
#include "cuset/emu/runtime.h"
#include "cuset/emu/transform.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::read_file;
using cuset::test::run_command;
using cuset::test::write_file;

namespace {

std::string cuda_include() {
    const char* e = std::getenv("CUDA_INCLUDE");
    return e && *e ? e : "/usr/local/cuda/include";
}

bool can_build() {
#if defined(__x86_64__)
    return fs::exists(cuda_include() + "/cuda_runtime.h") && run_command("g++ --version >/dev/null 2>&1").exit_code == 0;
#else
    return false;
#endif
}

std::string q(const std::string& s) { return "'" + s + "'"; }

std::string flags_text(const std::string& dir) {
    std::string out;
    for (const std::string& f : cuset::emu::build_flags(dir, cuda_include())) out += " " + q(f);
    return out;
}

// The runtime written under a scratch folder with its object and precompiled header built, once
// for the test program.
const std::string& built_runtime() {
    static const std::string dir = [] {
        std::string d = cuset::test::scratch_dir("emu_runtime") + "/rt";
        cuset::emu::write_runtime_files(d);
        auto r = run_command("g++" + flags_text(d) + " -c " + q(d + "/cuemu.cpp") + " -o " + q(d + "/cuemu.o") + " 2>&1");
        EXPECT_EQ(r.exit_code, 0) << r.out;
        r = run_command("g++" + flags_text(d) + " -x c++-header " + q(d + "/cuemu.h") + " -o " + q(d + "/cuemu.h.gch") +
                        " 2>&1");
        EXPECT_EQ(r.exit_code, 0) << r.out;
        return d;
    }();
    return dir;
}

struct ProgramRun {
    int status = -1;  // exit status of the program, -1 = did not build
    std::string out, err, build_log;
};

// Rewrites `cuda`, builds it against the runtime (through its precompiled header) and runs it
// with the environment assignments `env` (e.g. "CUEMU_SCHED=reverse").
ProgramRun build_and_run(const std::string& name, const std::string& cuda, const std::vector<std::string>& envs) {
    const std::string& rt = built_runtime();
    const std::string dir = cuset::test::scratch_dir("emu_prog_" + name);
    write_file(dir + "/prog.cpp", cuset::emu::transform_program(cuda));
    ProgramRun res;
    auto b = run_command("g++" + flags_text(rt) + " -Winvalid-pch -include " + q(rt + "/cuemu.h") + " " + q(dir + "/prog.cpp") +
                         " " + q(rt + "/cuemu.o") + " -o " + q(dir + "/prog") + " 2>&1");
    res.build_log = b.out;
    if (b.exit_code != 0) return res;
    std::string cmd = "cd " + q(dir) + " && env";
    for (const std::string& e : envs) cmd += " " + q(e);
    auto r = run_command(cmd + " ./prog");
    res.status = r.exit_code;
    res.out = r.out;
    res.err = r.err;
    return res;
}

const char* kProgram = R"(#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void block_sum(const int* x, int* out, int n) {
    extern __shared__ int s[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (t < h) s[t] += s[t + h];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

__global__ void warp_sum(const int* x, int* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(total, v);
}

template <int R>
__global__ void histogram(const int* x, unsigned* bins, int n) {
    __shared__ unsigned local[R];
    for (int b = threadIdx.x; b < R; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[x[i] % R], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < R; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

__global__ void tile_max(const int* x, int* out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int v = x[blockIdx.x * blockDim.x + block.thread_rank()];
    v = cg::reduce(warp, v, cg::greater<int>());
    if (warp.thread_rank() == 0) atomicMax(out, v);
}

int main() {
    const int n = 1000, threads = 128, blocks = (n + threads - 1) / threads;
    int hx[n];
    for (int i = 0; i < n; ++i) hx[i] = (i * 7) % 13;
    int *x, *partial, *total, *mx;
    unsigned* bins;
    cudaMalloc(&x, n * sizeof(int));
    cudaMalloc(&partial, blocks * sizeof(int));
    cudaMalloc(&total, sizeof(int));
    cudaMalloc(&mx, sizeof(int));
    cudaMalloc(&bins, 5 * sizeof(unsigned));
    cudaMemcpy(x, hx, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(total, 0, sizeof(int));
    cudaMemset(mx, 0, sizeof(int));
    cudaMemset(bins, 0, 5 * sizeof(unsigned));
    block_sum<<<blocks, threads, threads * sizeof(int)>>>(x, partial, n);
    warp_sum<<<dim3(blocks), dim3(threads)>>>(x, total, n);
    histogram<5><<<3, 64, 0, 0>>>(x, bins, n);
    tile_max<<<8, 96>>>(x, mx);  // the first 768 values, whole warps
    int hp[blocks], ht, hm;
    unsigned hb[5];
    cudaMemcpy(hp, partial, sizeof(hp), cudaMemcpyDeviceToHost);
    cudaMemcpy(&ht, total, sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(&hm, mx, sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(hb, bins, sizeof(hb), cudaMemcpyDeviceToHost);
    int sum = 0;
    for (int b = 0; b < blocks; ++b) sum += hp[b];
    printf("blocks=%d warps=%d max=%d bins=%u,%u,%u,%u,%u\n", sum, ht, hm, hb[0], hb[1], hb[2], hb[3], hb[4]);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";

// What kProgram must print, computed here.
std::string expected_output() {
    const int n = 1000;
    long sum = 0;
    unsigned bins[5] = {0, 0, 0, 0, 0};
    int mx = 0;
    for (int i = 0; i < n; ++i) {
        int v = (i * 7) % 13;
        sum += v;
        ++bins[v % 5];
        if (i < 768) mx = std::max(mx, v);
    }
    return "blocks=" + std::to_string(sum) + " warps=" + std::to_string(sum) + " max=" + std::to_string(mx) +
           " bins=" + std::to_string(bins[0]) + "," + std::to_string(bins[1]) + "," + std::to_string(bins[2]) + "," +
           std::to_string(bins[3]) + "," + std::to_string(bins[4]) + "\n";
}

}  // namespace

TEST(EmuRuntime, EmbeddedFilesEqualTheSourceTree) {
    const auto& files = cuset::emu::runtime_files();
    ASSERT_GE(files.size(), 5u);
    EXPECT_EQ(files[0].first, "cuemu.h");
    EXPECT_EQ(files[1].first, "cuemu.cpp");
    const std::string root = std::string(CUSET_SOURCE_DIR) + "/src/emu/runtime/";
    size_t on_disk = 0;
    for (const auto& e : fs::recursive_directory_iterator(root)) on_disk += e.is_regular_file();
    EXPECT_EQ(files.size(), on_disk) << "a file of src/emu/runtime is missing from CUSET_EMU_RUNTIME_FILES";
    for (const auto& [rel, text] : files) EXPECT_EQ(text, read_file(root + rel)) << rel;
}

TEST(EmuRuntime, BuildFlagsAndWritingTheFiles) {
    EXPECT_EQ(cuset::emu::build_flags("/c/rt", "/cuda/include"),
              (std::vector<std::string>{"-std=c++17", "-O1", "-w", "-fpermissive", "-I", "/c/rt/include", "-I", "/c/rt", "-I",
                                        "/cuda/include"}));
    const std::string d = cuset::test::scratch_dir("emu_write") + "/a/b";
    cuset::emu::write_runtime_files(d);
    cuset::emu::write_runtime_files(d);  // replaces
    for (const auto& [rel, text] : cuset::emu::runtime_files()) EXPECT_EQ(read_file(d + "/" + rel), text) << rel;
    const std::string h = cuset::emu::runtime_hash();
    EXPECT_EQ(h.size(), 16u);
    EXPECT_EQ(h, cuset::emu::runtime_hash());
    EXPECT_THROW(cuset::emu::write_runtime_files("/proc/cuset-cannot-write-here"), cuset::RuntimeFailure);
}

TEST(EmuRuntime, RewrittenProgramRunsWithBarriersShufflesAndAtomics) {
    if (!can_build()) GTEST_SKIP() << "no g++ on x86-64 or no CUDA headers in " << cuda_include();
    for (const char* order : {"CUEMU_SCHED=forward", "CUEMU_SCHED=reverse", "CUEMU_SCHED=lag"}) {
        ProgramRun r = build_and_run("sums", kProgram, {order});
        ASSERT_NE(r.status, -1) << r.build_log;
        EXPECT_EQ(r.build_log, "") << "the precompiled header was rejected or the build warned";
        EXPECT_EQ(r.status, 0) << order << ": " << r.err;
        EXPECT_EQ(r.out, expected_output()) << order;
    }
}

TEST(EmuRuntime, TextureObjectsDeviceLaunchParametersAndGroupSync) {
    if (!can_build()) GTEST_SKIP() << "no g++ on x86-64 or no CUDA headers in " << cuda_include();
    const char* prog = R"(#include <cstdio>
#include <cstring>
#include <device_launch_parameters.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void sample(cudaTextureObject_t point, cudaTextureObject_t lin, float* out) {
    cg::thread_block cta = cg::this_thread_block();
    __shared__ float s[8];
    int t = threadIdx.x;
    uchar4 p = tex2D<uchar4>(point, (float)t - 2.0f, 1.0f);  // clamped to columns 0..3 of row 1
    s[t] = p.x + p.w;
    cg::sync(cta);
    out[t] = s[7 - t];
    out[8 + t] = tex2D<float>(lin, 0.25f * t, 0.5f);
}

cudaTextureObject_t make(cudaArray_t a, cudaTextureFilterMode filter) {
    cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = filter;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t t = 0;
    cudaCreateTextureObject(&t, &res, &td, NULL);
    return t;
}

int main() {
    uchar4 img[2][4];
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 4; ++c) img[r][c] = make_uchar4(10 * c + r, 0, 0, 1);
    float row[4] = {0, 1, 4, 9};
    cudaChannelFormatDesc d4 = cudaCreateChannelDesc<uchar4>();
    cudaChannelFormatDesc d1 = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t a4, a1;
    cudaMallocArray(&a4, &d4, 4, 2);
    cudaMallocArray(&a1, &d1, 4, 1);
    cudaMemcpy2DToArray(a4, 0, 0, img, 4 * sizeof(uchar4), 4 * sizeof(uchar4), 2, cudaMemcpyHostToDevice);
    cudaMemcpy2DToArray(a1, 0, 0, row, sizeof(row), sizeof(row), 1, cudaMemcpyHostToDevice);
    cudaTextureObject_t tp = make(a4, cudaFilterModePoint), tl = make(a1, cudaFilterModeLinear);
    float* out;
    cudaMalloc(&out, 16 * sizeof(float));
    sample<<<1, 8>>>(tp, tl, out);
    float h[16];
    cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost);
    for (int i = 0; i < 16; ++i) printf("%g%c", h[i], i == 15 ? '\n' : ' ');
    cudaDestroyTextureObject(tp);
    cudaDestroyTextureObject(tl);
    cudaFreeArray(a4);
    cudaFreeArray(a1);
    return 0;
}
)";
    ProgramRun r = build_and_run("textures", prog, {"CUEMU_SCHED=reverse"});
    ASSERT_NE(r.status, -1) << r.build_log;
    EXPECT_EQ(r.status, 0) << r.err;
    // out[t] = s[7 - t] = 10 * clamp(5 - t, 0, 3) + 2; then linear samples of {0, 1, 4, 9} at
    // x = t / 4 (texel centres at 0.5, 1.5, ...; clamped at the edges).
    EXPECT_EQ(r.out, "32 32 32 22 12 2 2 2 0 0 0 0.25 0.5 0.75 1 1.75\n");
}

TEST(EmuRuntime, MisusedShuffleStopsTheProgramWithStatus86) {
    if (!can_build()) GTEST_SKIP() << "no g++ on x86-64 or no CUDA headers in " << cuda_include();
    const char* bad = R"(#include <cstdio>
__global__ void k(int* out) {
    if (threadIdx.x >= 16) return;
    int v = __shfl_down_sync(0xffffffffu, (int)threadIdx.x, 1);
    out[threadIdx.x] = v;
}
int main() {
    int* o;
    cudaMalloc(&o, 32 * sizeof(int));
    k<<<1, 32>>>(o);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
)";
    ProgramRun r = build_and_run("bad_shuffle", bad, {});
    ASSERT_NE(r.status, -1) << r.build_log;
    EXPECT_EQ(r.status, 86) << r.out << r.err;
    EXPECT_NE(r.err.find("cuemu: warp collective"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
}
