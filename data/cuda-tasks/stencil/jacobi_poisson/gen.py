"""Jacobi_Poisson_Ten_Sweeps: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 64
SWEEPS = 10
rng = np.random.default_rng(11005)

f = rng.uniform(-1.0, 1.0, (N, N)).astype(np.float32)
h2 = (1.0 / (N - 1)) ** 2
rhs = f.astype(np.float64)
cur = np.zeros((N, N))
for _ in range(SWEEPS):
    nxt = np.zeros((N, N))
    nxt[1:-1, 1:-1] = 0.25 * (cur[:-2, 1:-1] + cur[2:, 1:-1] + cur[1:-1, :-2] + cur[1:-1, 2:] + h2 * rhs[1:-1, 1:-1])
    cur = nxt
u_ref = cur


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(f, "data/f.bin", np.float32, (N, N))
save(u_ref, "data/u_ref.bin", np.float32, (N, N))
