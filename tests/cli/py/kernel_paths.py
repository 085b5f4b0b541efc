"""Callables whose ATen ops are known, for the kernel records of py cells (tests/cli/python_digest_test.cc): with
REPRO_AUDIT_TEST_CPU_OPS_AS_KERNELS=1 the runner records a CPU cell's ATen ops as its kernels."""
import os

import torch


def doubles(seed):
    """x + x, or x * 2 where REPRO_AUDIT_TEST_DOUBLING=mul: the same bits by another op (2 as a tensor: a
    Python number would add the ops that make it one)."""
    torch.manual_seed(seed)
    by_mul, two = os.environ.get("REPRO_AUDIT_TEST_DOUBLING") == "mul", torch.tensor(2.0)

    def step(x):
        return x * two if by_mul else x + x

    return step, (torch.randn(1000),)


def alternates(seed):
    """x + x and x * 2 in turn, call after call: the same bits every run, by other ops every other run."""
    torch.manual_seed(seed)
    calls, two = [0], torch.tensor(2.0)

    def step(x):
        calls[0] += 1
        return x + x if calls[0] % 2 else x * two

    return step, (torch.randn(1000),)
