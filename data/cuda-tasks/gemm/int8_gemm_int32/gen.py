"""Int8_Gemm_Int32_Accumulate: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

M = 64
K = 128
N = 64
rng = np.random.default_rng(5005)

A = rng.integers(-127, 128, (M, K), dtype=np.int8)
B = rng.integers(-127, 128, (K, N), dtype=np.int8)
C_ref = A.astype(np.int64) @ B.astype(np.int64)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(A, "data/A.bin", np.int8, (M, K))
save(B, "data/B.bin", np.int8, (K, N))
save(C_ref, "data/C_ref.bin", np.int32, (M, N))
