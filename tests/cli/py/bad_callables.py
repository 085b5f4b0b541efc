"""Callables that go wrong in each way a py cell must turn into a clear verdict (tests/cli/python_test.cc)."""
import os
import sys
import time

import torch


def raises():
    raise ValueError("the step failed on purpose")


def no_tensors():
    return {"loss": 1.0}


def prints():
    print("chatter on stdout that must not reach the event pipe")
    return torch.arange(4.0)


def warns_once():
    """libtorch warns here once per process (TORCH_WARN_ONCE): every cell that calls it keeps the warning."""
    return torch.stft(torch.arange(256.0), 32, window=torch.ones(32), return_complex=False)


warns_once_too = warns_once


def exits():
    sys.exit(3)


def dies():
    os._exit(4)


def hangs():
    time.sleep(3600)


def fine(seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(8, generator=generator).cumsum(0)


def _mark(pid):
    """Writes a pid the test checks is gone after the audit (REPRO_AUDIT_TEST_MARKERS: a folder)."""
    with open(os.path.join(os.environ["REPRO_AUDIT_TEST_MARKERS"], str(pid)), "w") as marker:
        marker.write(str(pid))


def forks_a_holder():
    # The child keeps every descriptor of the worker, its event pipe too, as a data loader's workers do.
    pid = os.fork()
    if pid == 0:
        _mark(os.getpid())
        time.sleep(777)
        os._exit(0)
    return torch.arange(4.0)


def starts_a_sleep():
    import subprocess
    child = subprocess.Popen(["sleep", "777"], close_fds=False)
    _mark(child.pid)
    return torch.arange(4.0)


def prints_forever():
    """Prints 5 MB a run, to stdout and to stderr: the worker's log keeps 1 MB of each."""
    import sys

    x = torch.ones(4)

    def step():
        for _ in range(5000):
            print("x" * 1000)
            print("y" * 1000, file=sys.stderr)
        return x

    return step
