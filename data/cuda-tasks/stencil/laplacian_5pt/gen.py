"""Five_Point_Laplacian_Grid: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

H = 128
W = 128
rng = np.random.default_rng(11001)

u = rng.uniform(0.0, 1.0, (H, W)).astype(np.float32)
v = u.astype(np.float64)
lap_ref = np.zeros((H, W))
lap_ref[1:-1, 1:-1] = v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:] - 4.0 * v[1:-1, 1:-1]


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(u, "data/u.bin", np.float32, (H, W))
save(lap_ref, "data/lap_ref.bin", np.float32, (H, W))
