"""Magnitude_Weighted_Orientation_Bins: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 4096
BINS = 8
rng = np.random.default_rng(10008)

# Angles at least 0.1 bin widths from a bin edge, so fp32 atan2 cannot change a bin.
width = 2.0 * np.pi / BINS
slot = rng.integers(0, BINS, N)
angle = -np.pi + (slot + rng.uniform(0.1, 0.9, N)) * width
mag = rng.uniform(0.1, 3.0, N)
gx = (mag * np.cos(angle)).astype(np.float32)
gy = (mag * np.sin(angle)).astype(np.float32)
m32 = np.sqrt(gx.astype(np.float64) ** 2 + gy.astype(np.float64) ** 2)
hist_ref = np.bincount(slot, weights=m32, minlength=BINS)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(gx, "data/gx.bin", np.float32, (N,))
save(gy, "data/gy.bin", np.float32, (N,))
save(hist_ref, "data/hist_ref.bin", np.float32, (BINS,))
