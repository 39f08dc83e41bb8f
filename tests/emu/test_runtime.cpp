// The emulator's runtime (cuset/emu/runtime.h): the embedded files equal src/emu/runtime byte for
// byte, the build flags, writing them out; end to end with g++: the runtime object and a
// precompiled header built with build_flags(), then rewritten CUDA programs (a barrier-based
// block reduction over dynamic shared memory, a warp-shuffle reduction with atomics, a templated
// shared-memory histogram, cooperative groups; texture objects over a CUDA array, with point and
// linear sampling) built and run, their output checked under three thread orders, and a program
// that misuses a shuffle stopped with exit status 86; nvcc's macros: programs whose kernel is only
// compiled under __NVCC__ or __CUDACC__ (an #error otherwise) build and run, and the emulated
// build defines no macro nvcc's host pass does not but cuda_fp16.h's and cuda_bf16.h's (compared
// with `nvcc --dryrun`'s own preprocessing, when nvcc is there). The end-to-end
// tests skip without g++ on x86-64 or the CUDA headers (CUDA_INCLUDE, default
// /usr/local/cuda/include).
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
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
// for the test program. The folder is the process's own, removed when it exits: ctest runs each
// case as a process, two at once, and a folder shared by name would be emptied by one case while
// another links against it.
const std::string& built_runtime() {
    static const struct Runtime {
        std::string root, dir;
        Runtime() : root(cuset::test::scratch_dir("emu_runtime_" + std::to_string(::getpid()))), dir(root + "/rt") {
            cuset::emu::write_runtime_files(dir);
            auto r = run_command("g++" + flags_text(dir) + " -c " + q(dir + "/cuemu.cpp") + " -o " + q(dir + "/cuemu.o") +
                                 " 2>&1");
            EXPECT_EQ(r.exit_code, 0) << r.out;
            r = run_command("g++" + flags_text(dir) + " -x c++-header " + q(dir + "/cuemu.h") + " -o " +
                            q(dir + "/cuemu.h.gch") + " 2>&1");
            EXPECT_EQ(r.exit_code, 0) << r.out;
        }
        ~Runtime() {
            std::error_code ec;
            std::filesystem::remove_all(root, ec);
        }
    } rt;
    return rt.dir;
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
    // Without the toolkit's headers, no version: the build fails anyway without cuda_runtime.h.
    EXPECT_EQ(cuset::emu::build_flags("/c/rt", "/cuda/include"),
              (std::vector<std::string>{"-std=gnu++17", "-O1", "-U__OPTIMIZE__", "-D__NO_INLINE__", "-w", "-fpermissive", "-I",
                                        "/c/rt/include", "-I", "/c/rt", "-I", "/cuda/include", "-D__CUDACC__", "-D__NVCC__"}));
    const std::string d = cuset::test::scratch_dir("emu_write") + "/a/b";
    cuset::emu::write_runtime_files(d);
    cuset::emu::write_runtime_files(d);  // replaces
    for (const auto& [rel, text] : cuset::emu::runtime_files()) EXPECT_EQ(read_file(d + "/" + rel), text) << rel;
    const std::string h = cuset::emu::runtime_hash();
    EXPECT_EQ(h.size(), 16u);
    EXPECT_EQ(h, cuset::emu::runtime_hash());
    EXPECT_THROW(cuset::emu::write_runtime_files("/proc/cuset-cannot-write-here"), cuset::RuntimeFailure);
}

// nvcc's version macros come from the toolkit whose headers the build uses: major and minor from
// cuda_runtime_api.h's CUDART_VERSION, nvcc's build number from version.json or, in a pip layout,
// from the name of the nvidia_cuda_nvcc dist-info folder.
TEST(EmuRuntime, BuildFlagsCarryTheToolkitsNvccVersion) {
    const std::string root = cuset::test::scratch_dir("emu_toolkit");
    fs::create_directories(root + "/include");
    write_file(root + "/include/cuda_runtime_api.h", "#define CUDART_VERSION_X 1\n#define CUDART_VERSION  12040\n");
    auto macros = [&] {
        std::vector<std::string> m;
        for (const std::string& f : cuset::emu::build_flags("/rt", root + "/include"))
            if (f.rfind("-D__", 0) == 0 && f != "-D__NO_INLINE__") m.push_back(f.substr(2));
        return m;
    };
    const std::vector<std::string> no_build = {"__CUDA_ARCH_LIST__=520", "__CUDACC__", "__NVCC__", "__CUDACC_VER_MAJOR__=12",
                                               "__CUDACC_VER_MINOR__=4", "__CUDACC_VER_BUILD__=0", "__CUDA_API_VER_MAJOR__=12",
                                               "__CUDA_API_VER_MINOR__=4", "__NVCC_DIAG_PRAGMA_SUPPORT__=1",
                                               "__CUDACC_DEVICE_ATOMIC_BUILTINS__=1"};
    EXPECT_EQ(macros(), no_build);
    fs::create_directories(root + "/dist-info/nvidia_cuda_nvcc-12.4.99.dist-info");
    std::vector<std::string> want = no_build;
    want[5] = "__CUDACC_VER_BUILD__=99";
    EXPECT_EQ(macros(), want);
    write_file(root + "/version.json", R"({"cuda": {"name": "CUDA SDK", "version": "12.4.1"},
   "cuda_nvcc" : {"name" : "CUDA NVCC", "version" : "12.4.131"}})");
    want[5] = "__CUDACC_VER_BUILD__=131";
    EXPECT_EQ(macros(), want);
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

// A wrong program cannot hide its kernel from the emulator behind nvcc's macros: a kernel compiled
// only under __NVCC__ (or __CUDACC__, with nvcc's version) builds and runs; threadIdx, warpSize and
// __syncthreads are what nvcc's host pass has (variables and a function, not macros), and the
// dialect and optimisation macros are its own.
TEST(EmuRuntime, ProgramsGatedOnNvccsMacrosBuildAndRun) {
    if (!can_build()) GTEST_SKIP() << "no g++ on x86-64 or no CUDA headers in " << cuda_include();
    const char* gated = R"(#include <cstdio>
#ifndef __NVCC__
#error not nvcc
#else
__global__ void twice(int* x) { x[threadIdx.x] *= 2; }
#endif
#if !defined(__CUDACC__) || __CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10 != CUDART_VERSION
#error not nvcc, or not this toolkit's
#endif
#if defined(threadIdx) || defined(blockIdx) || defined(blockDim) || defined(gridDim) || defined(warpSize)
#error threadIdx & co. are macros
#endif
#if defined(__syncthreads) || defined(__OPTIMIZE__) || !defined(__NO_INLINE__) || defined(__STRICT_ANSI__)
#error not nvcc's host pass
#endif
#if defined(_GLIBCXX_FUNCTIONAL) || defined(_GLIBCXX_VECTOR)
#error a header the program did not include
#endif
int main() {
    int* x;
    cudaMalloc(&x, 4 * sizeof(int));
    int h[4] = {1, 2, 3, warpSize};
    cudaMemcpy(x, h, sizeof(h), cudaMemcpyHostToDevice);
    twice<<<1, 4>>>(x);
    cudaMemcpy(h, x, sizeof(h), cudaMemcpyDeviceToHost);
    printf("%d %d %d %d\n", h[0], h[1], h[2], h[3]);
    return 0;
}
)";
    ProgramRun r = build_and_run("nvcc_gated", gated, {});
    ASSERT_NE(r.status, -1) << r.build_log;
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "2 4 6 64\n");
}

namespace {

// The names `#define`d in `g++ -dM` output.
std::set<std::string> macro_names(const std::string& dm) {
    std::set<std::string> names;
    std::istringstream in(dm);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("#define ", 0) == 0) {
            size_t e = 8;
            while (e < line.size() && (std::isalnum(static_cast<unsigned char>(line[e])) || line[e] == '_')) ++e;
            names.insert(line.substr(8, e - 8));
        }
    return names;
}

// The definition of `name` in `g++ -dM` output ("" when it is not defined).
std::string definition(const std::string& dm, const std::string& name) {
    const std::string key = "#define " + name + " ";
    const size_t at = dm.find(key);
    return at == std::string::npos ? "" : dm.substr(at + key.size(), dm.find('\n', at) - at - key.size());
}

}  // namespace

TEST(EmuRuntime, DefinesNvccsMacrosAndNoneOfItsOwn) {
    if (!can_build()) GTEST_SKIP() << "no g++ on x86-64 or no CUDA headers in " << cuda_include();
    const std::string nvcc = cuda_include() + "/../bin/nvcc";
    if (!fs::exists(nvcc)) GTEST_SKIP() << "no " << nvcc;
    const std::string& rt = built_runtime();
    const std::string dir = cuset::test::scratch_dir("emu_macros");
    write_file(dir + "/x.cu", "int main() { return 0; }\n");
    // nvcc's host preprocessing: the first `gcc -E` of its plan that is not the device pass.
    auto dry = run_command("cd " + q(dir) + " && " + q(nvcc) + " --dryrun -c x.cu -o x.o 2>&1");
    ASSERT_EQ(dry.exit_code, 0) << dry.out;
    std::string host_pass;
    std::istringstream plan(dry.out);
    for (std::string line; std::getline(plan, line);)
        if (line.find(" -E ") != std::string::npos && line.find("-D__CUDA_ARCH__=") == std::string::npos &&
            line.rfind("#$ ", 0) == 0) {
            host_pass = line.substr(3);
            break;
        }
    ASSERT_NE(host_pass, "") << dry.out;
    host_pass = host_pass.substr(0, host_pass.rfind(" -o "));
    auto nv = run_command("cd " + q(dir) + " && " + host_pass + " -dM");
    ASSERT_EQ(nv.exit_code, 0) << host_pass << "\n" << nv.err;
    auto emu = run_command("cd " + q(dir) + " && g++" + flags_text(rt) + " -dM -E -x c++ -include " + q(rt + "/cuemu.h") + " x.cu");
    ASSERT_EQ(emu.exit_code, 0) << emu.err;
    auto half = run_command("cd " + q(dir) + " && printf '#include <cuda_fp16.h>\\n#include <cuda_bf16.h>\\n' | g++ -std=gnu++17 -dM -E -x c++ -I " +
                            q(cuda_include()) + " -");
    ASSERT_EQ(half.exit_code, 0) << half.err;
    const std::set<std::string> nv_names = macro_names(nv.out), fp16_names = macro_names(half.out);
    std::string own;
    for (const std::string& m : macro_names(emu.out))
        if (!nv_names.count(m) && !fp16_names.count(m)) own += " " + m;
    EXPECT_EQ(own, "") << "macros of the emulated build that nvcc's host pass does not define";
    for (const char* m : {"__CUDACC__", "__NVCC__", "__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__", "__CUDACC_VER_BUILD__",
                          "__CUDA_API_VER_MAJOR__", "__CUDA_API_VER_MINOR__", "__CUDA_ARCH_LIST__", "__CUDACC_VER__",
                          "__NVCC_DIAG_PRAGMA_SUPPORT__", "__CUDACC_DEVICE_ATOMIC_BUILTINS__", "__NO_INLINE__", "__OPTIMIZE__",
                          "__STRICT_ANSI__", "__HAVE_FLOAT128", "__SM_20_INTRINSICS_H__", "threadIdx", "warpSize"})
        EXPECT_EQ(definition(emu.out, m), definition(nv.out, m)) << m;
}
