"""Same_Padded_Conv2d_3x3: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

H = 96
W = 96
rng = np.random.default_rng(6003)

image = rng.uniform(-1.0, 1.0, (H, W)).astype(np.float32)
kernel = rng.uniform(-1.0, 1.0, (3, 3)).astype(np.float32)
p = np.pad(image.astype(np.float64), 1)
k = kernel.astype(np.float64)
out_ref = sum(k[dy, dx] * p[dy:dy + H, dx:dx + W] for dy in range(3) for dx in range(3))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(image, "data/image.bin", np.float32, (H, W))
save(kernel, "data/kernel.bin", np.float32, (3, 3))
save(out_ref, "data/out_ref.bin", np.float32, (H, W))
