"""Checks the files a PyTorch-module task's gen.py wrote (data/ under the folder given) against an
independent computation: the inputs and parameters are the tensors torch makes under the task's
seed, read back from their raw little-endian files, and each reference output equals the
operation computed here with numpy in float64 (exactly for integer outputs).
Usage: module_tasks.py TASK_NAME FOLDER; prints "ok TASK_NAME" or the first difference, exit 1."""
import sys

import numpy as np
import torch

SEED = 42  # databuild::kModuleSeed


def load(folder, name, dtype, shape):
    values = np.fromfile("%s/data/%s.bin" % (folder, name), dtype=np.dtype(dtype).newbyteorder("<"))
    assert values.size == int(np.prod(shape)), (name, values.size, shape)
    return values.reshape(shape)


def near(what, got, want, tol=1e-5):
    err = float(np.max(np.abs(got.astype(np.float64) - want)))
    assert err <= tol, "%s: largest difference %g > %g" % (what, err, tol)


def same(what, got, want):
    assert np.array_equal(got, want), what


def main():
    name, folder = sys.argv[1], sys.argv[2]
    if name == "linear_relu":
        x = load(folder, "x", np.float32, (12, 48))
        w = load(folder, "fc_weight", np.float32, (20, 48))
        b = load(folder, "fc_bias", np.float32, (20,))
        torch.manual_seed(SEED)
        layer = torch.nn.Linear(48, 20)  # what Model(48, 20) holds: the weights torch initialises
        same("fc.weight as torch initialises it", w, layer.weight.detach().numpy())
        same("fc.bias as torch initialises it", b, layer.bias.detach().numpy())
        torch.manual_seed(SEED)
        same("x as get_inputs() makes it", x, torch.randn(12, 48).numpy())
        want = np.maximum(x.astype(np.float64) @ w.astype(np.float64).T + b, 0.0)
        near("output", load(folder, "output_ref", np.float32, (12, 20)), want)
    elif name == "row_softmax":
        x = load(folder, "x", np.float32, (8, 100)).astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        near("output", load(folder, "output_ref", np.float32, (8, 100)), e / e.sum(axis=1, keepdims=True), 1e-7)
    elif name == "scaled_add":
        a = load(folder, "a", np.float32, (24, 40))
        b = load(folder, "b", np.float32, (24, 40))
        torch.manual_seed(SEED)
        same("a and b as get_inputs() makes them", np.stack([a, b]), torch.stack([torch.randn(24, 40), torch.randn(24, 40)]).numpy())
        near("output", load(folder, "output_ref", np.float32, (24, 40)), a.astype(np.float64) + 0.5 * b, 1e-6)
    elif name == "sum_and_argmax":
        x = load(folder, "x", np.float32, (16, 33))
        near("output0", load(folder, "output0_ref", np.float32, (16,)), x.astype(np.float64).sum(axis=1))
        same("output1", load(folder, "output1_ref", np.int64, (16,)), np.argmax(x, axis=1).astype(np.int64))
    elif name == "masked_layernorm_half":
        x = load(folder, "x", np.float16, (6, 32)).astype(np.float64)
        mask = load(folder, "mask", np.uint8, (6, 32))
        assert set(np.unique(mask)) <= {0, 1}, "mask: bytes other than 0 and 1"
        w = load(folder, "norm_weight", np.float32, (32,))
        b = load(folder, "norm_bias", np.float32, (32,))
        same("norm.weight and norm.bias as torch initialises them", np.stack([w, b]), np.stack([np.ones(32), np.zeros(32)]))
        mean = x.mean(axis=1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
        want = ((x - mean) / np.sqrt(var + 1e-5) * w + b) * mask
        # The reference is float32 arithmetic rounded to float16: within half a float16 ulp
        # (2^-11 relative) of the float64 value, plus the float32 error.
        got = load(folder, "output_ref", np.float16, (6, 32)).astype(np.float64)
        err = np.abs(got - want) - (2.0 ** -11 * np.abs(want) + 1e-6)
        assert float(err.max()) <= 0, "output: off by more than half a float16 ulp"
    else:
        raise SystemExit("unknown task " + name)
    print("ok " + name)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("FAIL %s: %s" % (sys.argv[1], e))
        sys.exit(1)
