"""Random draws on CUDA for the gpu tier (tests/gpu/gpu_test.cc): one step from a CUDA generator of its own
that takes its seed from the operating system (another stream in every process), one from torch's global
CUDA generator (which the runner seeds before each run)."""
import torch


def own_generator(seed, device):
    generator = torch.Generator(device=device)
    generator.seed()
    x = torch.linspace(0, 1, 4096, device=device)

    def step():
        return x * torch.rand(4096, device=device, generator=generator)

    return step


def global_generator(seed, device):
    x = torch.linspace(0, 1, 4096, device=device)

    def step():
        return x * torch.randn(4096, device=device)

    return step
