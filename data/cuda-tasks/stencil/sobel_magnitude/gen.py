"""Sobel_Edge_Strength: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

H = 64
W = 64
rng = np.random.default_rng(11007)

img = rng.uniform(0.0, 1.0, (H, W)).astype(np.float32)
t = img.astype(np.float64)
gx = (t[:-2, 2:] + 2 * t[1:-1, 2:] + t[2:, 2:]) - (t[:-2, :-2] + 2 * t[1:-1, :-2] + t[2:, :-2])
gy = (t[2:, :-2] + 2 * t[2:, 1:-1] + t[2:, 2:]) - (t[:-2, :-2] + 2 * t[:-2, 1:-1] + t[:-2, 2:])
mag_ref = np.zeros((H, W))
mag_ref[1:-1, 1:-1] = np.sqrt(gx ** 2 + gy ** 2)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(img, "data/img.bin", np.float32, (H, W))
save(mag_ref, "data/mag_ref.bin", np.float32, (H, W))
