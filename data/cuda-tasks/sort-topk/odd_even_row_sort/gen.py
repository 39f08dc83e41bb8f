"""Odd_Even_Transposition_Row_Sort: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 64
COLS = 64
rng = np.random.default_rng(9003)

x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
x[3] = x[3][::-1].copy()  # rows with repeats and already sorted rows are fine too
x[5, :] = 1.0
x[9] = np.sort(x[9])
y_ref = np.sort(x, axis=1)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(y_ref, "data/y_ref.bin", np.float32, (ROWS, COLS))
