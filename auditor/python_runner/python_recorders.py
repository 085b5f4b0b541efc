"""The runner's per-op and per-graph records (concatenated after python_runner.py, see CMakeLists.txt).

Eager code runs every ATen op through the dispatcher, where a TorchDispatchMode sees it. Compiled code
runs Inductor's kernels from a generated wrapper, outside the dispatcher: there the records are made
around each graph Inductor compiled and around each kernel call its wrapper makes.
"""
import weakref  # noqa: E402


class OpRecorder(TorchDispatchMode):
    """Per-op digests of an eager run: every dispatcher op's inputs as it begins, its outputs as it ends."""

    def __init__(self, module_names, device=None):
        super().__init__()
        self.ops, self.started, self.truncated = [], 0, False
        self.module_names, self.modules = module_names, []
        self.device = device  # DeviceDigests: a CUDA tensor's digest is a token until the run ends
        if device is not None:
            device.clear()

    def arguments_digest(self, values):
        parts = []
        for value in tree_flatten(values)[0]:
            if isinstance(value, torch.Tensor):
                deferred = self.device is not None and self.device.defers(value)
                parts.append(self.device.token(value) if deferred else digest(value))
            else:
                parts.append(repr(value).replace("\x01", "?"))  # never a token's first byte
        text = "\n".join(parts)
        return text if self.device is not None and "\x01" in text else digest_text(text)

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

    def sequence(self):
        if self.device is not None:  # the device's digests, read back once
            self.device.resolve()
            for op in self.ops:
                for key in ("inputs", "outputs"):
                    if "\x01" in op[key]:
                        op[key] = digest_text(self.device.substitute(op[key]))
        text = "".join(f"{op['name']}\0{op['inputs']}\0{op['outputs']}\n" for op in self.ops)
        return {"digest": digest_text(text), "ops": self.ops, "truncated": self.truncated}


# What a generated wrapper calls besides kernels it defines itself: ATen ops Inductor did not lower
# (`extern_kernels.mm`, `aten.index_put_`), recorded under these names.
WRAPPER_NAMESPACES = ("extern_kernels", "aten")
KERNEL_PREFIXES = ("cpp_fused", "triton_", "cpp_", "kernel_")
GRAPH_OPS_SHOWN = 4


class CompiledGraph:
    """One FX graph Inductor compiled: its index, the ops it holds and the module its wrapper runs in."""

    def __init__(self, index, graph_module, compiled, backward):
        self.compiled = compiled
        ops = []
        for node in graph_module.graph.nodes:
            if node.op == "call_function":
                name = str(getattr(node.target, "__name__", node.target)).split(".")[0]
                if name not in ops:
                    ops.append(name)
        shown = ", ".join(ops[:GRAPH_OPS_SHOWN]) + (f", +{len(ops) - GRAPH_OPS_SHOWN} more" if len(ops) > GRAPH_OPS_SHOWN
                                                     else "")
        self.name = f"graph {index} ({'backward' if backward else 'forward'}: {shown})"
        self.callable = getattr(compiled, "current_callable", None)
        self.module = getattr(self.callable, "__globals__", None)


class GraphRecorder:
    """Per-graph and per-kernel digests of a compiled run, in the OpRecorder's record form.

    A graph's record holds the digests of its inputs as it is called and of its outputs as it returns; a
    kernel's, of its tensor arguments before and after the call. A buffer the wrapper has just allocated
    holds no value yet: a kernel's inputs count only the tensors the graph received or an earlier call
    of this graph run already saw (a weak reference keeps the storage's identity: while it lives, no
    other buffer can take its address)."""

    def __init__(self, graphs):
        self.graphs, self.ops, self.started, self.truncated = graphs, [], 0, False
        self.seen = {}
        self.installed = []

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
                parts.append(digest(value) if not only_seen or self.was_seen(value) else f"new {tuple(value.shape)}")
            elif isinstance(value, (int, float, bool, str)) or value is None:
                parts.append(repr(value))
        return digest_text("\n".join(parts))

    def graph_call(self, graph, original):
        def call(inputs):
            start = self.begin()
            self.seen = {}
            for value in inputs:
                if isinstance(value, torch.Tensor):
                    self.mark_seen(value)
            before = self.tensors_digest(list(inputs), False)  # the wrapper empties the list it is given
            result = original(inputs)
            self.add(graph.name, start, before, self.tensors_digest(result, False))
            return result
        return call

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

    def __enter__(self):
        for graph in self.graphs:
            if graph.callable is None:
                continue
            self.installed.append((graph.compiled, "current_callable", graph.callable))
            graph.compiled.current_callable = self.graph_call(graph, graph.callable)
            for name, value in list((graph.module or {}).items()):
                if name in WRAPPER_NAMESPACES:
                    replacement = RecordedNamespace(self, name, value)
                elif name.startswith(KERNEL_PREFIXES) and callable(value):
                    replacement = self.kernel_call(name, value)
                elif name.startswith(KERNEL_PREFIXES) and callable(getattr(value, "run", None)):
                    replacement = RecordedNamespace(self, name, value)  # a Triton kernel: kernel.run(...)
                else:
                    continue
                self.installed.append((graph.module, name, value))
                graph.module[name] = replacement
        return self

    def __exit__(self, *_):
        for owner, name, value in reversed(self.installed):
            if isinstance(owner, dict):
                owner[name] = value
            else:
                setattr(owner, name, value)
        self.installed = []

    def sequence(self):
        text = "".join(f"{op['name']}\0{op['inputs']}\0{op['outputs']}\n" for op in self.ops)
        return {"digest": digest_text(text), "ops": self.ops, "truncated": self.truncated}


class RecordedNamespace:
    """`extern_kernels.mm(...)`, `aten.index_put_(...)`, `triton_poi_0.run(...)`: each call recorded by its name."""

    def __init__(self, recorder, name, target):
        self._recorder, self._name, self._target = recorder, name, target

    def __getattr__(self, attribute):
        value = getattr(self._target, attribute)
        return self._recorder.kernel_call(f"{self._name}.{attribute}", value) if callable(value) else value


class GraphCatalogue:
    """Every graph Inductor compiles in this process while a cell is current: the compile function is
    given an inner compile step that keeps each compiled graph, so its calls can be recorded later
    without compiling again. Where the installed torch lacks these hooks, `unavailable` says why."""

    def __init__(self):
        self.graphs, self.unavailable = [], ""
        try:
            import torch._inductor.compile_fx as compile_fx_module
            original, inner = compile_fx_module.compile_fx, compile_fx_module.compile_fx_inner
        except (ImportError, AttributeError) as error:
            self.unavailable = f"torch {torch.__version__} has no Inductor compile hook to record graphs ({error})"
            return
        catalogue = self

        def keeping_inner(graph_module, example_inputs, *args, **kwargs):
            compiled = inner(graph_module, example_inputs, *args, **kwargs)
            backward = bool(kwargs.get("is_backward", False))
            catalogue.graphs.append(CompiledGraph(len(catalogue.graphs), graph_module, compiled, backward))
            return compiled

        def compile_fx(model, example_inputs, *args, **kwargs):
            if not args and "inner_compile" not in kwargs:
                kwargs["inner_compile"] = keeping_inner
            return original(model, example_inputs, *args, **kwargs)

        # torch.compile's Inductor backend looks the function up in its module when it compiles.
        compile_fx_module.compile_fx = compile_fx

    def clear(self):
        self.graphs = []

    def recorder(self):
        return GraphRecorder(self.graphs)
