"""Transposed_Matrix_Vector_Product: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 512
COLS = 128
rng = np.random.default_rng(5008)

A = rng.uniform(0.0, 1.0, (ROWS, COLS)).astype(np.float32)
x = rng.uniform(0.0, 1.0, ROWS).astype(np.float32)
y_ref = A.astype(np.float64).T @ x.astype(np.float64)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(A, "data/A.bin", np.float32, (ROWS, COLS))
save(x, "data/x.bin", np.float32, (ROWS,))
save(y_ref, "data/y_ref.bin", np.float32, (COLS,))
