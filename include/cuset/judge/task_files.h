// Which files of a task the candidate program may see. A task's generator (gen.py) writes the
// inputs and the reference outputs into one folder; only the inputs may reach the candidate, and
// only the outputs the checker (compare.py) reads may reach the checker from it. The rule reads
// the paths named as string literals ("data/x.bin" or "./data/x.bin") in the reference program
// and in compare.py:
//   input     - written by gen.py, named by the reference program (or a declared input of the
//               task, data/<name>.bin), not named by compare.py;
//   withheld  - every other file gen.py wrote (the reference outputs): never shown to the candidate;
//   output    - named by compare.py, not written by gen.py: the candidate must write it.
// A file gen.py wrote that both the reference program and compare.py name cannot be told apart
// (an input the checker re-reads, or a reference output the reference program reads): the task
// is reported, not guessed.
#pragma once

#include <string>
#include <vector>

namespace cuset::judge {

// The relative paths under data/ named by string literals of `source`, "./" removed, sorted, unique.
std::vector<std::string> data_paths_named(const std::string& source);

struct TaskFiles {
    std::vector<std::string> inputs, withheld, outputs;  // relative paths ("data/x.bin"), sorted
    std::string problem;  // "" = the files are told apart; else why not (the task is unjudged)
};

// `produced`: the relative paths of the regular files gen.py wrote.
TaskFiles classify_task_files(const std::vector<std::string>& produced, const std::string& reference_source,
                              const std::vector<std::string>& declared_inputs, const std::string& compare_py);

}  // namespace cuset::judge
