"""A small CUDA step for the gpu tier (tests/gpu/gpu_test.cc): a matmul, an elementwise op and an
index_add (atomic adds), whose kernels the py runner's trace names."""
import torch


def make(seed, device):
    torch.manual_seed(seed)
    weight = torch.randn(256, 256, device=device)
    x = torch.randn(512, 256, device=device)
    index = torch.randint(0, 64, (512,), device=device)

    def step(x):
        hidden = torch.relu(x @ weight)
        return torch.zeros(64, 256, device=device).index_add_(0, index, hidden)

    return step, (x,)
