"""Softmax_Down_Columns: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 200
COLS = 64
rng = np.random.default_rng(4004)

x = (rng.standard_normal((ROWS, COLS)) * 2.0).astype(np.float32)
t = x.astype(np.float64)
e = np.exp(t - t.max(axis=0, keepdims=True))
y_ref = e / e.sum(axis=0, keepdims=True)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(y_ref, "data/y_ref.bin", np.float32, (ROWS, COLS))
