"""Causal_Single_Head_Attention: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

SEQ = 64
D = 32
rng = np.random.default_rng(12002)

q = rng.standard_normal((SEQ, D)).astype(np.float32)
k = rng.standard_normal((SEQ, D)).astype(np.float32)
v = rng.standard_normal((SEQ, D)).astype(np.float32)
s = (q.astype(np.float64) @ k.astype(np.float64).T) / np.sqrt(D)
s[np.triu_indices(SEQ, 1)] = -np.inf
s -= s.max(axis=1, keepdims=True)
p = np.exp(s)
p /= p.sum(axis=1, keepdims=True)
out_ref = p @ v.astype(np.float64)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(q, "data/q.bin", np.float32, (SEQ, D))
save(k, "data/k.bin", np.float32, (SEQ, D))
save(v, "data/v.bin", np.float32, (SEQ, D))
save(out_ref, "data/out_ref.bin", np.float32, (SEQ, D))
