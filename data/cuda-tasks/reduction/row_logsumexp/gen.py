"""Row_Log_Sum_Exp: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

ROWS = 128
COLS = 300
rng = np.random.default_rng(2008)

x = (rng.standard_normal((ROWS, COLS)) * 4.0).astype(np.float32)
t = x.astype(np.float64)
m = t.max(axis=1)
lse_ref = m + np.log(np.exp(t - m[:, None]).sum(axis=1))


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (ROWS, COLS))
save(lse_ref, "data/lse_ref.bin", np.float32, (ROWS,))
