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


def exits():
    sys.exit(3)


def dies():
    os._exit(4)


def hangs():
    time.sleep(3600)


def fine(seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(8, generator=generator).cumsum(0)
