"""Draws from a torch.Generator of its own that takes its seed from the operating system
(Generator.seed()): another stream in every process, which torch.manual_seed does not reach.
The fix: torch.Generator().manual_seed(seed)."""
import torch


def make(seed):
    generator = torch.Generator()
    generator.seed()
    x = torch.linspace(0, 1, 64)

    def step():
        return x * torch.rand(64, generator=generator)

    return step
