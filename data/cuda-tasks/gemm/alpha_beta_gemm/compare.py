"""Scaled_Gemm_Plus_Scaled_C: compares the program's outputs with the reference outputs; prints T or F."""
import numpy as np


def load(path, dtype, count):
    try:
        values = np.fromfile(path, dtype=dtype)
    except OSError:
        return None
    return values if values.size == count else None


def exact(got, want):
    return got is not None and want is not None and np.array_equal(got, want)


def close(got, want, rtol, atol):
    # Written so that a NaN or an infinity in the output fails.
    if got is None or want is None:
        return False
    got, want = got.astype(np.float64), want.astype(np.float64)
    return bool(np.all(np.abs(got - want) <= atol + rtol * np.abs(want)))


ok = True

# C_out: the length-64 fp32 dot product is off by at most 64 * 2^-24 * 64 = 2.4e-4 (|a*b| <= 1),
# scaled by 1.5, plus the roundings of the update: 4e-4 absolute
got = load("data/C_out.bin", np.float32, 2688)
want = load("data/C_out_ref.bin", np.float32, 2688)
ok = ok and close(got, want, rtol=0.0, atol=0.0004)

print("T" if ok else "F")
