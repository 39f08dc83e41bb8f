# The generate stage of a KernelBench task in cuset's judge: runs the task's reference module
# (KB_SOURCE, a KernelBench problem: Model, get_inputs, get_init_inputs) as KernelBench's
# eval_kernel_against_ref does, and writes what the candidate's run and the check need:
#   data/inputs.json, data/input_t<k>.bin   forward's arguments of trial k (the candidate sees them)
#   data/refs.json, data/ref_t<k>.bin       the reference outputs of trial k (withheld from it)
# Seeds as KernelBench: torch.manual_seed(seed) before get_init_inputs() and before Model(...);
# the trial seeds are torch.randint(0, 2**32 - 1, (1,)) drawn after torch.manual_seed(seed);
# torch.manual_seed(trial seed) before get_inputs() and before forward. Every tensor argument is
# cast to the precision's dtype (KernelBench's _process_input_tensor), and so is the model.
# After KernelBench's KB["kernelbench_trials"] trials come cuset's, with inputs a candidate cannot
# have been written for: their seeds are drawn after torch.manual_seed(KB["extra_seed"]) (not
# KernelBench's), and in the last one, when every floating-point input of its draw is
# non-negative (KernelBench's problems draw most inputs with torch.rand), each element's sign is
# flipped at random (a generator seeded from its trial seed): values of both signs, the same
# magnitudes. An extra trial whose reference output is not finite (a logarithm of a negative
# number) is marked "used": false and not checked.
# With KB["max_input_elements"] > 0 (the emulating judge), a problem whose inputs hold more
# elements runs at reduced sizes: every module-level int constant of at least 32 is halved
# (rounding up, never below 16), all together, until the inputs fit or none can shrink (tuples
# and other values stay as written; the inputs are counted on torch's meta device, so nothing is
# allocated at full size); the new values go to inputs.json ("constants") for the candidate's run,
# and a line "cuset-kernelbench-scaled: {...}" on standard output says what changed.
# Files and their .json descriptions are common.py's layout.
import json

import torch


def tensor_elements(args):
    return sum(a.numel() for a in args if isinstance(a, torch.Tensor))


def scale_constants(ns, budget):
    """Halves the module's size constants until get_inputs() fits `budget` elements."""
    def elements():
        with torch.device("meta"):
            return tensor_elements(ns["get_inputs"]())
    try:
        total = elements()
    except Exception as e:  # a get_inputs() the meta device cannot run: left as it is
        print("cuset-kernelbench-unscaled: " + json.dumps(str(e)[:200]))
        return {}
    original = {}
    while total > budget:
        names = [k for k, v in ns.items() if type(v) is int and v >= 32 and not k.startswith("_")]
        if not names:
            break
        for k in names:
            original.setdefault(k, ns[k])
            ns[k] = max(16, (ns[k] + 1) // 2)
        total = elements()
    return {k: [v, ns[k]] for k, v in sorted(original.items())}


def non_negative(args):
    """Whether the draw has floating-point inputs and none holds a negative element."""
    floats = [a for a in args if isinstance(a, torch.Tensor) and a.is_floating_point() and a.numel()]
    return bool(floats) and all(bool((a >= 0).all()) for a in floats)


def with_both_signs(args, seed):
    """The floating-point inputs with each element's sign flipped at random (seeded by `seed`)."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for a in args:
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            flip = torch.randint(0, 2, a.shape, generator=g, dtype=torch.int64).to(a.dtype) * 2 - 1
            a = a * flip
        out.append(a)
    return out


def main():
    dtype = DTYPES[KB["precision"]]
    ns = load_problem()
    scaled = scale_constants(ns, KB["max_input_elements"]) if KB["max_input_elements"] > 0 else {}
    if scaled:
        print("cuset-kernelbench-scaled: " + json.dumps(scaled, sort_keys=True))
    set_seed(KB["seed"])
    init_inputs = [cast(x, dtype) for x in ns["get_init_inputs"]()]
    with torch.no_grad():
        set_seed(KB["seed"])
        model = ns["Model"](*init_inputs)
        model = model.to(dtype=dtype)
    n_kb = KB["kernelbench_trials"]
    torch.manual_seed(KB["seed"])
    seeds = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(n_kb)]
    torch.manual_seed(KB["extra_seed"])
    seeds += [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(len(KB["inputs"]) - n_kb)]
    inputs = {"constants": {k: v[1] for k, v in scaled.items()}, "trials": []}
    refs = {"trials": []}
    for k, seed in enumerate(seeds):
        set_seed(seed)
        args = [cast(x, dtype) for x in ns["get_inputs"]()]
        signed = k == len(seeds) - 1 and k >= n_kb and non_negative(args)
        if signed:
            args = with_both_signs(args, seed)
        inputs["trials"].append({"seed": seed, "args": pack(args, KB["inputs"][k])})
        with torch.no_grad():
            set_seed(seed)
            out = model(*args)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if not all(isinstance(o, torch.Tensor) for o in outs):
            raise SystemExit("forward returned something other than a tensor or a tuple of tensors")
        used = k < n_kb or all(bool(torch.isfinite(o).all()) for o in outs if o.is_floating_point())
        refs["trials"].append({"outputs": pack(outs, KB["refs"][k]), "extra": k >= n_kb, "signed": signed,
                               "used": used})
    with open(KB["inputs_manifest"], "w") as f:
        json.dump(inputs, f)
    with open(KB["refs_manifest"], "w") as f:
        json.dump(refs, f)


if __name__ == "__main__":
    main()
