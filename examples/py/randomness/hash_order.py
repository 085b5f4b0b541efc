"""Sums in the iteration order of a set of strings, which follows the process's string hash seed:
processes started without a fixed PYTHONHASHSEED add in different orders.
The fix: PYTHONHASHSEED=0 in the environment (or --axis python_hash_seed=inherit,0)."""
import torch

NAMES = {f"feature{i}" for i in range(32)}


def make(seed):
    torch.manual_seed(seed)
    values = {name: torch.randn(4096) * 1e3 for name in sorted(NAMES)}

    def step():
        total = torch.zeros(4096)
        for name in NAMES:  # a set's order: a different one in each process
            total = total + values[name]
        return total

    return step
