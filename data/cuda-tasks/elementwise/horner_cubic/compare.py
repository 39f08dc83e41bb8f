"""Horner_Cubic_Polynomial: compares the program's outputs with the reference outputs; prints T or F."""
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

# p: six fp32 roundings (or three with fused multiply-adds) of intermediates of magnitude <= 5:
# about 6 * 2^-24 * 5 = 1.8e-6, so 4e-6 absolute plus 1e-6 relative
got = load("data/p.bin", np.float32, 16384)
want = load("data/p_ref.bin", np.float32, 16384)
ok = ok and close(got, want, rtol=1e-06, atol=4e-06)

print("T" if ok else "F")
