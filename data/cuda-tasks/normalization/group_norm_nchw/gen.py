"""Channel_Group_Normalization: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

NB = 2
C = 32
H = 8
W = 8
GROUPS = 8
rng = np.random.default_rng(4005)

x = (rng.standard_normal((NB, C, H, W)) * 2.0 + 1.0).astype(np.float32)
gamma = rng.uniform(0.5, 1.5, C).astype(np.float32)
beta = rng.uniform(-0.5, 0.5, C).astype(np.float32)
g = x.astype(np.float64).reshape(NB, GROUPS, -1)
mean = g.mean(axis=2, keepdims=True)
var = g.var(axis=2, keepdims=True)
norm = ((g - mean) / np.sqrt(var + 1e-5)).reshape(NB, C, H, W)
y_ref = norm * gamma[None, :, None, None] + beta[None, :, None, None]


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (NB, C, H, W))
save(gamma, "data/gamma.bin", np.float32, (C,))
save(beta, "data/beta.bin", np.float32, (C,))
save(y_ref, "data/y_ref.bin", np.float32, (NB, C, H, W))
