"""Leapfrog_Wave_Step_1d: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 4096
rng = np.random.default_rng(11008)

xs = np.linspace(0.0, 1.0, N)
u_cur = (np.sin(6 * np.pi * xs) + 0.1 * rng.standard_normal(N)).astype(np.float32)
u_prev = (u_cur + 0.01 * rng.standard_normal(N)).astype(np.float32)
u_cur[0] = u_cur[-1] = 0.0
a, b = u_prev.astype(np.float64), u_cur.astype(np.float64)
u_next_ref = np.zeros(N)
u_next_ref[1:-1] = 2 * b[1:-1] - a[1:-1] + 0.09 * (b[:-2] - 2 * b[1:-1] + b[2:])


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(u_prev, "data/u_prev.bin", np.float32, (N,))
save(u_cur, "data/u_cur.bin", np.float32, (N,))
save(u_next_ref, "data/u_next_ref.bin", np.float32, (N,))
