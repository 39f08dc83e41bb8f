"""Warp_Row_Top_8: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 256
COLS = 128
K = 8
rng = np.random.default_rng(9002)

# Distinct values (a random permutation of a grid), so the selection is unique.
scores = (rng.permutation(ROWS * COLS).reshape(ROWS, COLS) * 0.001 - 10.0).astype(np.float32)
top_ref = -np.sort(-scores, axis=1)[:, :K]


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(scores, "data/scores.bin", np.float32, (ROWS, COLS))
save(top_ref, "data/top_ref.bin", np.float32, (ROWS, K))
