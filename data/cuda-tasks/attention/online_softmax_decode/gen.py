"""Single_Query_Online_Softmax_Decode: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

HEADS = 8
CTX = 256
D = 64
rng = np.random.default_rng(12006)

q = rng.standard_normal((HEADS, D)).astype(np.float32)
k_cache = rng.standard_normal((HEADS, CTX, D)).astype(np.float32)
v_cache = rng.standard_normal((HEADS, CTX, D)).astype(np.float32)
s = np.einsum("hd,hcd->hc", q.astype(np.float64), k_cache.astype(np.float64)) / np.sqrt(D)
e = np.exp(s - s.max(axis=1, keepdims=True))
w = e / e.sum(axis=1, keepdims=True)
out_ref = np.einsum("hc,hcd->hd", w, v_cache.astype(np.float64))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(q, "data/q.bin", np.float32, (HEADS, D))
save(k_cache, "data/k_cache.bin", np.float32, (HEADS, CTX, D))
save(v_cache, "data/v_cache.bin", np.float32, (HEADS, CTX, D))
save(out_ref, "data/out_ref.bin", np.float32, (HEADS, D))
