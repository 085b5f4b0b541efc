"""A sampler that makes its generator in __iter__ with a fixed seed: shuffled, but every epoch gives the
samples in the same order."""
import torch
from torch.utils.data import DataLoader, Sampler, TensorDataset


class Reshuffled(Sampler):
    def __init__(self, size):
        self.size = size

    def __iter__(self):
        generator = torch.Generator().manual_seed(0)
        return iter(torch.randperm(self.size, generator=generator).tolist())

    def __len__(self):
        return self.size


def make(seed):
    data = TensorDataset(torch.arange(32, dtype=torch.float32))
    return DataLoader(data, batch_size=4, sampler=Reshuffled(32))
