"""Row_Cumulative_Product: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 64
COLS = 64
rng = np.random.default_rng(3008)

x = rng.uniform(0.9, 1.1, (ROWS, COLS)).astype(np.float32)
y_ref = np.cumprod(x.astype(np.float64), axis=1)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(y_ref, "data/y_ref.bin", np.float32, (ROWS, COLS))
