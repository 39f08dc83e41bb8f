"""Running_Maximum_Scan: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 8192
rng = np.random.default_rng(3004)

x = (rng.standard_normal(N) + np.linspace(0.0, 4.0, N)).astype(np.float32)
y_ref = np.maximum.accumulate(x)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (N,))
save(y_ref, "data/y_ref.bin", np.float32, (N,))
