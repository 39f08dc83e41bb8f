"""Row_Index_Add_Accumulate: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

DST_ROWS = 64
SRC_ROWS = 1024
DIM = 32
rng = np.random.default_rng(8009)

base = rng.uniform(0.0, 1.0, (DST_ROWS, DIM)).astype(np.float32)
src = rng.uniform(0.0, 1.0, (SRC_ROWS, DIM)).astype(np.float32)
index = rng.integers(0, DST_ROWS, SRC_ROWS, dtype=np.int32)
out_ref = base.astype(np.float64).copy()
np.add.at(out_ref, index, src.astype(np.float64))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(base, "data/base.bin", np.float32, (DST_ROWS, DIM))
save(src, "data/src.bin", np.float32, (SRC_ROWS, DIM))
save(index, "data/index.bin", np.int32, (SRC_ROWS,))
save(out_ref, "data/out_ref.bin", np.float32, (DST_ROWS, DIM))
