"""Cumulative_Count_Distribution: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 16384
LEVELS = 128
rng = np.random.default_rng(10006)

x = np.minimum(rng.poisson(40.0, N), LEVELS - 1).astype(np.int32)
cdf_ref = np.cumsum(np.bincount(x, minlength=LEVELS))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.int32, (N,))
save(cdf_ref, "data/cdf_ref.bin", np.int32, (LEVELS,))
