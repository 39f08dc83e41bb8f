"""Median_Of_63_Per_Row: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 128
COLS = 63
rng = np.random.default_rng(9008)

x = (rng.permutation(ROWS * COLS).reshape(ROWS, COLS) * 0.5).astype(np.float32)
med_ref = np.median(x, axis=1)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(med_ref, "data/med_ref.bin", np.float32, (ROWS,))
