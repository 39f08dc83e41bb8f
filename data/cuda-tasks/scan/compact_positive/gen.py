"""Order_Preserving_Positive_Compaction: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 16384
rng = np.random.default_rng(3005)

x = rng.standard_normal(N).astype(np.float32)
keep = x[x > 0]
packed_ref = np.concatenate([keep, np.zeros(N - keep.size, dtype=np.float32)])
count_ref = np.array([keep.size])


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (N,))
save(packed_ref, "data/packed_ref.bin", np.float32, (N,))
save(count_ref, "data/count_ref.bin", np.int32, (1,))
