"""A DataLoader shuffled by a generator seeded from the operating system (Generator.seed()): every
process gives the samples in another order.
The recipe's line that fixes it: a seeded generator= (--axis loader_generator=off,on)."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def make(seed):
    generator = torch.Generator()
    generator.seed()
    data = TensorDataset(torch.arange(40, dtype=torch.float32))
    return DataLoader(data, batch_size=4, shuffle=True, generator=generator)
