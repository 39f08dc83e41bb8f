"""Affine_Row_Standardization: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 64
COLS = 512
rng = np.random.default_rng(4002)

x = (rng.standard_normal((ROWS, COLS)) * 1.5 + 0.5).astype(np.float32)
gamma = rng.uniform(0.5, 1.5, COLS).astype(np.float32)
beta = rng.uniform(-0.5, 0.5, COLS).astype(np.float32)
x64 = x.astype(np.float64)
mean = x64.mean(axis=1, keepdims=True)
var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
y_ref = (x64 - mean) / np.sqrt(var + 1e-5) * gamma + beta


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(gamma, "data/gamma.bin", np.float32, (COLS,))
save(beta, "data/beta.bin", np.float32, (COLS,))
save(y_ref, "data/y_ref.bin", np.float32, (ROWS, COLS))
