"""Callables that make loaders the runner must judge plainly: an empty one, one whose batches hold no
tensors, and a plain generator of batches (no DataLoader), which its second epoch finds spent."""
import torch
from torch.utils.data import DataLoader


def empty():
    return DataLoader([], batch_size=4)


def strings():
    return DataLoader(["a", "b", "c", "d"], batch_size=2)


def generator():
    return (torch.full((2,), float(i)) for i in range(3))
