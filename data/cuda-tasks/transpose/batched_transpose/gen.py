"""Batched_Tile_Transpose: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

BATCH = 8
ROWS = 48
COLS = 40
rng = np.random.default_rng(7003)

x = rng.standard_normal((BATCH, ROWS, COLS)).astype(np.float32)
xt_ref = np.transpose(x, (0, 2, 1)).copy()


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (BATCH, ROWS, COLS))
save(xt_ref, "data/xt_ref.bin", np.float32, (BATCH, COLS, ROWS))
