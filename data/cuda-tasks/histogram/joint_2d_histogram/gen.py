"""Joint_Pair_Histogram_16x16: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 32768
LEVELS = 16
rng = np.random.default_rng(10004)

a = rng.integers(0, LEVELS, N, dtype=np.int32)
b = ((a + rng.integers(0, 4, N)) % LEVELS).astype(np.int32)  # correlated with a
joint_ref = np.bincount(a * LEVELS + b, minlength=LEVELS * LEVELS).reshape(LEVELS, LEVELS)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(a, "data/a.bin", np.int32, (N,))
save(b, "data/b.bin", np.int32, (N,))
save(joint_ref, "data/joint_ref.bin", np.int32, (LEVELS, LEVELS))
