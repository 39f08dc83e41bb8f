"""Count_Values_Above_Threshold: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 65536
rng = np.random.default_rng(2005)

x = rng.standard_normal(N).astype(np.float32)
count_ref = np.array([np.count_nonzero(x > 0.5)])


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (N,))
save(count_ref, "data/count_ref.bin", np.int32, (1,))
