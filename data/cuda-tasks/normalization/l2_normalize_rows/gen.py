"""Unit_Length_Row_Vectors: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 256
COLS = 96
rng = np.random.default_rng(4006)

x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
x[7] = 0.0  # a zero row stays zero
t = x.astype(np.float64)
y_ref = t / np.maximum(np.sqrt((t ** 2).sum(axis=1, keepdims=True)), 1e-12)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(y_ref, "data/y_ref.bin", np.float32, (ROWS, COLS))
