"""Clamped_Edge_Box_Blur_3x3: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

H = 96
W = 128
rng = np.random.default_rng(11003)

img = rng.uniform(0.0, 1.0, (H, W)).astype(np.float32)
p = np.pad(img.astype(np.float64), 1, mode="edge")
blur_ref = sum(p[dy:dy + H, dx:dx + W] for dy in range(3) for dx in range(3)) / 9.0


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(img, "data/img.bin", np.float32, (H, W))
save(blur_ref, "data/blur_ref.bin", np.float32, (H, W))
