"""Feature_Standardization_Over_Batch: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

BATCH = 512
FEATURES = 32
rng = np.random.default_rng(4009)

x = (rng.standard_normal((BATCH, FEATURES)) * rng.uniform(0.5, 4.0, FEATURES)
     + rng.uniform(-3.0, 3.0, FEATURES)).astype(np.float32)
t = x.astype(np.float64)
y_ref = (t - t.mean(axis=0)) / np.sqrt(t.var(axis=0) + 1e-5)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (BATCH, FEATURES))
save(y_ref, "data/y_ref.bin", np.float32, (BATCH, FEATURES))
