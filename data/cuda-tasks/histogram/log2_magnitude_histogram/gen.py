"""Bit_Length_Histogram: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 32768
BINS = 32
rng = np.random.default_rng(10007)

# Bit lengths spread over all 32 bins: a random length, then a random value of that length.
length = rng.integers(0, 32, N)
low = rng.integers(0, 2**31, N, dtype=np.uint64)
words = ((np.uint64(1) << length.astype(np.uint64)) | (low & ((np.uint64(1) << length.astype(np.uint64)) - np.uint64(1)))).astype(np.uint32)
counts_ref = np.bincount(length, minlength=BINS)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(words, "data/words.bin", np.uint32, (N,))
save(counts_ref, "data/counts_ref.bin", np.int32, (BINS,))
