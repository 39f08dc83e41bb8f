// The device memory of a KernelBench candidate's emulated run (src/judge/kernelbench/device.cpp,
// embedded and built as the judge builds it): shown with torch in a Python process that loads the
// library as the harness does. Each check is an outcome the process cannot fake from the outside:
// its exit status, its last line, a value it read.
#include <csignal>
#include <string>

#include <gtest/gtest.h>

#include "cuset/core/process.h"
#include "cuset/judge/kernelbench_judge.h"
#include "test_util.h"

using cuset::ProcessOptions;
using cuset::ProcessResult;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using namespace cuset::judge;

namespace {

// device.so built once per test program from the embedded source, with the flags of torch's
// own extensions (torch's headers, its ABI) and c10 to link against; in a folder of the test's
// own (ctest runs each test as a process of its own, side by side).
const std::string& device_library() {
    static const std::string path = [] {
        const std::string dir =
            scratch_dir(std::string("kernelbench_device_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        const TorchBuildInfo torch = torch_build_info(CUSET_PYTHON);
        EXPECT_EQ(torch.error, "");
        std::string source;
        for (const auto& [rel, text] : kernelbench_files())
            if (rel == "device.cpp") source = text;
        EXPECT_FALSE(source.empty()) << "device.cpp is embedded";
        write_file(dir + "/device.cpp", source);
        ProcessOptions po;
        po.argv = {"c++"};
        for (const std::string& f : kernelbench_cxx_flags(torch)) po.argv.push_back(f);
        po.argv.insert(po.argv.end(), {"-O1", "-shared", dir + "/device.cpp", "-o", dir + "/device.so"});
        for (const std::string& d : torch.library_dirs) po.argv.push_back("-L" + d);
        po.argv.push_back("-lc10");
        po.timeout_s = 300;
        po.merge_stderr = true;
        const ProcessResult r = cuset::process_run(po);
        EXPECT_TRUE(r.ok()) << r.out;
        return dir + "/device.so";
    }();
    return path;
}

// Runs `body` after the harness's set-up: torch imported, the library loaded and installed
// (`lib`), `owns(t)` at hand.
ProcessResult run_python(const std::string& body) {
    const std::string script = "import ctypes, os, sys\nimport numpy as np\nimport torch\n"
                               "lib = ctypes.CDLL(" + std::string("'") + device_library() + "', mode=os.RTLD_NOW | os.RTLD_GLOBAL)\n"
                               "lib.cuset_device_owns.argtypes = [ctypes.c_void_p]\n"
                               "before = torch.ones(8)\n"
                               "assert lib.cuset_device_install() == 0\n"
                               "owns = lambda t: lib.cuset_device_owns(t.untyped_storage().data_ptr())\n" +
                               body;
    ProcessOptions po;
    po.argv = {CUSET_PYTHON, "-I", "-c", script};
    po.timeout_s = 120;
    po.merge_stderr = true;
    return cuset::process_run(po);
}

constexpr int kTouched = 87;  // the library's exit status for host code on closed device memory
const char* const kLine = "cuset-device-memory: host code touched device memory";

}  // namespace

// Open, torch's tensors are read and written as ever; closed, a read by torch's own CPU kernel
// (here a sum, outside any window) ends the process with the library's line and status.
TEST(KernelBenchDevice, HostCodeThatTouchesClosedMemoryEndsTheRunWithItsLine) {
    const ProcessResult r = run_python("x = torch.arange(6, dtype=torch.float32)\n"
                                       "print('open sum', float(x.sum()), flush=True)\n"
                                       "lib.cuset_device_close()\n"
                                       "print('closed sum', float(x.sum()), flush=True)\n");
    EXPECT_EQ(r.exit_code, kTouched) << r.out;
    EXPECT_NE(r.out.find("open sum 15.0"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("closed sum"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(kLine), std::string::npos) << r.out;
}

// numpy's reading of a tensor's memory and a write through it are host code too.
TEST(KernelBenchDevice, NumpyOnClosedMemoryIsHostCode) {
    for (const char* access : {"print(np.maximum(x.numpy(), 0).sum())\n", "x.numpy()[0] = 1.0\n"}) {
        const ProcessResult r = run_python(std::string("x = torch.zeros(4)\nlib.cuset_device_close()\n") + access);
        EXPECT_EQ(r.exit_code, kTouched) << access << r.out;
        EXPECT_NE(r.out.find(kLine), std::string::npos) << access << r.out;
    }
}

// Windows nest (the outermost close closes); memory made while closed can be written (torch
// writes a new tensor's values there) until the next close, which closes it with the rest.
TEST(KernelBenchDevice, WindowsNestAndEveryCloseClosesAllMemory) {
    const ProcessResult r = run_python("x = torch.ones(4)\n"
                                       "lib.cuset_device_close()\n"
                                       "lib.cuset_device_open(); lib.cuset_device_open(); lib.cuset_device_close()\n"
                                       "print('nested', float(x.sum()), flush=True)\n"
                                       "lib.cuset_device_close()\n"
                                       "y = torch.empty(3)\n"
                                       "y.numpy()[:] = [1.0, 2.0, 3.5]\n"
                                       "print('made while closed', float(y.numpy().sum()), flush=True)\n"
                                       "lib.cuset_device_open(); lib.cuset_device_close()\n"
                                       "print('after the next close', float(y.numpy().sum()), flush=True)\n");
    EXPECT_EQ(r.exit_code, kTouched) << r.out;
    EXPECT_NE(r.out.find("nested 4.0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("made while closed 6.5"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("after the next close"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(kLine), std::string::npos) << r.out;
}

// The library owns what torch allocates once it is installed, not what existed before nor
// memory of numpy's; a freed allocation's pages come back cleared (nothing of another tensor's
// values is read through a new one).
TEST(KernelBenchDevice, ItOwnsWhatTorchAllocatesAfterItIsInstalled) {
    const ProcessResult r = run_python("a = torch.full((1000,), 7.0)\n"
                                       "print('owns', owns(before), owns(a), owns(torch.from_numpy(np.ones(3))), owns(a[10:]))\n"
                                       "del a\n"
                                       "b = torch.empty(1000)\n"
                                       "print('fresh', int((b != 0).sum()))\n");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("owns 0 1 0 1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("fresh 0"), std::string::npos) << r.out;
}

// A fault outside the device memory stays the program's own crash: no line of the library's.
TEST(KernelBenchDevice, AFaultElsewhereIsAnOrdinaryCrash) {
    const ProcessResult r = run_python("ctypes.string_at(8)\n");
    EXPECT_EQ(r.signal, SIGSEGV) << r.exit_code << " " << r.out;
    EXPECT_EQ(r.out.find("cuset-device-memory"), std::string::npos) << r.out;
}

// torch as the judge reads it from the suite's Python: its package folder holds every header and
// library folder an extension is built with (so the caches' keys, which name that folder by
// torch's version, name all of them), and Python's own headers lie outside it.
TEST(KernelBenchTorch, ItsPackageFolderHoldsItsHeadersAndLibraries) {
    const TorchBuildInfo torch = torch_build_info(CUSET_PYTHON);
    ASSERT_EQ(torch.error, "");
    ASSERT_FALSE(torch.root.empty());
    ASSERT_GE(torch.include_dirs.size(), 2u);
    for (size_t i = 0; i + 1 < torch.include_dirs.size(); ++i)
        EXPECT_EQ(torch.include_dirs[i].rfind(torch.root + "/", 0), 0u) << torch.include_dirs[i];
    EXPECT_NE(torch.include_dirs.back().rfind(torch.root, 0), 0u) << "Python's headers: " << torch.include_dirs.back();
    for (const std::string& d : torch.library_dirs) EXPECT_EQ(d.rfind(torch.root + "/", 0), 0u) << d;
    EXPECT_EQ(torch_neutral("-I" + torch.include_dirs[0], torch).rfind("-I<torch " + torch.version + ">/", 0), 0u);
}
