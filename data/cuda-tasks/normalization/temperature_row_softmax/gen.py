"""Temperature_Scaled_Row_Softmax: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 128
COLS = 256
rng = np.random.default_rng(4001)

x = (rng.standard_normal((ROWS, COLS)) * 2.0).astype(np.float32)
z = x.astype(np.float64) / 0.7
z -= z.max(axis=1, keepdims=True)
e = np.exp(z)
y_ref = e / e.sum(axis=1, keepdims=True)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(y_ref, "data/y_ref.bin", np.float32, (ROWS, COLS))
