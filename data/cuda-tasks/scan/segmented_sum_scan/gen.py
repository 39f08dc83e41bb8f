"""Flagged_Segment_Inclusive_Scan: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 4096
rng = np.random.default_rng(3003)

values = rng.uniform(0.0, 1.0, N).astype(np.float32)
heads = (rng.uniform(0.0, 1.0, N) < 0.02).astype(np.int32)
heads[0] = 1
scan_ref = np.zeros(N)
acc = 0.0
for i in range(N):
    acc = (0.0 if heads[i] else acc) + float(values[i])
    scan_ref[i] = acc


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(values, "data/values.bin", np.float32, (N,))
save(heads, "data/heads.bin", np.int32, (N,))
save(scan_ref, "data/scan_ref.bin", np.float32, (N,))
