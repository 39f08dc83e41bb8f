"""Nchw_To_Nhwc_Layout: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

NB = 2
C = 16
H = 24
W = 24
rng = np.random.default_rng(7002)

src = rng.standard_normal((NB, C, H, W)).astype(np.float32)
dst_ref = np.transpose(src, (0, 2, 3, 1)).copy()


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(src, "data/src.bin", np.float32, (NB, C, H, W))
save(dst_ref, "data/dst_ref.bin", np.float32, (NB, H, W, C))
