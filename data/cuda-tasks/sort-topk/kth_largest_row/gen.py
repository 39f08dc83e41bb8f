"""Tenth_Largest_Per_Row: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 256
COLS = 100
rng = np.random.default_rng(9006)

x = (rng.permutation(ROWS * COLS).reshape(ROWS, COLS) * 0.125 - 1000.0).astype(np.float32)
kth_ref = -np.sort(-x, axis=1)[:, 9]


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(kth_ref, "data/kth_ref.bin", np.float32, (ROWS,))
