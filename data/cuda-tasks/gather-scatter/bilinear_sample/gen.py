"""Bilinear_Point_Sampling: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

H = 64
W = 64
P = 4096
rng = np.random.default_rng(8008)

img = rng.uniform(0.0, 1.0, (H, W)).astype(np.float32)
pts = np.stack([rng.uniform(0.0, W - 1.001, P), rng.uniform(0.0, H - 1.001, P)], axis=1).astype(np.float32)
px, py = pts[:, 0].astype(np.float64), pts[:, 1].astype(np.float64)
x0, y0 = np.floor(px).astype(int), np.floor(py).astype(int)
fx, fy = px - x0, py - y0
t = img.astype(np.float64)
val_ref = ((1 - fy) * ((1 - fx) * t[y0, x0] + fx * t[y0, x0 + 1])
           + fy * ((1 - fx) * t[y0 + 1, x0] + fx * t[y0 + 1, x0 + 1]))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(img, "data/img.bin", np.float32, (H, W))
save(pts, "data/pts.bin", np.float32, (P, 2))
save(val_ref, "data/val_ref.bin", np.float32, (P,))
