"""Scatter_By_Permutation: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 8192
rng = np.random.default_rng(8004)

x = rng.standard_normal(N).astype(np.float32)
perm = rng.permutation(N).astype(np.int32)
y_ref = np.empty(N, dtype=np.float32)
y_ref[perm] = x


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (N,))
save(perm, "data/perm.bin", np.int32, (N,))
save(y_ref, "data/y_ref.bin", np.float32, (N,))
