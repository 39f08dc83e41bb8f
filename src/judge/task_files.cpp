// The input / withheld / output rule of a task's files (judge/task_files.h).
#include "cuset/judge/task_files.h"

#include <algorithm>
#include <set>

namespace cuset::judge {

namespace {

bool is_path_char(char c) {
    return c != '"' && c != '\'' && c != '\\' && c != '\n' && static_cast<unsigned char>(c) > ' ';
}

}  // namespace

std::vector<std::string> data_paths_named(const std::string& source) {
    std::set<std::string> out;
    for (size_t i = 0; i < source.size(); ++i) {
        const char q = source[i];
        if (q != '"' && q != '\'') continue;
        size_t b = i + 1;
        if (source.compare(b, 2, "./") == 0) b += 2;
        if (source.compare(b, 5, "data/") != 0) continue;
        size_t e = b;
        while (e < source.size() && is_path_char(source[e])) ++e;
        if (e < source.size() && source[e] == q && e > b + 5) {
            std::string p = source.substr(b, e - b);
            if (p.find("..") == std::string::npos) out.insert(p);
            i = e;
        }
    }
    return {out.begin(), out.end()};
}

TaskFiles classify_task_files(const std::vector<std::string>& produced, const std::string& reference_source,
                              const std::vector<std::string>& declared_inputs, const std::string& compare_py) {
    std::set<std::string> read_by_reference;
    for (const std::string& p : data_paths_named(reference_source)) read_by_reference.insert(p);
    for (const std::string& name : declared_inputs) read_by_reference.insert("data/" + name + ".bin");
    std::set<std::string> compared;
    for (const std::string& p : data_paths_named(compare_py)) compared.insert(p);
    const std::set<std::string> made(produced.begin(), produced.end());
    TaskFiles tf;
    for (const std::string& f : made) {
        const bool in = read_by_reference.count(f) > 0, cmp = compared.count(f) > 0;
        if (in && cmp) {
            tf.problem = "gen.py's file " + f + " is named both by the reference program and by compare.py, so it "
                         "cannot be told whether it is an input or a reference output";
            break;
        }
        (in ? tf.inputs : tf.withheld).push_back(f);
    }
    for (const std::string& f : compared)
        if (!made.count(f)) tf.outputs.push_back(f);
    if (tf.problem.empty() && tf.outputs.empty())
        tf.problem = "compare.py names no file that gen.py does not write, so no output of the program is checked";
    return tf;
}

}  // namespace cuset::judge
