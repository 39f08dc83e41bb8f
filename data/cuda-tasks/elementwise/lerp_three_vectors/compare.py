"""Per_Element_Linear_Interpolation: compares the program's outputs with the reference outputs; prints T or F."""
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

# out: three fp32 roundings of values <= 2 (a + w (b - a), or the algebraically equal
# (1 - w) a + w b): a few times 2^-24 * 2, so 1e-6 absolute plus 1e-6 relative
got = load("data/out.bin", np.float32, 20000)
want = load("data/out_ref.bin", np.float32, 20000)
ok = ok and close(got, want, rtol=1e-06, atol=1e-06)

print("T" if ok else "F")
