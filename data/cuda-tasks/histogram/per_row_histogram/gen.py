"""Per_Row_Level_Counts: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 64
COLS = 512
LEVELS = 16
rng = np.random.default_rng(10005)

x = rng.integers(0, LEVELS, (ROWS, COLS), dtype=np.int32)
x[0] = 3  # a row with a single level
counts_ref = np.stack([np.bincount(r, minlength=LEVELS) for r in x])


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.int32, (ROWS, COLS))
save(counts_ref, "data/counts_ref.bin", np.int32, (ROWS, LEVELS))
