"""Channel_Avg_Pool_2x2_Stride_2: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

C = 4
H = 64
W = 64
OH = 32
OW = 32
rng = np.random.default_rng(6002)

image = rng.uniform(0.0, 4.0, (C, H, W)).astype(np.float32)
pooled_ref = image.astype(np.float64).reshape(C, OH, 2, OW, 2).mean(axis=(2, 4))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(image, "data/image.bin", np.float32, (C, H, W))
save(pooled_ref, "data/pooled_ref.bin", np.float32, (C, OH, OW))
