"""Sliding_Window_Mean_Width_8: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

LEN = 8192
WIN = 8
OUT_LEN = 8185
rng = np.random.default_rng(6009)

x = rng.uniform(0.0, 1.0, LEN).astype(np.float32)
c = np.concatenate([[0.0], np.cumsum(x.astype(np.float64))])
y_ref = (c[WIN:] - c[:-WIN]) / WIN


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (LEN,))
save(y_ref, "data/y_ref.bin", np.float32, (OUT_LEN,))
