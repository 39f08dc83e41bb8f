"""Sorted_Segment_Id_Sum: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 8192
SEGMENTS = 512
rng = np.random.default_rng(8007)

values = rng.uniform(0.0, 1.0, N).astype(np.float32)
seg = np.sort(rng.integers(0, SEGMENTS, N)).astype(np.int32)
seg[seg == 7] = 8  # segment 7 is empty: its sum is 0
assert np.bincount(seg).max() <= 40
sums_ref = np.bincount(seg, weights=values.astype(np.float64), minlength=SEGMENTS)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(values, "data/values.bin", np.float32, (N,))
save(seg, "data/seg.bin", np.int32, (N,))
save(sums_ref, "data/sums_ref.bin", np.float32, (SEGMENTS,))
