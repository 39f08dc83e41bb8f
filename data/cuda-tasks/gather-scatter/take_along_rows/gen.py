"""Per_Row_Index_Gather: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 256
COLS = 64
PICK = 16
rng = np.random.default_rng(8006)

x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
idx = rng.integers(0, COLS, (ROWS, PICK), dtype=np.int32)
y_ref = np.take_along_axis(x, idx.astype(np.int64), axis=1)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(idx, "data/idx.bin", np.int32, (ROWS, PICK))
save(y_ref, "data/y_ref.bin", np.float32, (ROWS, PICK))
