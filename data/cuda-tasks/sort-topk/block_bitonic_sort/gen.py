"""Shared_Memory_Bitonic_Sort_4096: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 4096
rng = np.random.default_rng(9001)

keys = rng.standard_normal(N).astype(np.float32)
sorted_ref = np.sort(keys)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(keys, "data/keys.bin", np.float32, (N,))
save(sorted_ref, "data/sorted_ref.bin", np.float32, (N,))
