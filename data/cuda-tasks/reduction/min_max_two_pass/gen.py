"""Two_Pass_Min_And_Max: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 50000
BLOCKS = 50
rng = np.random.default_rng(2009)

x = (rng.standard_normal(N) * 10.0 + 3.0).astype(np.float32)
extrema_ref = np.array([x.min(), x.max()])


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (N,))
save(extrema_ref, "data/extrema_ref.bin", np.float32, (2,))
