"""Five_Point_Laplacian_Grid: compares the program's outputs with the reference outputs; prints T or F."""
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

# lap: five fp32 terms of magnitude <= 4 added in any order: 5 * 2^-24 * 8 = 2.4e-6 at worst,
# in practice far less; results near zero make a relative bound useless, so 2e-6 absolute
got = load("data/lap.bin", np.float32, 16384)
want = load("data/lap_ref.bin", np.float32, 16384)
ok = ok and close(got, want, rtol=0.0, atol=2e-06)

print("T" if ok else "F")
