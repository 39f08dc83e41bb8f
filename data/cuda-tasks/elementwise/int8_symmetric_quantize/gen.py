"""Symmetric_Int8_Quantization: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

N = 16384
rng = np.random.default_rng(1007)

# Values sit at least 0.1 quantisation steps from a rounding boundary, so the fp32 division by the
# scale cannot change the rounded result; about 5% fall outside the representable range.
k = rng.integers(-140, 141, N)
x = ((k + rng.uniform(-0.4, 0.4, N)) * 0.05).astype(np.float32)
q_ref = np.clip(k, -127, 127)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(x, "data/x.bin", np.float32, (N,))
save(q_ref, "data/q_ref.bin", np.int8, (N,))
