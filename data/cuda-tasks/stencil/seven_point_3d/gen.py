"""Seven_Point_Stencil_3d: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

D = 32
H = 32
W = 32
rng = np.random.default_rng(11004)

u = rng.uniform(0.0, 1.0, (D, H, W)).astype(np.float32)
t = u.astype(np.float64)
v_ref = t.copy()
c = t[1:-1, 1:-1, 1:-1]
v_ref[1:-1, 1:-1, 1:-1] = 0.4 * c + 0.1 * (t[:-2, 1:-1, 1:-1] + t[2:, 1:-1, 1:-1] + t[1:-1, :-2, 1:-1]
                                           + t[1:-1, 2:, 1:-1] + t[1:-1, 1:-1, :-2] + t[1:-1, 1:-1, 2:])


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(u, "data/u.bin", np.float32, (D, H, W))
save(v_ref, "data/v_ref.bin", np.float32, (D, H, W))
