"""Rank_By_Counting_Sort: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 2048
rng = np.random.default_rng(9004)

x = (rng.permutation(N) * 0.25 - 200.0).astype(np.float32)
y_ref = np.sort(x)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (N,))
save(y_ref, "data/y_ref.bin", np.float32, (N,))
