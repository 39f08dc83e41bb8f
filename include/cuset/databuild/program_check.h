// The programs of `data check --compile/--run` through the judge's runner: each sample's program
// compiled with nvcc (and, where a GPU is present, run), contained, `jobs` at a time, with a
// wall-clock timeout per step. data/data_check.h finds the programs and reports; this is its
// ProgramChecker, given by the command, so that the data library links no judge.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/data/data_check.h"
#include "cuset/judge/sandbox.h"

namespace cuset::databuild {

struct ProgramCheckOptions {
    bool run = false;          // build and run where a GPU is present (exit code 0 = pass)
    int jobs = 0;              // parallel nvcc/program processes; 0 = number of cores
    double timeout_s = 120;    // per compile and per run, wall clock; the process group is killed
    std::string nvcc;          // nvcc to use; "" = PATH, then /usr/local/cuda/bin/nvcc
    std::string nvcc_flags = "-std=c++17 -O2";  // with a run on a GPU, "-arch=native" is appended
    bool progress_bar = false;
    bool contain = true;            // eval.sandbox.enabled: compile and run inside the judge's sandbox
    judge::SandboxLimits limits;    // eval.sandbox.* limits of each compile and run
};

class JudgeProgramChecker : public ProgramChecker {
public:
    // UsageError for a timeout that is not a positive number of seconds.
    explicit JudgeProgramChecker(ProgramCheckOptions opts);
    // Finds nvcc and asks its version, and probes for a GPU when a run is asked for. UsageError
    // for a missing or broken nvcc.
    void prepare() override;
    std::vector<ProgramSteps> check(const std::vector<std::string>& programs,
                                    const std::vector<std::string>& labels) override;
    nlohmann::json compile_info() const override { return compile_info_; }
    nlohmann::json run_info() const override { return run_info_; }

private:
    ProgramCheckOptions opts_;
    std::string nvcc_;
    std::vector<std::string> flags_;  // nvcc's flags (with -arch=native for a run on the GPU)
    int jobs_ = 1;
    bool gpu_ = false;
    nlohmann::json compile_info_ = nullptr, run_info_ = nullptr;
};

}  // namespace cuset::databuild
