"""Column_Mean_Tall_Matrix: compares the program's outputs with the reference outputs; prints T or F."""
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

# mean: an fp32 sum of 512 non-negative terms in any order: 512 * 2^-24 = 3.1e-5 relative,
# and the division adds half an ulp
got = load("data/mean.bin", np.float32, 96)
want = load("data/mean_ref.bin", np.float32, 96)
ok = ok and close(got, want, rtol=3.2e-05, atol=0.0)

print("T" if ok else "F")
