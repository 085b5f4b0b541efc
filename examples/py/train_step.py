"""Examples for `repro-audit py`: a small training step, and a function whose compiled form races.

    repro-audit py examples/py/train_step.py:make --parameters --axis compile=off,default,max-autotune
    repro-audit py examples/py/train_step.py:scatter_sum --axis compile=off,default
"""
import torch
import torch.nn.functional as F


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def make(seed):
    """One SGD step of a small MLP: returns the step, its inputs, and the state each run starts from."""
    torch.manual_seed(seed)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(256, 64), torch.randint(0, 10, (256,))

    def step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return step, (x, y), [model, optimizer]


def scatter_sum(seed):
    """Sums values into few buckets with index_put_(accumulate=True): Inductor lowers it to atomic adds."""
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(1 << 20, generator=generator)
    index = torch.randint(0, 64, (1 << 20,), generator=generator)

    def buckets(values, index):
        total = torch.zeros(64)
        return total.index_put_((index,), values * 1.5, accumulate=True)

    return buckets, (values, index)
