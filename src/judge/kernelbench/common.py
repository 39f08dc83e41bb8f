# What the three scripts of a KernelBench task's stages share (the judge puts this text after each
# script's settings and before the script): the dtypes, KernelBench's seeding and casting, the
# problem module, and the one layout of tensors in files. A file holds tensors back to back as raw
# bytes in their dtype, row-major; a JSON description says where each lies: {"offset", "nbytes",
# "dtype", "shape"}, or {"value": v} for an argument that is not a tensor.
import torch

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def set_seed(seed):
    torch.manual_seed(seed)


def cast(x, dtype):
    """KernelBench's _process_input_tensor without the device: a tensor in the precision's dtype."""
    return x.to(dtype=dtype) if isinstance(x, torch.Tensor) else x


def load_problem():
    """The problem module (KB_SOURCE) run in a namespace of its own."""
    ns = {"__name__": "kernelbench_problem"}
    exec(compile(KB_SOURCE, "reference.py", "exec"), ns)
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if name not in ns:
            raise SystemExit("the problem defines no " + name)
    return ns


def pack(values, path):
    """Writes the tensors of `values` to `path`; returns the descriptions of every value."""
    described, offset = [], 0
    with open(path, "wb") as f:
        for v in values:
            if isinstance(v, torch.Tensor):
                t = v.detach().contiguous().cpu()
                raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
                f.write(raw)
                described.append({"offset": offset, "nbytes": len(raw), "dtype": str(t.dtype).replace("torch.", ""),
                                  "shape": list(t.shape)})
                offset += len(raw)
            elif v is None or isinstance(v, (bool, int, float, str)):
                described.append({"value": v})
            else:
                raise SystemExit("an argument of type " + type(v).__name__ + " is neither a tensor nor a number")
    return described


def read_tensor(path, d):
    """The tensor `d` describes in `path` (ValueError when the file holds less)."""
    dtype = getattr(torch, d["dtype"])
    if d["nbytes"] == 0:
        return torch.empty(d["shape"], dtype=dtype)
    with open(path, "rb") as f:
        f.seek(d["offset"])
        raw = bytearray(f.read(d["nbytes"]))
    if len(raw) != d["nbytes"]:
        raise ValueError("short file")
    return torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(d["shape"])


def unpack(path, described):
    """The values `described` lists, tensors read from `path`."""
    return [d["value"] if "value" in d else read_tensor(path, d) for d in described]
