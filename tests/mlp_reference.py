"""The corpus MLP (tests/data/corpus/seed004_mlp_torch.py) as the VM tests call it: random
arguments of its parameter shapes and numpy's answer."""
from __future__ import annotations

import numpy as np


def mlp_args(rng: np.random.Generator, batch: int = 1) -> tuple[np.ndarray, ...]:
    """x, fc1 weight and bias, fc2 weight and bias (float32, standard normal)."""
    shapes = ((batch, 784), (256, 784), (256,), (10, 256), (10,))
    return tuple(rng.standard_normal(s).astype("float32") for s in shapes)


def mlp_numpy(x, w1, b1, w2, b2) -> np.ndarray:
    """relu(x @ w1.T + b1) @ w2.T + b2."""
    return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
