"""Inclusive_Int_Prefix_Scan: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 8192
rng = np.random.default_rng(3001)

x = rng.integers(0, 100, N, dtype=np.int32)
y_ref = np.cumsum(x.astype(np.int64))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.int32, (N,))
save(y_ref, "data/y_ref.bin", np.int32, (N,))
