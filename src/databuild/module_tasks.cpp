// Tasks from PyTorch modules in KernelBench's layout (databuild/module_tasks.h).
#include "cuset/databuild/module_tasks.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/signals.h"
#include "cuset/eval/cudabench.h"

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace cuset::databuild {

namespace {

// gen.py: @FILE@ (a JSON string), @SOURCE@ (a JSON string: a valid Python literal too), @SEED@.
const char* const kGenPy = R"PY("""Runs the PyTorch module below (SOURCE) on seeded inputs, on the CPU in float32, and writes
its inputs, parameters, buffers and reference outputs under data/ as raw little-endian files
(row-major, no header, in each tensor's dtype; bool as one byte 0/1): every tensor argument of
forward and every parameter and buffer of the module to data/<name>.bin, every output to
data/<output>_ref.bin. Prints what it wrote as one JSON line after the manifest tag."""
import inspect
import json
import os
import re
import sys

import torch

SOURCE_FILE = @FILE@
SOURCE = @SOURCE@
SEED = @SEED@
TAG = "CUSET-MODULE-MANIFEST "
DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
          torch.int8: "int8", torch.uint8: "uint8", torch.int16: "int16", torch.int32: "int32",
          torch.int64: "int64", torch.bool: "bool"}
FLOATING = (torch.float32, torch.float16, torch.bfloat16)


class Refused(Exception):
    pass


def one_line(e):
    text = " ".join(str(e).split())
    return type(e).__name__ + (": " + text if text else "")


def dtype_name(t, what):
    if t.dtype not in DTYPES:
        raise Refused("%s is %s: only float32, float16, bfloat16, integer and bool tensors can be files"
                      % (what, str(t.dtype).replace("torch.", "")))
    return DTYPES[t.dtype]


def write(t, path):
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    elif t.dtype == torch.bool:
        t = t.to(torch.uint8)
    data = t.numpy()
    if sys.byteorder != "little":
        data = data.byteswap()
    with open(path, "wb") as f:
        f.write(data.tobytes())


def call(what, fn, *args):
    try:
        return fn(*args)
    except Refused:
        raise
    except Exception as e:
        raise Refused("%s raised %s" % (what, one_line(e)))


def main():
    try:
        code = compile(SOURCE, SOURCE_FILE, "exec")
    except SyntaxError as e:
        raise Refused("syntax error at line %s: %s" % (e.lineno, e.msg))
    ns = {"__name__": "cuset_task_module", "__file__": SOURCE_FILE}
    call("loading the module", exec, code, ns)
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not callable(ns.get(name)):
            raise Refused("defines no %s" % name)
    torch.manual_seed(SEED)
    init = list(call("get_init_inputs()", ns["get_init_inputs"]))
    model = call("Model(*get_init_inputs())", ns["Model"], *init)
    if not isinstance(model, torch.nn.Module):
        raise Refused("Model(...) is a %s, not a torch.nn.Module" % type(model).__name__)
    torch.manual_seed(SEED)
    args = call("get_inputs()", ns["get_inputs"])
    if not isinstance(args, (list, tuple)):
        raise Refused("get_inputs() returns a %s, not a list" % type(args).__name__)
    args = list(args)

    # Argument names from forward's signature.
    names = []
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    for i in range(len(args)):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY, params[i].POSITIONAL_OR_KEYWORD):
            names.append(params[i].name)
            continue
        var = next((p for p in params[:i + 1] if p.kind == p.VAR_POSITIONAL), None)
        names.append("%s%d" % (var.name, i - params.index(var)) if var is not None else "input%d" % i)

    taken = set()

    def unique(name):
        name = re.sub(r"\W", "_", name)
        if not name or name[0].isdigit():
            name = "t_" + name
        base, k = name, 1
        while name in taken or name + "_ref" in taken:
            k += 1
            name = "%s_%d" % (base, k)
        taken.add(name)
        return name

    files, constants, floating = [], [], []
    os.makedirs("data", exist_ok=True)
    for i, (a, n) in enumerate(zip(args, names)):
        if isinstance(a, torch.Tensor):
            dt = dtype_name(a, "get_inputs()[%d] (%s)" % (i, n))
            files.append({"name": unique(n), "role": "input", "of": n, "dtype": dt, "shape": list(a.shape), "t": a})
            if a.dtype in FLOATING:
                floating.append(a.dtype)
        elif isinstance(a, (bool, int, float)):
            constants.append({"name": n, "value": repr(a)})
        else:
            raise Refused("get_inputs()[%d] (%s) is a %s: an input must be a tensor, an int or a float"
                          % (i, n, type(a).__name__))
    for role, items in (("parameter", model.named_parameters()), ("buffer", model.named_buffers())):
        for n, t in items:
            dt = dtype_name(t, "%s %s" % (role, n))
            files.append({"name": unique(n), "role": role, "of": n, "dtype": dt, "shape": list(t.shape), "t": t})
            if t.dtype in FLOATING:
                floating.append(t.dtype)
    for f in files:
        write(f["t"], "data/%s.bin" % f["name"])
    # The outputs' floating dtype: the first floating tensor's (an input's, else a parameter's).
    out_dtype = floating[0] if floating else torch.float32

    def run(seed):
        torch.manual_seed(seed)
        model.float()
        call_args = [a.detach().clone().float() if isinstance(a, torch.Tensor) and a.dtype in FLOATING
                     else (a.detach().clone() if isinstance(a, torch.Tensor) else a) for a in args]
        with torch.no_grad():
            out = call("forward", model, *call_args)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        for j, o in enumerate(outs):
            if not isinstance(o, torch.Tensor):
                raise Refused("forward returns %s, not a tensor or a tuple of tensors"
                              % ("a " + type(out).__name__ if o is out else "a %s as item %d" % (type(o).__name__, j)))
        return [o.detach().to(out_dtype) if o.dtype in FLOATING else o.detach() for o in outs]

    outs = run(SEED)
    out_names = ["output"] if len(outs) == 1 else ["output%d" % j for j in range(len(outs))]
    for o, n in zip(outs, out_names):
        dtype_name(o, n)
        if o.dtype in FLOATING and not bool(torch.isfinite(o).all()):
            raise Refused("%s holds NaN or infinity" % n)
    again = run(SEED + 1)
    if any(not torch.equal(a, b) for a, b in zip(outs, again)):
        raise Refused("forward is not deterministic: two runs give different outputs (dropout, or another random operation?)")
    outputs = []
    for o, n in zip(outs, out_names):
        name = unique(n)
        write(o, "data/%s_ref.bin" % name)
        outputs.append({"name": name, "dtype": DTYPES[o.dtype], "shape": list(o.shape)})
    for f in files:
        del f["t"]
    print(TAG + json.dumps({"init": [repr(x) for x in init], "call": names, "files": files, "constants": constants,
                            "outputs": outputs}))


if __name__ == "__main__":
    try:
        main()
    except Refused as e:
        sys.stderr.write(str(e) + "\n")
        sys.exit(1)
)PY";

const char* const kComparePy = R"PY("""@NAME@: compares the program's outputs with the reference outputs gen.py wrote; prints T, or
the first mismatch and F."""
import numpy as np

# An element agrees when |got - want| <= tol + tol * |want| (torch.allclose with atol = rtol =
# tol), with KernelBench's tolerance for the dtype (after torchbench's): 1e-4 for float32, 1e-2
# for float16 and bfloat16, computed in float64 and written so that a NaN or an infinity fails.
# Integer and bool outputs must be equal.
TOLERANCE = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2}
STORAGE = {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16, "int8": np.int8,
           "uint8": np.uint8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "bool": np.uint8}


def load(path, dtype, count):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return None, "missing or unreadable"
    size = np.dtype(STORAGE[dtype]).itemsize
    if len(raw) != count * size:
        return None, "holds %d bytes, expected %d (%d %s values)" % (len(raw), count * size, count, dtype)
    values = np.frombuffer(raw, dtype=np.dtype(STORAGE[dtype]).newbyteorder("<"))
    if dtype == "bfloat16":
        values = (values.astype(np.uint32) << 16).view(np.float32)
    return values, ""


def check(got_path, want_path, dtype, shape):
    count = int(np.prod(shape, dtype=np.int64))
    want, why = load(want_path, dtype, count)
    if want is None:
        return "%s: %s" % (want_path, why)
    got, why = load(got_path, dtype, count)
    if got is None:
        return "%s: %s" % (got_path, why)
    if dtype in TOLERANCE:
        tol = TOLERANCE[dtype]
        g, w = got.astype(np.float64), want.astype(np.float64)
        bad = ~(np.abs(g - w) <= tol + tol * np.abs(w))
    else:
        bad = got != want
    if not bad.any():
        return ""
    i = int(np.argmax(bad))
    index = tuple(int(k) for k in np.unravel_index(i, shape)) if shape else ()
    return "%s: first mismatch at index %s: got %r, expected %r" % (got_path, index, got[i].item(), want[i].item())


problems = [
@CHECKS@]
first = next((p for p in problems if p), "")
if first:
    print(first)
print("F" if first else "T")
)PY";

std::string replaced_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
}

// Python's str() of a shape tuple: "(16, 32)", "(48,)", "()".
std::string shape_tuple(const json& shape) {
    std::string out = "(";
    for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i].get<int64_t>());
    if (shape.size() == 1) out += ",";
    return out + ")";
}

int64_t element_count(const json& shape) {
    int64_t n = 1;
    for (const json& d : shape) n *= d.get<int64_t>();
    return n;
}

int64_t dtype_bytes(const std::string& dtype) {
    if (dtype == "float32" || dtype == "int32") return 4;
    if (dtype == "float16" || dtype == "bfloat16" || dtype == "int16") return 2;
    if (dtype == "int64") return 8;
    return 1;  // int8, uint8, bool
}

std::string json_string(const std::string& s) {
    return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string fenced_source(const std::string& source) {
    std::string s = source;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
    return "```python\n" + s + "\n```";
}

std::string role_text(const json& f) {
    const std::string role = f["role"].get<std::string>(), of = f["of"].get<std::string>();
    if (role == "input") return "forward argument `" + of + "`";
    return role + " `" + of + "` of the module (as torch initialised it)";
}

}  // namespace

std::vector<std::string> module_files(const std::string& path) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
        if (!fs::exists(path, ec)) throw InputError("--from-modules: '" + path + "' does not exist");
        return {path};
    }
    std::vector<std::string> out;
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
        const std::string name = e.path().filename().string();
        if (e.path().extension() == ".py" && !name.empty() && name[0] != '_' && e.is_regular_file(ec))
            out.push_back(e.path().string());
    }
    if (ec) throw InputError("--from-modules: cannot list '" + path + "': " + ec.message());
    if (out.empty()) throw InputError("--from-modules: no .py file in '" + path + "'");
    std::sort(out.begin(), out.end());
    return out;
}

std::string module_static_problem(const std::string& source) {
    static const std::regex model(R"((^|\n)class[ \t]+Model[ \t]*\()");
    static const std::regex inputs(R"((^|\n)def[ \t]+get_inputs[ \t]*\()");
    static const std::regex init(R"((^|\n)def[ \t]+get_init_inputs[ \t]*\()");
    if (!std::regex_search(source, model)) return "no top-level `class Model(...)`";
    if (!std::regex_search(source, inputs)) return "no top-level `def get_inputs()`";
    if (!std::regex_search(source, init)) return "no top-level `def get_init_inputs()`";
    return "";
}

std::string module_gen_py(const std::string& file_name, const std::string& source) {
    std::string s = kGenPy;
    s = replaced_all(s, "@SEED@", std::to_string(kModuleSeed));
    s = replaced_all(s, "@FILE@", json_string(file_name));
    const size_t at = s.find("@SOURCE@");  // last: the source may hold the other markers
    return s.replace(at, 8, json_string(source));
}

std::string module_compare_py(const std::string& task_name, const json& outputs) {
    std::string checks;
    for (const json& o : outputs) {
        const std::string n = o["name"].get<std::string>();
        checks += "    check(\"data/" + n + ".bin\", \"data/" + n + "_ref.bin\", \"" + o["dtype"].get<std::string>() +
                  "\", " + shape_tuple(o["shape"]) + "),\n";
    }
    std::string s = replaced_all(kComparePy, "@NAME@", task_name);
    const size_t at = s.find("@CHECKS@");
    return s.replace(at, 8, checks);
}

std::string module_task_record(const std::string& task_name, const std::string& source, const json& manifest) {
    const json& files = manifest.at("files");
    const json& outputs = manifest.at("outputs");
    std::string init;
    for (const json& a : manifest.at("init")) init += (init.empty() ? "" : ", ") + a.get<std::string>();
    std::string call;
    for (const json& a : manifest.at("call")) call += (call.empty() ? "" : ", ") + a.get<std::string>();

    std::string reads, brief;
    for (const json& f : files) {
        reads += "- `data/" + f["name"].get<std::string>() + ".bin`: " + role_text(f) + ", " + f["dtype"].get<std::string>() +
                 ", shape " + shape_tuple(f["shape"]) + "\n";
        brief += (brief.empty() ? "" : ", ") + f["name"].get<std::string>();
    }
    std::string constants;
    for (const json& c : manifest.at("constants")) {
        if (!constants.empty()) constants += ", ";
        constants += '`';
        constants += c["name"].get<std::string>();
        constants += "` = ";
        constants += c["value"].get<std::string>();
    }
    std::string writes, written;
    for (const json& o : outputs) {
        writes += "- `data/" + o["name"].get<std::string>() + ".bin`: " +
                  (outputs.size() == 1 ? std::string("the output of forward") : "item " + std::to_string(&o - &outputs[0]) + " of forward's output") +
                  ", " + o["dtype"].get<std::string>() + ", shape " + shape_tuple(o["shape"]) + "\n";
        written += (written.empty() ? "" : ", ") + ("data/" + o["name"].get<std::string>() + ".bin");
    }
    const std::string code = fenced_source(source);
    const std::string level1 =
        "Write a CUDA program that computes the forward pass of the PyTorch module below: the module built as `Model(" +
        init + ")` and called as `forward(" + call + ")`.\n\n" + code +
        "\n\nThe program reads these files (raw little-endian binary, no header, row-major (C order), in the dtype "
        "given; bool as one byte 0 or 1):\n" + reads +
        (constants.empty() ? std::string() : "Constant arguments of forward (not files): " + constants + ".\n") +
        "It writes:\n" + writes +
        "An output is right when every element agrees with PyTorch's float32 CPU result within |got - want| <= tol + "
        "tol * |want|: tol = 1e-4 for float32, 1e-2 for float16 and bfloat16; integer and bool outputs exactly.";
    const std::string level2 = "Implement the forward pass of this PyTorch module in CUDA (`Model(" + init + ")`, `forward(" +
                               call + ")`):\n\n" + code + "\n\nInputs: data/<name>.bin for " + brief +
                               (constants.empty() ? "" : "; constants " + constants) + ". Outputs: " + written + ".";
    const std::string level3 = "Implement this PyTorch module's forward pass as a CUDA program:\n\n" + code;

    ordered_json t;
    t["id"] = task_name;
    t["task_name"] = task_name;
    t["task_description"] = level1;
    t["inputs"] = ordered_json::array();
    for (const json& f : files)
        t["inputs"].push_back({{"name", f["name"]}, {"dtype", f["dtype"]}, {"shape", shape_tuple(f["shape"])}});
    t["outputs"] = ordered_json::array();
    for (const json& o : outputs)
        t["outputs"].push_back({{"name", o["name"]}, {"dtype", o["dtype"]}, {"shape", shape_tuple(o["shape"])}});
    t["gpu"] = "unknown";
    t["bench.cu"] = "";
    t["gen.py"] = module_gen_py(task_name + ".py", source);
    t["compare.py"] = module_compare_py(task_name, outputs);
    t["level1_prompt"] = level1;
    t["level2_prompt"] = level2;
    t["level3_prompt"] = level3;
    t["family"] = "pytorch-module";
    return t.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

namespace {

// The manifest on the last tagged line of gen.py's output; nullopt when there is none.
std::optional<json> manifest_of(const std::string& out) {
    const size_t at = out.rfind(kManifestTag);
    if (at == std::string::npos || (at > 0 && out[at - 1] != '\n')) return std::nullopt;
    const size_t b = at + std::string(kManifestTag).size();
    const size_t e = out.find('\n', b);
    json j = json::parse(out.substr(b, e == std::string::npos ? std::string::npos : e - b), nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    return j;
}

bool is_identifier(const std::string& s) {
    static const std::regex id("[A-Za-z_][A-Za-z0-9_]{0,127}");
    return std::regex_match(s, id);
}

bool is_string_list(const json& v) {
    return v.is_array() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_string(); });
}

// What is wrong with a manifest ("" = nothing). It was printed by code that ran the module, so
// it is checked as untrusted: the names go into compare.py as string literals and must be plain
// identifiers, the dtypes known, the shapes small non-negative integers.
std::string manifest_problem(const json& m) {
    static const std::set<std::string> dtypes = {"float32", "float16", "bfloat16", "int8", "uint8",
                                                 "int16", "int32", "int64", "bool"};
    if (!m.contains("init") || !is_string_list(m["init"]) || !m.contains("call") || !is_string_list(m["call"]))
        return "no init or call list";
    if (!m.contains("constants") || !m["constants"].is_array()) return "no constants list";
    for (const json& c : m["constants"])
        if (!c.is_object() || !c.contains("name") || !c["name"].is_string() || !c.contains("value") || !c["value"].is_string())
            return "a constant without a name and a value";
    std::set<std::string> names;
    for (const char* key : {"files", "outputs"}) {
        if (!m.contains(key) || !m[key].is_array()) return std::string("no ") + key + " list";
        for (const json& f : m[key]) {
            if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !is_identifier(f["name"].get<std::string>()))
                return std::string("a name in ") + key + " that is not an identifier";
            const std::string n = f["name"].get<std::string>();
            if (!names.insert(std::string(key) == "files" ? n : n + "_ref").second) return "the file name " + n + " twice";
            if (!f.contains("dtype") || !f["dtype"].is_string() || !dtypes.count(f["dtype"].get<std::string>()))
                return n + ": an unknown dtype";
            if (!f.contains("shape") || !f["shape"].is_array() || f["shape"].size() > 16) return n + ": no shape";
            double count = 1;
            for (const json& d : f["shape"]) {
                if (!d.is_number_integer() || d.get<int64_t>() < 0) return n + ": a shape that is not non-negative integers";
                count *= static_cast<double>(d.get<int64_t>());
            }
            if (count > 1e12) return n + ": more than 10^12 elements";
            if (std::string(key) == "files") {
                if (!f.contains("role") || !f["role"].is_string() || !f.contains("of") || !f["of"].is_string())
                    return n + ": no role";
                const std::string role = f["role"].get<std::string>();
                if (role != "input" && role != "parameter" && role != "buffer") return n + ": an unknown role";
            }
        }
    }
    return "";
}

// "" when gen.py wrote exactly the files its manifest names, of the sizes their shapes make and
// told apart by the judge's rule as inputs and withheld reference outputs; else what is wrong.
std::string files_problem(const judge::Generation& g, const json& manifest, const eval::Task& task) {
    std::map<std::string, int64_t> want;
    for (const json& f : manifest["files"])
        want["data/" + f["name"].get<std::string>() + ".bin"] = element_count(f["shape"]) * dtype_bytes(f["dtype"]);
    for (const json& o : manifest["outputs"])
        want["data/" + o["name"].get<std::string>() + "_ref.bin"] = element_count(o["shape"]) * dtype_bytes(o["dtype"]);
    if (manifest["outputs"].empty()) return "forward returns no tensor";
    std::map<std::string, int64_t> got;
    for (size_t i = 0; i < g.produced.size(); ++i) got[g.produced[i]] = g.sizes[i];
    for (const auto& [f, n] : want) {
        auto it = got.find(f);
        if (it == got.end()) return "gen.py did not write " + f;
        if (it->second != n) return f + " holds " + std::to_string(it->second) + " bytes, expected " + std::to_string(n);
    }
    for (const auto& [f, n] : got)
        if (!want.count(f)) return "gen.py wrote " + f + ", which is neither an input nor a reference output";
    std::vector<std::string> declared;
    for (const eval::TensorSpec& s : task.inputs) declared.push_back(s.name);
    const judge::TaskFiles tf = judge::classify_task_files(g.produced, task.bench_cu, declared, task.compare_py);
    if (!tf.problem.empty()) return "the judge cannot tell its files apart: " + tf.problem;
    if (tf.inputs.size() != manifest["files"].size() || tf.outputs.size() != manifest["outputs"].size())
        return "the judge reads " + std::to_string(tf.inputs.size()) + " input(s) and " + std::to_string(tf.outputs.size()) +
               " output(s), not the task's";
    return "";
}

}  // namespace

namespace {

struct Module {
    std::string file, name, source;
    std::string problem;  // "" = converted
    std::string record;
};

// The reference outputs as the program's: data/<output>_ref.bin -> data/<output>.bin.
std::vector<std::pair<std::string, std::string>> references_as_outputs(const std::vector<std::string>& outputs) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const std::string& n : outputs) out.push_back({"data/" + n + "_ref.bin", "data/" + n + ".bin"});
    return out;
}

// Runs the module's gen.py, checks what it wrote, makes the record, and judges the reference
// outputs with the task's own compare.py.
void convert(Module& m, judge::Runner& runner, size_t index) {
    judge::CheckedTask probe;
    probe.key = m.file;
    probe.gen_py = module_gen_py(m.name + ".py", m.source);
    const judge::Generation g = runner.generate_only(probe, "module-" + std::to_string(index));
    if (g.status == judge::Status::kGenFailed) {
        m.problem = g.error.rfind("gen.py: ", 0) == 0 ? g.error.substr(8) : g.error;
        return;
    }
    const std::optional<json> manifest = manifest_of(g.out);
    if (!manifest) {
        m.problem = "its gen.py printed no manifest";
        return;
    }
    if (const std::string p = manifest_problem(*manifest); !p.empty()) {
        m.problem = "its gen.py printed a malformed manifest (" + p + ")";
        return;
    }
    // The files as the judge will tell them apart, with the task's own compare.py.
    eval::Task task;
    task.compare_py = module_compare_py(m.name, (*manifest)["outputs"]);
    for (const json& f : (*manifest)["files"]) task.inputs.push_back({f["name"].get<std::string>(), "", ""});
    if (const std::string p = files_problem(g, *manifest, task); !p.empty()) {
        m.problem = p;
        return;
    }
    judge::CheckedTask checked = probe;
    checked.compare_py = task.compare_py;
    std::vector<std::string> outputs;
    for (const eval::TensorSpec& s : task.inputs) checked.declared_inputs.push_back(s.name);
    for (const json& o : (*manifest)["outputs"]) outputs.push_back(o["name"].get<std::string>());
    const judge::Verdict v = runner.judge_files(checked, references_as_outputs(outputs), "module-check-" + std::to_string(index));
    if (v.status != judge::Status::kPass) {
        m.problem = "its reference outputs do not pass its own compare.py (" + std::string(judge::status_name(v.status)) +
                    (v.error.empty() ? "" : ": " + v.error) + ")";
        return;
    }
    m.record = module_task_record(m.name, m.source, *manifest);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> reference_outputs_of(const std::vector<std::string>& output_names) {
    return references_as_outputs(output_names);
}

ModuleTasks tasks_from_modules(const std::string& path, judge::Runner& runner, int jobs) {
    std::vector<Module> modules;
    std::set<std::string> names;
    for (const std::string& file : module_files(path)) {
        Module m{file, fs::path(file).stem().string(), read_input_file(file, "module"), "", ""};
        if (!names.insert(m.name).second) m.problem = "a second module named " + m.name;
        else m.problem = module_static_problem(m.source);
        modules.push_back(std::move(m));
    }
    // Each module's gen.py, `jobs` at a time; the records are then taken in file order.
    std::vector<bool> pending(modules.size());
    for (size_t i = 0; i < modules.size(); ++i) pending[i] = modules[i].problem.empty();
    std::atomic<size_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mu;
    auto work = [&] {
        for (size_t i; (i = next++) < modules.size();) {
            if (!pending[i] || signals_stop_requested()) continue;
            try {
                convert(modules[i], runner, i);
            } catch (...) {
                std::lock_guard<std::mutex> lock(failure_mu);
                if (!failure) failure = std::current_exception();
                next = modules.size();
            }
        }
    };
    std::vector<std::thread> workers;
    for (int k = 1; k < std::max(1, jobs); ++k) workers.emplace_back(work);
    work();
    for (std::thread& t : workers) t.join();
    if (failure) std::rethrow_exception(failure);
    if (signals_stop_requested()) throw StoppedBySignal("data tasks: stopped by a signal; nothing written");

    ModuleTasks out;
    for (const Module& m : modules) {
        if (!m.problem.empty()) {
            out.problems.push_back(m.file + ": " + m.problem);
            continue;
        }
        out.jsonl += m.record + "\n";
        ++out.converted;
    }
    return out;
}

}  // namespace cuset::databuild
