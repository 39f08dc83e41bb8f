// Device resolution and the version report.
#include "cuset/device.h"

#include <sstream>

#include <torch/cuda.h>
#include <torch/version.h>

#include "cuset/error.h"
#include "cuset/version.h"
#ifdef CUSET_WITH_CUDA
#include "cuset/cuda_runtime_info.h"
#endif

namespace cuset {

c10::Device device_resolve(const std::string& spec) {
    if (spec == "auto") return torch::cuda::is_available() ? c10::Device("cuda:0") : c10::Device("cpu");
    if (spec == "cpu") return c10::Device("cpu");
    if (spec.rfind("cuda", 0) == 0) {
        if (!torch::cuda::is_available())
            throw UsageError("config error: key 'train.device' is '" + spec +
                             "' but no CUDA device is available (use cpu or auto)");
        c10::Device d(spec == "cuda" ? "cuda:0" : spec);
        if (d.index() >= static_cast<int>(torch::cuda::device_count()))
            throw UsageError("config error: key 'train.device' is '" + spec + "' but only " +
                             std::to_string(torch::cuda::device_count()) + " GPU(s) are visible");
        return d;
    }
    throw UsageError("config error: key 'train.device' expects auto, cpu, cuda or cuda:N, got '" +
                     spec + "'");
}

std::string version_report() {
    std::ostringstream os;
    os << "cuset-train " << CUSET_VERSION << "\n";
    os << "LibTorch " << TORCH_VERSION << "\n";
#ifdef CUSET_WITH_CUDA
    int rt = cuda::runtime_version_compiled();
    os << "CUDA kernels: compiled (runtime " << rt / 1000 << "." << (rt % 1000) / 10 << ")\n";
#else
    os << "CUDA kernels: not compiled\n";
#endif
    bool avail = torch::cuda::is_available();
    os << "CUDA available: " << (avail ? "yes" : "no") << "\n";
    os << "CUDA devices: " << (avail ? torch::cuda::device_count() : 0) << "\n";
    return os.str();
}

}  // namespace cuset
