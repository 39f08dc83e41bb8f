"""Scaled_Gemm_Plus_Scaled_C: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

M = 48
K = 64
N = 56
rng = np.random.default_rng(5006)

A = rng.uniform(-1.0, 1.0, (M, K)).astype(np.float32)
B = rng.uniform(-1.0, 1.0, (K, N)).astype(np.float32)
C_in = rng.uniform(-1.0, 1.0, (M, N)).astype(np.float32)
C_out_ref = 1.5 * (A.astype(np.float64) @ B.astype(np.float64)) - 0.5 * C_in.astype(np.float64)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(A, "data/A.bin", np.float32, (M, K))
save(B, "data/B.bin", np.float32, (K, N))
save(C_in, "data/C_in.bin", np.float32, (M, N))
save(C_out_ref, "data/C_out_ref.bin", np.float32, (M, N))
