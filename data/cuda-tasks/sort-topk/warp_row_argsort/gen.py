"""Warp_Row_Argsort_32: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 128
COLS = 32
rng = np.random.default_rng(9005)

x = rng.permutation(ROWS * COLS).reshape(ROWS, COLS).astype(np.float32) * 0.01
order_ref = np.argsort(x, axis=1, kind="stable")


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(order_ref, "data/order_ref.bin", np.int32, (ROWS, COLS))
