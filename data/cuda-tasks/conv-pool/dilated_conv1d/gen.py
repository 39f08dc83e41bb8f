"""Dilated_Valid_Conv1d: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

LEN = 4096
TAPS = 5
DIL = 3
OUT_LEN = 4084
rng = np.random.default_rng(6008)

x = rng.uniform(-1.0, 1.0, LEN).astype(np.float32)
w = rng.uniform(-1.0, 1.0, TAPS).astype(np.float32)
t, k = x.astype(np.float64), w.astype(np.float64)
y_ref = sum(k[j] * t[j * DIL:j * DIL + OUT_LEN] for j in range(TAPS))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (LEN,))
save(w, "data/w.bin", np.float32, (TAPS,))
save(y_ref, "data/y_ref.bin", np.float32, (OUT_LEN,))
