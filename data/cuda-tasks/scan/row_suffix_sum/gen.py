"""Row_Suffix_Sums: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 32
COLS = 512
rng = np.random.default_rng(3007)

x = rng.uniform(0.0, 1.0, (ROWS, COLS)).astype(np.float32)
y_ref = np.cumsum(x.astype(np.float64)[:, ::-1], axis=1)[:, ::-1]


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(y_ref, "data/y_ref.bin", np.float32, (ROWS, COLS))
