"""Row_Argmin_Position: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 256
COLS = 200
rng = np.random.default_rng(2004)

x = rng.permutation(ROWS * COLS).reshape(ROWS, COLS).astype(np.float32) * 0.5 - 1000.0
idx_ref = np.argmin(x, axis=1)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(idx_ref, "data/idx_ref.bin", np.int32, (ROWS,))
