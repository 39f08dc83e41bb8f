"""Horner_Cubic_Polynomial: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 16384
rng = np.random.default_rng(1003)

x = rng.uniform(-2.0, 2.0, N).astype(np.float32)
t = x.astype(np.float64)
p_ref = ((0.5 * t - 1.25) * t + 2.0) * t + 0.75


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (N,))
save(p_ref, "data/p_ref.bin", np.float32, (N,))
