"""Wide_Integer_Sum_To_Int64: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 32768
rng = np.random.default_rng(2006)

x = rng.integers(0, 2**30, N, dtype=np.int32)
total_ref = np.array([int(x.astype(np.int64).sum())])


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.int32, (N,))
save(total_ref, "data/total_ref.bin", np.int64, (1,))
