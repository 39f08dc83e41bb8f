"""Gemm_With_Transposed_Left_Operand: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

K = 64
M = 48
N = 80
rng = np.random.default_rng(5003)

A = rng.uniform(-1.0, 1.0, (K, M)).astype(np.float32)
B = rng.uniform(-1.0, 1.0, (K, N)).astype(np.float32)
C_ref = A.astype(np.float64).T @ B.astype(np.float64)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(A, "data/A.bin", np.float32, (K, M))
save(B, "data/B.bin", np.float32, (K, N))
save(C_ref, "data/C_ref.bin", np.float32, (M, N))
