"""Adds noise from NumPy's global RNG, which nobody seeded.
The recipe's fix: np.random.seed(seed) in the factory (or --axis seed_numpy=off,on)."""
import numpy as np
import torch


def make(seed):
    x = torch.linspace(0, 1, 64)

    def step():
        return x + torch.from_numpy(np.random.rand(64).astype(np.float32))

    return step
