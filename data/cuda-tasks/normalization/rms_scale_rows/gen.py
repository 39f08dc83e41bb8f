"""Root_Mean_Square_Row_Scaling: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 64
COLS = 768
rng = np.random.default_rng(4003)

x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
weight = rng.uniform(0.5, 1.5, COLS).astype(np.float32)
t = x.astype(np.float64)
y_ref = t / np.sqrt((t ** 2).mean(axis=1, keepdims=True) + 1e-6) * weight


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(weight, "data/weight.bin", np.float32, (COLS,))
save(y_ref, "data/y_ref.bin", np.float32, (ROWS, COLS))
