"""Grouped_Query_Shared_Key_Scores: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

QH = 8
KVH = 2
SEQ = 32
D = 32
rng = np.random.default_rng(12008)

q = rng.uniform(-1.0, 1.0, (QH, SEQ, D)).astype(np.float32)
k = rng.uniform(-1.0, 1.0, (KVH, SEQ, D)).astype(np.float32)
kk = np.repeat(k.astype(np.float64), QH // KVH, axis=0)
scores_ref = np.einsum("hid,hjd->hij", q.astype(np.float64), kk) / np.sqrt(D)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(q, "data/q.bin", np.float32, (QH, SEQ, D))
save(k, "data/k.bin", np.float32, (KVH, SEQ, D))
save(scores_ref, "data/scores_ref.bin", np.float32, (QH, SEQ, SEQ))
