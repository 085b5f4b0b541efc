"""Steps that check what the worker left of torch's deterministic switch (tests/cli/python_test.cc). The
worker sets torch's flag without importing Inductor's config, which torch.use_deterministic_algorithms
imports (with Dynamo, most of a second); a config a step imports later must still hold the mode."""
import sys

import torch


def config_imported_late(seed):
    def step():
        import torch._inductor.config as config
        enabled = torch.are_deterministic_algorithms_enabled()
        if config.deterministic != enabled:
            raise AssertionError(f"torch._inductor.config.deterministic is {config.deterministic}, "
                                 f"torch.are_deterministic_algorithms_enabled() is {enabled}")
        return torch.ones(1)
    return step, ()


def dynamo_not_imported(seed):
    def step():
        if "torch._dynamo" in sys.modules:
            raise AssertionError("torch._dynamo was imported in a worker whose cells compile nothing")
        return torch.ones(1)
    return step, ()
