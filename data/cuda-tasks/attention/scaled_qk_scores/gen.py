"""Scaled_Query_Key_Scores: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

SEQ = 128
D = 64
rng = np.random.default_rng(12001)

q = rng.uniform(-1.0, 1.0, (SEQ, D)).astype(np.float32)
k = rng.uniform(-1.0, 1.0, (SEQ, D)).astype(np.float32)
scores_ref = (q.astype(np.float64) @ k.astype(np.float64).T) / np.sqrt(D)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(q, "data/q.bin", np.float32, (SEQ, D))
save(k, "data/k.bin", np.float32, (SEQ, D))
save(scores_ref, "data/scores_ref.bin", np.float32, (SEQ, SEQ))
