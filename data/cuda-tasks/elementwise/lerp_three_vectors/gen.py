"""Per_Element_Linear_Interpolation: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 20000
rng = np.random.default_rng(1005)

a = rng.uniform(-1.0, 1.0, N).astype(np.float32)
b = rng.uniform(-1.0, 1.0, N).astype(np.float32)
w = rng.uniform(0.0, 1.0, N).astype(np.float32)
out_ref = a.astype(np.float64) + w.astype(np.float64) * (b.astype(np.float64) - a)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(a, "data/a.bin", np.float32, (N,))
save(b, "data/b.bin", np.float32, (N,))
save(w, "data/w.bin", np.float32, (N,))
save(out_ref, "data/out_ref.bin", np.float32, (N,))
