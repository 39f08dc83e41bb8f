"""Gemm_Bias_Relu_Epilogue: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

M = 96
K = 80
N = 48
rng = np.random.default_rng(5002)

A = rng.uniform(-1.0, 1.0, (M, K)).astype(np.float32)
W = rng.uniform(-0.5, 0.5, (K, N)).astype(np.float32)
bias = rng.uniform(-0.5, 0.5, N).astype(np.float32)
Y_ref = np.maximum(A.astype(np.float64) @ W.astype(np.float64) + bias, 0.0)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(A, "data/A.bin", np.float32, (M, K))
save(W, "data/W.bin", np.float32, (K, N))
save(bias, "data/bias.bin", np.float32, (N,))
save(Y_ref, "data/Y_ref.bin", np.float32, (M, N))
