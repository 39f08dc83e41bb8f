"""Column_Mean_Tall_Matrix: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 512
COLS = 96
rng = np.random.default_rng(2003)

x = rng.uniform(0.0, 2.0, (ROWS, COLS)).astype(np.float32)
mean_ref = x.astype(np.float64).mean(axis=0)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(mean_ref, "data/mean_ref.bin", np.float32, (COLS,))
