"""Privatized_Byte_Histogram: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 65536
BINS = 256
rng = np.random.default_rng(10001)

# A skewed distribution, so some bins are hot and some are empty.
bytes = np.minimum(rng.exponential(40.0, N), 255).astype(np.uint8)
counts_ref = np.bincount(bytes, minlength=BINS)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(bytes, "data/bytes.bin", np.uint8, (N,))
save(counts_ref, "data/counts_ref.bin", np.int32, (BINS,))
