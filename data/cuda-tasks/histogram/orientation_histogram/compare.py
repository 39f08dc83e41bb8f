"""Magnitude_Weighted_Orientation_Bins: compares the program's outputs with the reference outputs; prints T or F."""
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

# hist: each bin sums about 512 positive fp32 lengths (each within a few ulp) in an unspecified
# atomic order: in practice below 1000 * 2^-24 = 6e-5 relative
got = load("data/hist.bin", np.float32, 8)
want = load("data/hist_ref.bin", np.float32, 8)
ok = ok and close(got, want, rtol=6e-05, atol=0.0)

print("T" if ok else "F")
