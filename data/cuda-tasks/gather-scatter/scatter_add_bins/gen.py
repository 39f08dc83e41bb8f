"""Atomic_Scatter_Add_Weights: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 8192
SLOTS = 256
rng = np.random.default_rng(8002)

weights = rng.uniform(0.0, 1.0, N).astype(np.float32)
index = rng.integers(0, SLOTS, N, dtype=np.int32)
sums_ref = np.bincount(index, weights=weights.astype(np.float64), minlength=SLOTS)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(weights, "data/weights.bin", np.float32, (N,))
save(index, "data/index.bin", np.int32, (N,))
save(sums_ref, "data/sums_ref.bin", np.float32, (SLOTS,))
