"""Overlapping_Max_Pool_3x3_Stride_2: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

C = 3
H = 32
W = 32
OH = 16
OW = 16
rng = np.random.default_rng(6006)

x = rng.standard_normal((C, H, W)).astype(np.float32)
p = np.pad(x, ((0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
y_ref = np.full((C, OH, OW), -np.inf, dtype=np.float32)
for dy in range(3):
    for dx in range(3):
        y_ref = np.maximum(y_ref, p[:, dy:dy + 2 * OH:2, dx:dx + 2 * OW:2])


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (C, H, W))
save(y_ref, "data/y_ref.bin", np.float32, (C, OH, OW))
