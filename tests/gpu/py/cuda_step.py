"""A user's step on CUDA for the gpu tier (tests/gpu/gpu_test.cc): a matmul, relu, an index_add over
colliding rows (atomic adds on CUDA: nondeterministic by default) and a backward."""
import torch


def make(seed, device):
    torch.manual_seed(seed)
    weight = torch.randn(256, 256, device=device, requires_grad=True)
    x = torch.randn(8192, 256, device=device)
    index = torch.randint(0, 16, (8192,), device=device)

    def step(x, index):
        hidden = torch.relu(x @ weight)
        acc = torch.zeros(16, 256, device=device).index_add(0, index, hidden)
        loss = (acc ** 2).sum()
        grad, = torch.autograd.grad(loss, weight)
        return {"acc": acc, "grad": grad}
    return step, (x, index)
