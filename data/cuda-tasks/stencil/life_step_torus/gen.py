"""Life_Automaton_Step_On_Torus: writes the inputs and the reference outputs (numpy, fixed seed)."""
import os

import numpy as np

H = 128
W = 128
rng = np.random.default_rng(11006)

cells = (rng.uniform(0.0, 1.0, (H, W)) < 0.35).astype(np.int32)
nb = sum(np.roll(np.roll(cells, dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)) - cells
next_cells_ref = ((nb == 3) | ((cells == 1) & (nb == 2))).astype(np.int32)


def save(array, path, dtype, shape):
    array = np.asarray(array)
    assert array.shape == shape, (path, array.shape, shape)
    array.astype(dtype).tofile(path)


os.makedirs("data", exist_ok=True)
save(cells, "data/cells.bin", np.int32, (H, W))
save(next_cells_ref, "data/next_cells_ref.bin", np.int32, (H, W))
