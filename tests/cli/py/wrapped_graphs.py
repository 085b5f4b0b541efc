"""A racing compiled step whose Inductor graphs run behind a wrapper of torch's own (tests/cli/python_test.cc).

On CUDA inputs Inductor wraps a graph's callable in `align_inputs_from_check_idxs` (a closure in
torch._inductor.utils), so the callable's globals are torch's, not the generated wrapper module's. On the
CPU it does not: `scatter_sum` makes it do so, through the post-compile step every compiled or cached
graph runs, and warns once per graph it wrapped (the warning lands in the cell's observation).
"""
import importlib.util
import os
import warnings

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
    return _example().scatter_sum(seed)


def _example():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "py",
                        "train_step.py")
    spec = importlib.util.spec_from_file_location("train_step_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
