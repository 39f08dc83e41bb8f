"""Strided_Batch_Small_Gemm: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

BATCH = 8
M = 32
K = 24
N = 40
rng = np.random.default_rng(5004)

A = rng.uniform(-1.0, 1.0, (BATCH, M, K)).astype(np.float32)
B = rng.uniform(-1.0, 1.0, (BATCH, K, N)).astype(np.float32)
C_ref = np.matmul(A.astype(np.float64), B.astype(np.float64))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(A, "data/A.bin", np.float32, (BATCH, M, K))
save(B, "data/B.bin", np.float32, (BATCH, K, N))
save(C_ref, "data/C_ref.bin", np.float32, (BATCH, M, N))
