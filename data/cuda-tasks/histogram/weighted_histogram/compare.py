"""Weighted_Unit_Interval_Histogram: compares the program's outputs with the reference outputs; prints T or F."""
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

# hist: atomics add in an unspecified order; each bin sums about 512 non-negative fp32 weights:
# in practice well under 600 * 2^-24 = 3.6e-5 relative, 4e-5
got = load("data/hist.bin", np.float32, 32)
want = load("data/hist_ref.bin", np.float32, 32)
ok = ok and close(got, want, rtol=4e-05, atol=0.0)

print("T" if ok else "F")
