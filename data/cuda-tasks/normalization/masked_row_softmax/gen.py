"""Key_Masked_Row_Softmax: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 64
COLS = 128
rng = np.random.default_rng(4007)

x = (rng.standard_normal((ROWS, COLS)) * 2.0).astype(np.float32)
keep = (rng.uniform(0.0, 1.0, (ROWS, COLS)) < 0.7).astype(np.int32)
keep[:, 0] = 1  # every row keeps at least one position
t = np.where(keep == 1, x.astype(np.float64), -np.inf)
e = np.exp(t - t.max(axis=1, keepdims=True))
y_ref = e / e.sum(axis=1, keepdims=True)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(keep, "data/keep.bin", np.int32, (ROWS, COLS))
save(y_ref, "data/y_ref.bin", np.float32, (ROWS, COLS))
