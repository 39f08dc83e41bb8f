"""Global_Average_Pool_Per_Channel: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

C = 16
H = 32
W = 32
rng = np.random.default_rng(6007)

x = rng.uniform(0.0, 1.0, (C, H, W)).astype(np.float32)
y_ref = x.astype(np.float64).mean(axis=(1, 2))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (C, H, W))
save(y_ref, "data/y_ref.bin", np.float32, (C,))
