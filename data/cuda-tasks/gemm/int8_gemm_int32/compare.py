"""Int8_Gemm_Int32_Accumulate: compares the program's outputs with the reference outputs; prints T or F."""
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

# C: integer products and sums (|C| <= 128 * 127^2, within int32) are exact
got = load("data/C.bin", np.int32, 4096)
want = load("data/C_ref.bin", np.int32, 4096)
ok = ok and exact(got, want)

print("T" if ok else "F")
