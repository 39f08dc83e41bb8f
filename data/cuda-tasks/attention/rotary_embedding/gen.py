"""Rotary_Position_Rotation_Tables: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

SEQ = 128
D = 64
HALF = 32
rng = np.random.default_rng(12003)

x = rng.standard_normal((SEQ, D)).astype(np.float32)
freq = 10000.0 ** (-np.arange(HALF) * 2.0 / D)
ang = np.arange(SEQ)[:, None] * freq[None, :]
cos_t = np.cos(ang).astype(np.float32)
sin_t = np.sin(ang).astype(np.float32)
c, s = cos_t.astype(np.float64), sin_t.astype(np.float64)
x0, x1 = x[:, 0::2].astype(np.float64), x[:, 1::2].astype(np.float64)
y_ref = np.empty((SEQ, D))
y_ref[:, 0::2] = x0 * c - x1 * s
y_ref[:, 1::2] = x0 * s + x1 * c


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (SEQ, D))
save(cos_t, "data/cos_t.bin", np.float32, (SEQ, HALF))
save(sin_t, "data/sin_t.bin", np.float32, (SEQ, HALF))
save(y_ref, "data/y_ref.bin", np.float32, (SEQ, D))
