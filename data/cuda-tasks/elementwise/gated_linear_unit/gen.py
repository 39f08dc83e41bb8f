"""Gated_Linear_Unit_Halves: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 256
COLS = 128
rng = np.random.default_rng(1002)

x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
a = x[:, :COLS // 2].astype(np.float64)
b = x[:, COLS // 2:].astype(np.float64)
y_ref = a / (1.0 + np.exp(-b))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(y_ref, "data/y_ref.bin", np.float32, (ROWS, 64))
