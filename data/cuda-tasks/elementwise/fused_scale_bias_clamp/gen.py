"""Fused_Scale_Bias_Clamp: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 16384
rng = np.random.default_rng(1001)

x = rng.uniform(-3.0, 3.0, N).astype(np.float32)
y_ref = np.clip(x.astype(np.float64) * 1.75 - 0.3, -1.0, 2.0)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (N,))
save(y_ref, "data/y_ref.bin", np.float32, (N,))
