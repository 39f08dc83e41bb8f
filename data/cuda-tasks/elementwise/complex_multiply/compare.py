"""Interleaved_Complex_Product: compares the program's outputs with the reference outputs; prints T or F."""
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

# c: each part is ad - bc or ac + bd with products <= 1: three fp32 roundings of values <= 2,
# 3 * 2^-24 * 2 = 3.6e-7, so 5e-7 absolute (cancellation makes a relative bound useless)
got = load("data/c.bin", np.float32, 16384)
want = load("data/c_ref.bin", np.float32, 16384)
ok = ok and close(got, want, rtol=0.0, atol=5e-07)

print("T" if ok else "F")
