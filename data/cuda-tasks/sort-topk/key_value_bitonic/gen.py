"""Key_Value_Bitonic_Sort: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 2048
rng = np.random.default_rng(9007)

keys = rng.permutation(100000)[:N].astype(np.int32)  # distinct keys
vals = rng.standard_normal(N).astype(np.float32)
order = np.argsort(keys)
sorted_keys_ref = keys[order]
sorted_vals_ref = vals[order]


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(keys, "data/keys.bin", np.int32, (N,))
save(vals, "data/vals.bin", np.float32, (N,))
save(sorted_keys_ref, "data/sorted_keys_ref.bin", np.int32, (N,))
save(sorted_vals_ref, "data/sorted_vals_ref.bin", np.float32, (N,))
