"""A DataLoader whose dataset adds noise from NumPy's global RNG, loaded in the main process
(num_workers=0), where nobody seeded NumPy: every process loads other batches.
The recipe's line that fixes it: np.random.seed(seed) (--axis seed_numpy=off,on). With workers
(--axis loader_workers=0,2) torch seeds NumPy in each worker, and the batches change with the count."""
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Noisy(Dataset):
    def __init__(self):
        self.x = torch.linspace(0, 1, 160).reshape(80, 2)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index] + torch.from_numpy(np.random.rand(2).astype(np.float32)), index


def make(seed):
    return DataLoader(Noisy(), batch_size=8, shuffle=True, num_workers=0)
