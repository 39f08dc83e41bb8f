"""Split_Heads_To_Head_Major: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

SEQ = 128
HEADS = 4
HD = 32
rng = np.random.default_rng(12007)

x = rng.standard_normal((SEQ, HEADS * HD)).astype(np.float32)
heads_ref = x.reshape(SEQ, HEADS, HD).transpose(1, 0, 2).copy()


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (SEQ, 128))
save(heads_ref, "data/heads_ref.bin", np.float32, (HEADS, SEQ, HD))
