"""Warp_Shuffle_Dot_Product: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 2048
rng = np.random.default_rng(2007)

a = rng.uniform(0.5, 1.0, N).astype(np.float32)
b = rng.uniform(0.5, 1.0, N).astype(np.float32)
dot_ref = np.array([np.dot(a.astype(np.float64), b.astype(np.float64))])


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(a, "data/a.bin", np.float32, (N,))
save(b, "data/b.bin", np.float32, (N,))
save(dot_ref, "data/dot_ref.bin", np.float32, (1,))
