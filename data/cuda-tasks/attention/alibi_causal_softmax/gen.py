"""Linear_Bias_Causal_Head_Softmax: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

HEADS = 4
SEQ = 64
rng = np.random.default_rng(12004)

scores = (rng.standard_normal((HEADS, SEQ, SEQ)) * 2.0).astype(np.float32)
slopes = np.array([0.5, 0.25, 0.125, 0.0625])
i = np.arange(SEQ)[:, None]
j = np.arange(SEQ)[None, :]
z = scores.astype(np.float64) + slopes[:, None, None] * (j - i)[None]
z = np.where((j <= i)[None], z, -np.inf)
e = np.exp(z - z.max(axis=2, keepdims=True))
probs_ref = e / e.sum(axis=2, keepdims=True)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(scores, "data/scores.bin", np.float32, (HEADS, SEQ, SEQ))
save(probs_ref, "data/probs_ref.bin", np.float32, (HEADS, SEQ, SEQ))
