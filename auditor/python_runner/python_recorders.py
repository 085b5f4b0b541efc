"""The runner's per-op and per-graph records (concatenated after python_runner.py, see CMakeLists.txt).

Eager code runs every ATen op through the dispatcher, where a TorchDispatchMode sees it. Compiled code
runs Inductor's kernels from a generated wrapper, outside the dispatcher: there the records are made
around each call of a graph Inductor compiled or loaded from a cache, and around each kernel call
its generated wrapper makes.
"""
import functools  # noqa: E402
import re  # noqa: E402
import weakref  # noqa: E402


class Records:
    """A recorded run's op records, and the DeviceDigests whose tokens they hold until the run ends (a
    CUDA tensor's digest is taken on the device and read back once, in sequence())."""

    def __init__(self, device):
        self.ops, self.started, self.truncated = [], 0, False
        self.device = device
        if device is not None:
            device.clear()

    def sequence(self):
        resolve_tokens(self.device, self.ops)
        text = "".join(f"{op['name']}\0{op['inputs']}\0{op['outputs']}\n" for op in self.ops)
        return {"digest": digest_text(text), "ops": self.ops, "truncated": self.truncated}


class OpRecorder(TorchDispatchMode, Records):
    """Per-op digests of an eager run: every dispatcher op's inputs as it begins, its outputs as it ends."""

    def __init__(self, module_names, device=None):
        TorchDispatchMode.__init__(self)
        Records.__init__(self, device)
        self.module_names, self.modules = module_names, []

    def arguments_digest(self, values):
        parts = []
        for value in tree_flatten(values)[0]:
            if isinstance(value, torch.Tensor):
                parts.append(tensor_part(self.device, value))
            else:
                parts.append(repr(value).replace("\x01", "?"))  # never a token's first byte
        return text_digest(self.device, "\n".join(parts))

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        start, self.started = self.started, self.started + 1
        name = func._schema.name
        inputs = self.arguments_digest((args, {k: v for k, v in kwargs.items() if k != "out"}))
        result = func(*args, **kwargs)
        outputs = "" if name in EMPTY_OPS else self.arguments_digest(result)
        if len(self.ops) < MAX_OPS:
            record = {"name": name, "start": start, "inputs": inputs, "outputs": outputs}
            if self.modules:
                record["module"] = self.modules[-1]
            self.ops.append(record)
        else:
            self.truncated = True
        return result


def tensor_part(device, tensor):
    """A tensor's part of a record's text: a token of the DeviceDigests where it defers the tensor, else the
    host's digest."""
    return device.token(tensor) if device is not None and device.defers(tensor) else digest(tensor)


def text_digest(device, text):
    """A record's digest: of its text, or the text itself while it holds tokens (resolve_tokens digests it)."""
    return text if device is not None and "\x01" in text else digest_text(text)


def resolve_tokens(device, ops):
    """The device's digests read back once, when a run ends, and every record that held a token digested."""
    if device is None:
        return
    device.resolve()
    for op in ops:
        for key in ("inputs", "outputs"):
            if "\x01" in op[key]:
                op[key] = digest_text(device.substitute(op[key]))


# What a generated wrapper calls besides kernels it defines itself: ATen ops Inductor did not lower
# (`extern_kernels.mm`, `aten.index_put_`), recorded under these names.
WRAPPER_NAMESPACES = ("extern_kernels", "aten")
KERNEL_PREFIXES = ("cpp_fused", "triton_", "cpp_", "kernel_")
GRAPH_OPS_SHOWN = 4
# Callables visited to find a graph's generated wrapper behind what Inductor wrapped around it: a few
# closures deep in torch 2.11 and 2.14 (input alignment, cudagraphs, the backward marker, the
# compiled-region wrapper); past this, whatever wraps it is not Inductor's.
UNWRAP_LIMIT = 32
# An op in the text of a post-grad FX graph: `torch.ops.aten.index_put_.default(`.
GRAPH_OP = re.compile(r"torch\.ops\.\w+\.(\w+)(?:\.\w+)?\(")
# The ops a kernel of the generated code came from, in its comment: `Original ATen: [aten.mm, aten.relu]`.
ORIGINAL_ATEN = re.compile(r"Original ATen: \[([^\]]*)\]")


def graph_name(index, graph):
    """`graph 0 (forward: full, mul, index_put_)`: from what the CompiledFxGraph holds whether Inductor
    compiled it in this process or loaded it from a cache, so a graph is named alike in every process (an
    origin aligns records by name): its post-grad graph's text, else the comments of its generated code."""
    ops = []
    for name in GRAPH_OP.findall(getattr(graph, "inductor_post_grad_graph_str", None) or ""):
        if name not in ops:
            ops.append(name)
    if not ops:
        for group in ORIGINAL_ATEN.findall(getattr(graph, "source_code", None) or ""):
            for name in (item.strip().split(".")[-1] for item in group.split(",")):
                if name and name not in ops:
                    ops.append(name)
    kwargs = getattr(graph, "fx_kwargs", None) or {}
    parts = [] if "is_backward" not in kwargs else ["backward" if kwargs["is_backward"] else "forward"]
    if ops:
        parts.append(", ".join(ops[:GRAPH_OPS_SHOWN]) + (f", +{len(ops) - GRAPH_OPS_SHOWN} more"
                                                          if len(ops) > GRAPH_OPS_SHOWN else ""))
    return f"graph {index}" + (f" ({': '.join(parts)})" if parts else "")


def generated_module(function):
    """The globals of the generated wrapper module a graph's callable runs, however Inductor wrapped it
    (closures such as align_inputs_from_check_idxs on CUDA inputs, cudagraphify, `__wrapped__`, the bound
    `Runner.call`): the first function found whose globals look like Inductor's wrapper module (its `call`
    and AsyncCompile); None when none is within UNWRAP_LIMIT callables."""
    pending, visited = [function], set()
    while pending and len(visited) < UNWRAP_LIMIT:
        function = pending.pop(0)
        if function is None or id(function) in visited:
            continue
        visited.add(id(function))
        function = getattr(function, "__func__", function)  # a bound method
        namespace = getattr(function, "__globals__", None)
        if (isinstance(namespace, dict) and callable(namespace.get("call"))
                and ("async_compile" in namespace or "AsyncCompile" in namespace)):
            return namespace
        if isinstance(function, functools.partial):
            pending.append(function.func)
        pending.append(getattr(function, "__wrapped__", None))
        for cell in getattr(function, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:  # a cell not yet filled
                continue
            if callable(value):
                pending.append(value)
    return None


class GraphRecorder(Records):
    """Per-graph and per-kernel digests of a compiled run, in the OpRecorder's record form.

    While it is entered, every call of a CompiledFxGraph is recorded (its class's `__call__` is replaced,
    so a graph Inductor loaded from a cache is seen as well as one it compiled), and the first call of
    each graph wraps the kernels of its generated wrapper module. Graphs are numbered in the order this
    run first called them. A graph's record holds the digests of its inputs as it is called and of its
    outputs as it returns; a kernel's, of its tensor arguments before and after the call. A buffer the
    wrapper has just allocated holds no value yet: a kernel's inputs count only the tensors the graph
    received or an earlier call of this graph run already saw (a weak reference keeps the storage's
    identity: while it lives, no other buffer can take its address)."""

    def __init__(self, graph_class, device=None):
        super().__init__(device)
        self.graph_class = graph_class
        self.seen = {}
        self.installed = []
        self.names, self.graphs = {}, []  # by id; the graphs held so their ids stay theirs
        self.modules = set()  # ids of the wrapper modules whose kernels are wrapped
        self.graph_calls, self.without_kernels = 0, []

    def add(self, name, start, inputs, outputs):
        if len(self.ops) < MAX_OPS:
            self.ops.append({"name": name, "start": start, "inputs": inputs, "outputs": outputs,
                             "module": "torch.compile"})
        else:
            self.truncated = True

    def begin(self):
        start, self.started = self.started, self.started + 1
        return start

    def mark_seen(self, tensor):
        self.seen[tensor.untyped_storage().data_ptr()] = weakref.ref(tensor)

    def was_seen(self, tensor):
        reference = self.seen.get(tensor.untyped_storage().data_ptr())
        return reference is not None and reference() is not None

    def tensors_digest(self, values, only_seen):
        parts = []
        for value in tree_flatten(values)[0]:
            if isinstance(value, torch.Tensor):
                seen = not only_seen or self.was_seen(value)
                parts.append(tensor_part(self.device, value) if seen else f"new {tuple(value.shape)}")
            elif isinstance(value, (int, float, bool, str)) or value is None:
                parts.append(repr(value).replace("\x01", "?"))
        return text_digest(self.device, "\n".join(parts))

    def first_call(self, graph):
        """The graph's name, and its wrapper module's kernels wrapped, when this run first calls it."""
        self.names[id(graph)] = name = graph_name(len(self.graphs), graph)
        self.graphs.append(graph)
        module = generated_module(getattr(graph, "current_callable", None))
        if module is None:
            self.without_kernels.append(name)
        elif id(module) not in self.modules:
            self.modules.add(id(module))
            self.wrap_kernels(module)
        return name

    def graph_call(self, graph, inputs, original):
        name = self.names.get(id(graph)) or self.first_call(graph)
        start = self.begin()
        self.graph_calls += 1
        self.seen = {}
        for value in inputs:
            if isinstance(value, torch.Tensor):
                self.mark_seen(value)
        before = self.tensors_digest(list(inputs), False)  # the wrapper empties the list it is given
        result = original(graph, inputs)
        self.add(name, start, before, self.tensors_digest(result, False))
        return result

    def kernel_call(self, name, target):
        def call(*args, **kwargs):
            start = self.begin()
            arguments = (args, {key: value for key, value in kwargs.items() if key != "stream"})
            before = self.tensors_digest(arguments, True)
            result = target(*args, **kwargs)
            self.add(name, start, before, self.tensors_digest((arguments, result), False))
            for value in tree_flatten((arguments, result))[0]:
                if isinstance(value, torch.Tensor):
                    self.mark_seen(value)
            return result
        return call

    def wrap_kernels(self, module):
        for name, value in list(module.items()):
            if name in WRAPPER_NAMESPACES:
                replacement = RecordedNamespace(self, name, value)
            elif name.startswith(KERNEL_PREFIXES) and callable(value):
                replacement = self.kernel_call(name, value)
            elif name.startswith(KERNEL_PREFIXES) and callable(getattr(value, "run", None)):
                replacement = RecordedNamespace(self, name, value, kernel=True)  # a Triton kernel: kernel.run(...)
            else:
                continue
            self.installed.append((module, name, value))
            module[name] = replacement

    def __enter__(self):
        recorder, original = self, self.graph_class.__call__

        def call(graph, inputs):
            return recorder.graph_call(graph, inputs, original)

        self.installed.append((self.graph_class, "__call__", original))
        self.graph_class.__call__ = call
        return self

    def __exit__(self, *_):
        for owner, name, value in reversed(self.installed):
            if isinstance(owner, dict):
                owner[name] = value
            else:
                setattr(owner, name, value)
        self.installed = []


class RecordedNamespace:
    """`extern_kernels.mm(...)`, `aten.index_put_(...)`: each call recorded by its name; a Triton kernel's
    `triton_poi_fused_0.run(...)` by the kernel's name alone."""

    def __init__(self, recorder, name, target, kernel=False):
        self._recorder, self._name, self._target, self._kernel = recorder, name, target, kernel

    def __getattr__(self, attribute):
        value = getattr(self._target, attribute)
        if not callable(value):
            return value
        return self._recorder.kernel_call(self._name if self._kernel and attribute == "run" else
                                          f"{self._name}.{attribute}", value)


class GraphCatalogue:
    """Inductor's graphs for a compiled cell's recorded runs: counts the graphs Inductor made or loaded
    from a cache while the cell is current (CompiledFxGraph.post_compile, which a compile, an FX-graph
    cache hit and an AOTAutograd cache hit all run), and makes the recorders. Where the installed torch
    lacks that class, `unavailable` says why."""

    def __init__(self):
        self.made, self.unavailable, self.graph_class = 0, "", None
        try:
            from torch._inductor.output_code import CompiledFxGraph
            original = CompiledFxGraph.post_compile
            if "__call__" not in vars(CompiledFxGraph):
                raise AttributeError("CompiledFxGraph defines no __call__")
        except (ImportError, AttributeError) as error:
            self.unavailable = f"torch {torch.__version__} has no Inductor graph class to record graphs ({error})"
            return
        self.graph_class = CompiledFxGraph
        catalogue = self

        def post_compile(graph, *args, **kwargs):
            catalogue.made += 1
            return original(graph, *args, **kwargs)

        CompiledFxGraph.post_compile = post_compile

    def clear(self):
        self.made = 0

    def recorder(self, device=None):
        return GraphRecorder(self.graph_class, device)
