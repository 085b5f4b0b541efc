"""Permutes with a module's private numpy.random.RandomState, made without a seed when the module was
imported (as some libraries do): seeding NumPy's global RNG does not reach it.
The fix: give it a seed where it is made."""
import numpy as np
import torch

_SHUFFLE = np.random.RandomState()


def make(seed):
    np.random.seed(seed)  # the usual recipe: it does not reach _SHUFFLE
    x = torch.arange(64, dtype=torch.float32)

    def step():
        order = torch.from_numpy(_SHUFFLE.permutation(64))
        return x[order].cumsum(0)

    return step
