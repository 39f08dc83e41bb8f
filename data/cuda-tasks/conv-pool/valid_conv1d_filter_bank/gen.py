"""Valid_Conv1d_Filter_Bank: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

LEN = 4096
FILTERS = 8
TAPS = 9
OUT_LEN = 4088
rng = np.random.default_rng(6001)

signal = rng.uniform(-1.0, 1.0, LEN).astype(np.float32)
filters = rng.uniform(-1.0, 1.0, (FILTERS, TAPS)).astype(np.float32)
s64, f64 = signal.astype(np.float64), filters.astype(np.float64)
response_ref = np.stack([np.correlate(s64, f64[f], mode="valid") for f in range(FILTERS)])


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(signal, "data/signal.bin", np.float32, (LEN,))
save(filters, "data/filters.bin", np.float32, (FILTERS, TAPS))
save(response_ref, "data/response_ref.bin", np.float32, (FILTERS, OUT_LEN))
