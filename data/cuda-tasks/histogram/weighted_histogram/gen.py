"""Weighted_Unit_Interval_Histogram: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 16384
BINS = 32
rng = np.random.default_rng(10003)

# Values at least 0.1 bin widths from a bin edge, so fp32 rounding cannot change a bin.
slot = rng.integers(0, BINS, N)
x = ((slot + rng.uniform(0.1, 0.9, N)) / BINS).astype(np.float32)
w = rng.uniform(0.0, 2.0, N).astype(np.float32)
hist_ref = np.bincount(slot, weights=w.astype(np.float64), minlength=BINS)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (N,))
save(w, "data/w.bin", np.float32, (N,))
save(hist_ref, "data/hist_ref.bin", np.float32, (BINS,))
