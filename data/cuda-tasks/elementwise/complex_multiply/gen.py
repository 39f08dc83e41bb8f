"""Interleaved_Complex_Product: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 8192
rng = np.random.default_rng(1008)

a = rng.uniform(-1.0, 1.0, (N, 2)).astype(np.float32)
b = rng.uniform(-1.0, 1.0, (N, 2)).astype(np.float32)
za = a[:, 0].astype(np.float64) + 1j * a[:, 1]
zb = b[:, 0].astype(np.float64) + 1j * b[:, 1]
zc = za * zb
c_ref = np.stack([zc.real, zc.imag], axis=1)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(a, "data/a.bin", np.float32, (N, 2))
save(b, "data/b.bin", np.float32, (N, 2))
save(c_ref, "data/c_ref.bin", np.float32, (N, 2))
