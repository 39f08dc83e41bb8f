"""Multi_Channel_Valid_Conv2d: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

CIN = 4
COUT = 8
H = 20
W = 20
OH = 18
OW = 18
rng = np.random.default_rng(6005)

x = rng.uniform(-1.0, 1.0, (CIN, H, W)).astype(np.float32)
w = rng.uniform(-1.0, 1.0, (COUT, CIN, 3, 3)).astype(np.float32)
bias = rng.uniform(-1.0, 1.0, COUT).astype(np.float32)
t, k = x.astype(np.float64), w.astype(np.float64)
y_ref = np.zeros((COUT, OH, OW)) + bias.astype(np.float64)[:, None, None]
for o in range(COUT):
    for i in range(CIN):
        for dy in range(3):
            for dx in range(3):
                y_ref[o] += k[o, i, dy, dx] * t[i, dy:dy + OH, dx:dx + OW]


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (CIN, H, W))
save(w, "data/w.bin", np.float32, (COUT, CIN, 3, 3))
save(bias, "data/bias.bin", np.float32, (COUT,))
save(y_ref, "data/y_ref.bin", np.float32, (COUT, OH, OW))
