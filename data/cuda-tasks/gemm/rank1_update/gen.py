"""Rank_One_Outer_Update: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

M = 128
N = 96
rng = np.random.default_rng(5007)

A = rng.uniform(-1.0, 1.0, (M, N)).astype(np.float32)
u = rng.uniform(-1.0, 1.0, M).astype(np.float32)
v = rng.uniform(-1.0, 1.0, N).astype(np.float32)
out_ref = A.astype(np.float64) + np.outer(u.astype(np.float64), v.astype(np.float64))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(A, "data/A.bin", np.float32, (M, N))
save(u, "data/u.bin", np.float32, (M,))
save(v, "data/v.bin", np.float32, (N,))
save(out_ref, "data/out_ref.bin", np.float32, (M, N))
