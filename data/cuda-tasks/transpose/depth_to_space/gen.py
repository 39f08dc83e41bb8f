"""Depth_To_Space_Block_2: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

C = 16
H = 12
W = 12
R = 2
rng = np.random.default_rng(7008)

x = rng.standard_normal((C, H, W)).astype(np.float32)
y_ref = x.reshape(4, R, R, H, W).transpose(0, 3, 1, 4, 2).reshape(4, H * R, W * R).copy()


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (C, H, W))
save(y_ref, "data/y_ref.bin", np.float32, (4, 24, 24))
