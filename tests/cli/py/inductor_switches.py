"""A compiled step with a graph break, that says which value of Inductor's deterministic flag each of its
graphs was compiled under (tests/cli/python_test.cc): a warning per graph, from the post-compile step
every compiled or cached graph runs, lands in the cell's observation."""
import warnings

import torch
import torch._inductor.config as inductor_config
from torch._inductor.output_code import CompiledFxGraph

INSTALLED = []


def _reporting(post_compile):
    def reported(graph, *args, **kwargs):
        warnings.warn(f"a graph compiled with torch._inductor.config.deterministic={inductor_config.deterministic}")
        return post_compile(graph, *args, **kwargs)
    return reported


def broken(seed):
    if not INSTALLED:  # once a process
        CompiledFxGraph.post_compile = _reporting(CompiledFxGraph.post_compile)
        INSTALLED.append(True)
    values = torch.randn(4096, generator=torch.Generator().manual_seed(seed))

    def step(values):
        doubled = values * 2
        torch._dynamo.graph_break()  # Dynamo resets global state after each frame it converts
        return (doubled + 1).sum()
    return step, (values,)
