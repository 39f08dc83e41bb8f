"""Column_Index_Select: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 128
COLS = 256
PICK = 64
rng = np.random.default_rng(8003)

x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
cols = rng.integers(0, COLS, PICK, dtype=np.int32)  # repeats allowed
y_ref = x[:, cols]


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(cols, "data/cols.bin", np.int32, (PICK,))
save(y_ref, "data/y_ref.bin", np.float32, (ROWS, PICK))
