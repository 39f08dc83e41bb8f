"""Grouped_Channel_Shuffle: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

GROUPS = 4
PER = 8
HW = 256
rng = np.random.default_rng(7007)

x = rng.standard_normal((32, 16, 16)).astype(np.float32)
y_ref = x.reshape(GROUPS, PER, 16, 16).transpose(1, 0, 2, 3).reshape(32, 16, 16).copy()


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (32, 16, 16))
save(y_ref, "data/y_ref.bin", np.float32, (32, 16, 16))
