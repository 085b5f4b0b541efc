"""A dataset that makes its generator in __init__, seeded once: the DataLoader's workers are forked with
a copy each, so every worker draws the same numbers (pytorch#5059's class). The batches are the same in
every process, and no recipe line that seeds the global generators changes that: the generator must be
seeded per worker (worker_init_fn, from torch.utils.data.get_worker_info().seed)."""
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Augmented(Dataset):
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.x = torch.arange(64, dtype=torch.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index] + float(self.rng.standard_normal())


def make(seed):
    return DataLoader(Augmented(seed), batch_size=4, shuffle=False, num_workers=2)
