"""Quarter_Turn_Clockwise: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

H = 64
W = 96
rng = np.random.default_rng(7005)

img = rng.standard_normal((H, W)).astype(np.float32)
rot_ref = np.rot90(img, k=-1).copy()


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(img, "data/img.bin", np.float32, (H, W))
save(rot_ref, "data/rot_ref.bin", np.float32, (W, H))
