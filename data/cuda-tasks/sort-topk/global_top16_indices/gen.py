"""Global_Top_16_Positions: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 8192
K = 16
rng = np.random.default_rng(9009)

x = (rng.permutation(N) * 0.01 - 40.0).astype(np.float32)
top_idx_ref = np.argsort(-x, kind="stable")[:K]


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (N,))
save(top_idx_ref, "data/top_idx_ref.bin", np.int32, (K,))
