"""Fixed_Range_Float_Histogram: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 32768
BINS = 64
rng = np.random.default_rng(10002)

# Every value sits at least 0.1 bin widths from a bin edge (or well outside the range), so fp32
# rounding of the bin computation cannot move it to a neighbouring bin.
width = 6.0 / BINS
slot = rng.integers(-8, BINS + 8, N)
offset = rng.uniform(0.1, 0.9, N)
values = (-3.0 + (slot + offset) * width).astype(np.float32)
inside = (slot >= 0) & (slot < BINS)
counts_ref = np.bincount(slot[inside], minlength=BINS)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(values, "data/values.bin", np.float32, (N,))
save(counts_ref, "data/counts_ref.bin", np.int32, (BINS,))
