"""Unit_Length_Row_Vectors: compares the program's outputs with the reference outputs; prints T or F."""
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

# y: a norm from 96 non-negative fp32 squares (96 * 2^-24 = 5.7e-6 relative) and one
# division: 1e-5 relative plus 1e-7 absolute
got = load("data/y.bin", np.float32, 24576)
want = load("data/y_ref.bin", np.float32, 24576)
ok = ok and close(got, want, rtol=1e-05, atol=1e-07)

print("T" if ok else "F")
