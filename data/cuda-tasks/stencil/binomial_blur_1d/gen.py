"""Binomial_Five_Tap_Smoothing: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 16384
rng = np.random.default_rng(11009)

x = rng.uniform(0.0, 1.0, N).astype(np.float32)
p = np.pad(x.astype(np.float64), 2)
y_ref = (p[:-4] + 4 * p[1:-3] + 6 * p[2:-2] + 4 * p[3:-1] + p[4:]) / 16.0


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (N,))
save(y_ref, "data/y_ref.bin", np.float32, (N,))
