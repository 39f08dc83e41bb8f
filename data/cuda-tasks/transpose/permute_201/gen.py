"""Axis_Rotation_Permute_3d: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

D0 = 12
D1 = 20
D2 = 24
rng = np.random.default_rng(7004)

x = rng.standard_normal((D0, D1, D2)).astype(np.float32)
y_ref = np.transpose(x, (2, 0, 1)).copy()


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (D0, D1, D2))
save(y_ref, "data/y_ref.bin", np.float32, (D2, D0, D1))
