"""Row_Cumulative_Product: compares the program's outputs with the reference outputs; prints T or F."""
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

# y: a product of up to 64 fp32 factors rounds 63 times, each by at most 2^-24 relative, in
# any order: 64 * 2^-24 = 3.8e-6 relative, rounded up to 6e-6
got = load("data/y.bin", np.float32, 4096)
want = load("data/y_ref.bin", np.float32, 4096)
ok = ok and close(got, want, rtol=6e-06, atol=0.0)

print("T" if ok else "F")
