"""Padded_Tile_Rect_Transpose: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 96
COLS = 160
rng = np.random.default_rng(7001)

a = rng.standard_normal((ROWS, COLS)).astype(np.float32)
at_ref = a.T.copy()


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(a, "data/a.bin", np.float32, (ROWS, COLS))
save(at_ref, "data/at_ref.bin", np.float32, (COLS, ROWS))
