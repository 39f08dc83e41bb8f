"""Symmetric_Part_Of_Square_Matrix: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 128
rng = np.random.default_rng(7006)

A = rng.standard_normal((N, N)).astype(np.float32)
t = A.astype(np.float64)
S_ref = 0.5 * (t + t.T)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(A, "data/A.bin", np.float32, (N, N))
save(S_ref, "data/S_ref.bin", np.float32, (N, N))
