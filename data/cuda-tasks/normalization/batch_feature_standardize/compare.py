"""Feature_Standardization_Over_Batch: compares the program's outputs with the reference outputs; prints T or F."""
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

# y: fp32 mean and variance over 512 values (512 * 2^-24 = 3e-5 relative), outputs O(1):
# 1e-4 relative plus 1e-4 absolute
got = load("data/y.bin", np.float32, 16384)
want = load("data/y_ref.bin", np.float32, 16384)
ok = ok and close(got, want, rtol=0.0001, atol=0.0001)

print("T" if ok else "F")
