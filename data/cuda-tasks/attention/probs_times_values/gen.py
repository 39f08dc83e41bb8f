"""Attention_Probability_Value_Product: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

SEQ = 128
D = 64
rng = np.random.default_rng(12005)

z = rng.standard_normal((SEQ, SEQ)) * 2.0
e = np.exp(z - z.max(axis=1, keepdims=True))
p = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
v = rng.uniform(-1.0, 1.0, (SEQ, D)).astype(np.float32)
out_ref = p.astype(np.float64) @ v.astype(np.float64)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(p, "data/p.bin", np.float32, (SEQ, SEQ))
save(v, "data/v.bin", np.float32, (SEQ, D))
save(out_ref, "data/out_ref.bin", np.float32, (SEQ, D))
