"""Explicit_Heat_1d_Four_Steps: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 8192
STEPS = 4
rng = np.random.default_rng(11002)

u0 = rng.uniform(0.0, 1.0, N).astype(np.float32)
u = u0.astype(np.float64)
for _ in range(STEPS):
    nxt = u.copy()
    nxt[1:-1] = u[1:-1] + 0.25 * (u[:-2] - 2.0 * u[1:-1] + u[2:])
    u = nxt
u4_ref = u


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(u0, "data/u0.bin", np.float32, (N,))
save(u4_ref, "data/u4_ref.bin", np.float32, (N,))
