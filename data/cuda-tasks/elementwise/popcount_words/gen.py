"""Set_Bit_Count_Per_Word: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 16384
rng = np.random.default_rng(1006)

words = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
words[:4] = [0, 0xFFFFFFFF, 1, 0x80000000]
bits_ref = np.array([bin(int(v)).count("1") for v in words])


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(words, "data/words.bin", np.uint32, (N,))
save(bits_ref, "data/bits_ref.bin", np.int32, (N,))
