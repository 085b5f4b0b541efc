"""A racing compiled step whose Inductor graphs run behind a wrapper of torch's own (tests/cli/python_test.cc).

On CUDA inputs Inductor wraps a graph's callable in `align_inputs_from_check_idxs` (a closure in
torch._inductor.utils), so the callable's globals are torch's, not the generated wrapper module's. On the
CPU it does not: `scatter_sum` makes it do so, through the post-compile step every compiled or cached
graph runs, and warns once per graph it wrapped (the warning lands in the cell's observation).
"""
import warnings

import torch
from torch._inductor.output_code import CompiledFxGraph
from torch._inductor.utils import align_inputs_from_check_idxs
from torch.utils._ordered_set import OrderedSet


def _wrapping(post_compile):
    def wrapped(graph, *args, **kwargs):
        result = post_compile(graph, *args, **kwargs)
        callable_before = graph.current_callable
        graph.current_callable = align_inputs_from_check_idxs(callable_before, [0], OrderedSet())
        if graph.current_callable is callable_before:
            raise RuntimeError("align_inputs_from_check_idxs returned the callable unwrapped")
        warnings.warn("wrapped a graph's callable in align_inputs_from_check_idxs")
        return result
    return wrapped


INSTALLED = []


def scatter_sum(seed):
    """examples/py/train_step.py's scatter_sum: index_put_(accumulate=True), which Inductor lowers to atomic adds."""
    if not INSTALLED:  # once a process
        CompiledFxGraph.post_compile = _wrapping(CompiledFxGraph.post_compile)
        INSTALLED.append(True)
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(1 << 20, generator=generator)
    index = torch.randint(0, 64, (1 << 20,), generator=generator)

    def buckets(values, index):
        total = torch.zeros(64)
        return total.index_put_((index,), values * 1.5, accumulate=True)

    return buckets, (values, index)
