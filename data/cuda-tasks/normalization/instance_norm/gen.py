"""Per_Channel_Instance_Normalization: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

NB = 4
C = 16
HW = 256
rng = np.random.default_rng(4008)

x = (rng.standard_normal((NB, C, 16, 16)) * 3.0 - 2.0).astype(np.float32)
t = x.astype(np.float64).reshape(NB, C, HW)
mean = t.mean(axis=2, keepdims=True)
var = t.var(axis=2, keepdims=True)
y_ref = ((t - mean) / np.sqrt(var + 1e-5)).reshape(NB, C, 16, 16)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (NB, C, 16, 16))
save(y_ref, "data/y_ref.bin", np.float32, (NB, C, 16, 16))
