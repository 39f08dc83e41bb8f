"""Beta_Scaled_Swish: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 64
COLS = 300
rng = np.random.default_rng(1009)

x = (rng.standard_normal((ROWS, COLS)) * 3.0).astype(np.float32)
t = x.astype(np.float64)
y_ref = t / (1.0 + np.exp(-1.5 * t))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(y_ref, "data/y_ref.bin", np.float32, (ROWS, COLS))
