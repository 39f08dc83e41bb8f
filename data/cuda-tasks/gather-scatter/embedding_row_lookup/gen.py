"""Embedding_Table_Row_Lookup: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

VOCAB = 512
DIM = 64
TOKENS = 1024
rng = np.random.default_rng(8001)

table = rng.standard_normal((VOCAB, DIM)).astype(np.float32)
ids = rng.integers(0, VOCAB, TOKENS, dtype=np.int32)
vectors_ref = table[ids]


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(table, "data/table.bin", np.float32, (VOCAB, DIM))
save(ids, "data/ids.bin", np.int32, (TOKENS,))
save(vectors_ref, "data/vectors_ref.bin", np.float32, (TOKENS, DIM))
