// Device selection and the build/runtime report behind `cuset-train --version`.
#pragma once

#include <string>

#include <c10/core/Device.h>

namespace cuset {

// "auto" -> cuda when a GPU is available, else cpu; "cpu", "cuda", "cuda:N" as given.
// Throws UsageError when CUDA is asked for but not available.
c10::Device device_resolve(const std::string& spec);

// Multi-line text: project version, LibTorch version, CUDA compiled/available, device count.
std::string version_report();

}  // namespace cuset
