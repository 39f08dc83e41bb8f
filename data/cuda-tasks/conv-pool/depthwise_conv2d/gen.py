"""Depthwise_Valid_Conv2d: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

C = 8
H = 32
W = 32
OH = 30
OW = 30
rng = np.random.default_rng(6004)

x = rng.uniform(-1.0, 1.0, (C, H, W)).astype(np.float32)
w = rng.uniform(-1.0, 1.0, (C, 3, 3)).astype(np.float32)
t, k = x.astype(np.float64), w.astype(np.float64)
y_ref = sum(k[:, dy, dx, None, None] * t[:, dy:dy + OH, dx:dx + OW] for dy in range(3) for dx in range(3))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (C, H, W))
save(w, "data/w.bin", np.float32, (C, 3, 3))
save(y_ref, "data/y_ref.bin", np.float32, (C, OH, OW))
