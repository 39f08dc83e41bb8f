"""Flagged_Segment_Inclusive_Scan: compares the program's outputs with the reference outputs; prints T or F."""
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

# scan: running sums of non-negative fp32 terms within a segment (segments here are at most a
# few hundred long): a few hundred * 2^-24 relative, 2e-5 plus 1e-6 absolute
got = load("data/scan.bin", np.float32, 4096)
want = load("data/scan_ref.bin", np.float32, 4096)
ok = ok and close(got, want, rtol=2e-05, atol=1e-06)

print("T" if ok else "F")
