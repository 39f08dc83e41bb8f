"""Thresholded_Softplus: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 16384
rng = np.random.default_rng(1004)

x = (rng.standard_normal(N) * 8.0).astype(np.float32)
t = x.astype(np.float64)
y_ref = np.where(t > 20.0, t, np.log1p(np.exp(np.minimum(t, 20.0))))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (N,))
save(y_ref, "data/y_ref.bin", np.float32, (N,))
