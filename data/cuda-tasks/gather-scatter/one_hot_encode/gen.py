"""Class_Label_One_Hot: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 2048
CLASSES = 32
rng = np.random.default_rng(8005)

labels = rng.integers(0, CLASSES, N, dtype=np.int32)
onehot_ref = np.eye(CLASSES, dtype=np.float32)[labels]


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(labels, "data/labels.bin", np.int32, (N,))
save(onehot_ref, "data/onehot_ref.bin", np.float32, (N, CLASSES))
