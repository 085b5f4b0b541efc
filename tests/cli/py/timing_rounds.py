"""Callables for the later timing rounds of py cells (tests/cli/python_rounds_test.cc)."""
import os
import signal

import torch


def _in_a_forked_round():
    """A process forked by a fork server has the server, an interpreter, for its parent; a worker the
    supervisor started has the supervisor."""
    with open(f"/proc/{os.getppid()}/comm") as comm:
        return comm.read().startswith("python")


def records_its_process(seed):
    """Appends this process and its parent to the file ROUND_LOG names, once per process."""
    with open(os.environ["ROUND_LOG"], "a") as log:
        log.write(f"{os.getpid()} {os.getppid()}\n")
    values = torch.arange(64, dtype=torch.float32) + seed
    return lambda: values.sum()


def crashes_in_a_forked_round(seed):
    """Runs in the first round's worker; dies of SIGSEGV in a process forked for a later round."""
    values = torch.arange(64, dtype=torch.float32) + seed

    def step():
        if _in_a_forked_round():
            os.kill(os.getpid(), signal.SIGSEGV)
        return values.sum()

    return step


def builds_an_optimizer(seed):
    """A training step whose factory builds an optimizer, which imports torch._dynamo (a second or more);
    each run starts from the same model and optimizer state (the third item)."""
    torch.manual_seed(seed)
    model = torch.nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x):
        optimizer.zero_grad()
        loss = model(x).square().sum()
        loss.backward()
        optimizer.step()
        return loss.detach()

    return step, (torch.randn(4, 8),), [model, optimizer]
