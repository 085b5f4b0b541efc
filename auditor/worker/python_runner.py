"""repro-audit's runner for `py` cells: the user's Python callable, run by the user's interpreter.

The C++ worker reads the supervisor's request, then replaces itself with this script (stdin holds the
request, stdout the event pipe). It speaks the worker protocol (protocol/worker_protocol.h): a start
event and a cell event per cell, then done. It runs only the callable a cell names by its module path;
it never reads code or values from a report.
"""
import inspect
import io
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
import warnings

EVENTS = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)  # anything written to fd 1 (C code, subprocesses) goes to the worker's log, not the pipe
REQUEST = json.load(sys.stdin)
CACHE = None
if not any(cell.get("model", {}).get("compile_cache") for cell in REQUEST["cells"]):
    # A process compiles afresh: differences between two compiles are cross-process divergence.
    CACHE = tempfile.mkdtemp(prefix="repro-audit-inductor-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = CACHE
    os.environ["TRITON_CACHE_DIR"] = os.path.join(CACHE, "triton")
else:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = REQUEST["cells"][0]["model"]["compile_cache"]

import ctypes  # noqa: E402
import struct  # noqa: E402

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils._pytree import tree_flatten  # noqa: E402

try:
    import xxhash
except ImportError:
    xxhash = None

MAX_OPS = 20000
MAX_SEQUENCES = 4
EMPTY_OPS = {"aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty", "aten::new_empty_strided"}
DTYPE_TAGS = {
    torch.float32: "Float", torch.float64: "Double", torch.float16: "Half", torch.bfloat16: "BFloat16",
    torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char", torch.uint8: "Byte",
    torch.bool: "Bool", torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble",
}
INT_VIEWS = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
             torch.bfloat16: torch.int16}


class CellError(Exception):
    """A failure of the user's callable, reported as the cell's exception verdict."""


class CountingStdout(io.TextIOBase):
    """sys.stdout while the callable runs: text goes to the log, and the cell says it was printed."""

    def __init__(self):
        self.characters = 0

    def write(self, text):
        self.characters += len(text)
        return sys.__stderr__.write(text)

    def flush(self):
        sys.__stderr__.flush()


def emit(event):
    EVENTS.write(json.dumps(event) + "\n")
    EVENTS.flush()


def canonical(tensor):
    tensor = tensor.detach()
    if tensor.is_sparse:
        tensor = tensor.to_dense()
    return tensor.to("cpu").contiguous()


def digest(tensor):
    """XXH3-128 over the dtype tag and a 0 byte, rank and sizes (little-endian 64-bit), the elements."""
    tensor = canonical(tensor)
    state = xxhash.xxh3_128()
    state.update(DTYPE_TAGS.get(tensor.dtype, str(tensor.dtype)).encode() + b"\0" + struct.pack("<Q", tensor.dim()))
    state.update(b"".join(struct.pack("<q", size) for size in tensor.shape))
    size = tensor.numel() * tensor.element_size()
    if size:
        state.update(ctypes.string_at(tensor.data_ptr(), size))
    return state.hexdigest()


def digest_text(text):
    return xxhash.xxh3_128_hexdigest(text.encode())


def combined(outputs):
    return digest_text("".join(f"{name}\0{value}\n" for name, value in outputs))


def named_tensors(value, name, found):
    """The tensors of a nested result, named by their place: output, output.0, output.loss."""
    if isinstance(value, torch.Tensor):
        found.append((name, value))
    elif isinstance(value, dict):
        for key, item in value.items():
            named_tensors(item, f"{name}.{key}", found)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            named_tensors(item, f"{name}.{index}", found)
    return found


def difference(reference, tensor):
    """Differing elements, max abs and max ULP difference between two runs' copies of one output."""
    if reference.shape != tensor.shape or reference.dtype != tensor.dtype:
        return -1, 0, 0.0, 0.0
    if reference.dtype in INT_VIEWS:
        kind = INT_VIEWS[reference.dtype]
        bits = [t.view(kind).to(torch.int64) for t in (reference, tensor)]
        mask = (1 << (torch.iinfo(kind).bits - 1)) - 1
        keys = [torch.where(b < 0, -(b & mask), b) for b in bits]
        differs = bits[0] != bits[1]
        ulp = float((keys[0] - keys[1]).abs().max()) if differs.any() else 0.0
        gap = (reference.double() - tensor.double()).abs().nan_to_num(0.0)
        return int(differs.sum()), reference.numel(), float(gap.max()) if gap.numel() else 0.0, ulp
    differs = reference != tensor
    return int(differs.sum()), reference.numel(), 0.0, 0.0


class OpRecorder(TorchDispatchMode):
    """Per-op digests of an eager run: every dispatcher op's inputs as it begins, its outputs as it ends."""

    def __init__(self, module_names):
        super().__init__()
        self.ops, self.started, self.truncated = [], 0, False
        self.module_names, self.modules = module_names, []

    def arguments_digest(self, values):
        parts = []
        for value in tree_flatten(values)[0]:
            parts.append(digest(value) if isinstance(value, torch.Tensor) else repr(value))
        return digest_text("\n".join(parts))

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
        text = "".join(f"{op['name']}\0{op['inputs']}\0{op['outputs']}\n" for op in self.ops)
        return {"digest": digest_text(text), "ops": self.ops, "truncated": self.truncated}


def apply_settings(settings, device):
    """The cell's flag set, as the C++ worker applies it (worker/settings_apply.cc)."""
    notes = []
    threads = settings.get("threads", "n/a")
    if threads != "n/a":
        torch.set_num_threads(int(threads))
    mode = settings.get("deterministic_algorithms", "off")
    torch.use_deterministic_algorithms(mode != "off", warn_only=mode == "warn")
    fill = settings.get("fill_uninitialized_memory", "n/a")
    if fill != "n/a":
        torch.utils.deterministic.fill_uninitialized_memory = fill == "true"
    if device.startswith("cuda"):
        for name, flag in (("cudnn_deterministic", "deterministic"), ("cudnn_benchmark", "benchmark"),
                           ("cudnn_enabled", "enabled")):
            if settings.get(name, "n/a") != "n/a":
                setattr(torch.backends.cudnn, flag, settings[name] == "true")
        if settings.get("allow_tf32", "n/a") != "n/a":
            torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = settings["allow_tf32"] == "true"
    inductor = settings.get("inductor_deterministic", "off")
    if settings.get("compile", "off") not in ("off", "n/a"):
        import torch._inductor.config as inductor_config
        if hasattr(inductor_config, "deterministic"):  # set every cell: the cell before may have turned it on
            inductor_config.deterministic = inductor == "on"
        elif inductor == "on":
            notes.append(f"inductor_deterministic: torch {torch.__version__} has no torch._inductor.config.deterministic")
    return notes


def import_callable(spec):
    """`module:callable` (module on sys.path) or `path/file.py:callable`."""
    module_text, _, attribute = spec["callable"].rpartition(":")
    if spec.get("search_path"):
        sys.path.insert(0, spec["search_path"])
    try:
        if module_text.endswith(".py"):
            import importlib.util
            path = spec["path"]
            loaded = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
            module = importlib.util.module_from_spec(loaded)
            sys.modules[loaded.name] = module
            loaded.loader.exec_module(module)
        else:
            import importlib
            module = importlib.import_module(module_text)
        target = module
        for part in attribute.split("."):
            target = getattr(target, part)
    except BaseException as error:  # noqa: BLE001 (SystemExit while importing is the user's error too)
        raise CellError(f"cannot import {spec['callable']}: {type(error).__name__}: {error}") from None
    if not callable(target):
        raise CellError(f"{spec['callable']} is not callable")
    return target


def call_with(function, seed, device):
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        parameters = {}
    arguments = {name: value for name, value in (("seed", seed), ("device", device)) if name in parameters}
    return function(**arguments)


class Subject:
    """What one run calls: the step, its arguments, and the state it starts from."""

    def __init__(self, factory, seed, device):
        torch.manual_seed(seed)
        made = call_with(factory, seed, device)
        parts = made if isinstance(made, tuple) and made and callable(made[0]) else None
        if callable(made) and not isinstance(made, torch.nn.Module):
            parts = (made,)
        if parts is None:  # the callable is the step itself
            self.step, self.arguments, self.state = (lambda: call_with(factory, seed, device)), (), []
        else:
            self.step = parts[0]
            self.arguments = tuple(parts[1]) if len(parts) > 1 and parts[1] is not None else ()
            state = parts[2] if len(parts) > 2 and parts[2] is not None else []
            self.state = list(state) if isinstance(state, (list, tuple)) else [state]
        self.saved = []
        self.module_names = {}
        for item in self.state:
            if isinstance(item, torch.nn.Module):
                self.module_names.update({id(module): name for name, module in item.named_modules() if name})

    def prime(self, function):
        """One untimed call, then the state every run starts from: optimizer buffers exist by then, so a
        run's restore copies into the same tensors and a compiled step is not compiled again."""
        function(*self.arguments)
        self.saved = [snapshot(item) for item in self.state]

    def restore(self):
        with torch.no_grad():
            for item, saved in zip(self.state, self.saved):
                restore(item, saved)

    def parameters(self):
        found = []
        for item in self.state:
            if isinstance(item, torch.nn.Module):
                for name, parameter in item.named_parameters():
                    found.append((f"params.{name}", parameter))
                    if parameter.grad is not None:
                        found.append((f"grad.{name}", parameter.grad))
        return found


def snapshot(item):
    import copy
    if isinstance(item, torch.nn.Module):
        return {name: value.detach().clone() for name, value in item.state_dict(keep_vars=True).items()}
    if isinstance(item, torch.optim.Optimizer):
        parameters = [parameter for group in item.param_groups for parameter in group["params"]]
        return {"state": [copy.deepcopy(dict(item.state.get(parameter, {}))) for parameter in parameters],
                "groups": copy.deepcopy([{key: value for key, value in group.items() if key != "params"}
                                         for group in item.param_groups])}
    return copy.deepcopy(item.state_dict())


def restore(item, saved):
    """In place where the state is tensors, so the tensors a compiled step guards on stay the same objects."""
    import copy
    if isinstance(item, torch.nn.Module):
        for name, value in item.state_dict(keep_vars=True).items():
            value.data.copy_(saved[name]) if isinstance(value, torch.nn.Parameter) else value.copy_(saved[name])
        for parameter in item.parameters():
            parameter.grad = None
    elif isinstance(item, torch.optim.Optimizer):
        parameters = [parameter for group in item.param_groups for parameter in group["params"]]
        for parameter, state in zip(parameters, saved["state"]):
            live = item.state[parameter]
            for key, value in state.items():
                if isinstance(value, torch.Tensor) and isinstance(live.get(key), torch.Tensor):
                    live[key].copy_(value)
                else:
                    live[key] = copy.deepcopy(value)
        for group, values in zip(item.param_groups, saved["groups"]):
            group.update(copy.deepcopy(values))
    else:
        item.load_state_dict(copy.deepcopy(saved))

def synchronize(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


class Cell:
    """One cell in this process: warm-up, the digested runs, the per-op runs, the timing-only runs."""

    def __init__(self, cell):
        self.cell, self.spec, self.settings = cell, cell["model"], cell["settings"]
        self.device, self.seed = cell["device"], int(cell["settings"].get("seed", "0"))
        self.observation = {"process": REQUEST.get("process", 0), "status": "ok", "runs": [], "warnings": [],
                            "trace_unavailable": "the Python runner traces no kernels"}
        self.copies = {}
        self.differences = {}

    def run_once(self, subject, function, recorder=None):
        subject.restore()
        torch.manual_seed(self.seed)
        synchronize(self.device)
        began = time.perf_counter_ns()
        if recorder is None:
            result = function(*subject.arguments)
        else:
            def entered(module, _):  # a hook returns None: anything else would replace the input or output
                recorder.modules.append(subject.module_names.get(id(module), ""))

            def left(module, _, __):
                if recorder.modules:
                    recorder.modules.pop()

            hooks = [torch.nn.modules.module.register_module_forward_pre_hook(entered),
                     torch.nn.modules.module.register_module_forward_hook(left)]
            try:
                with recorder:
                    result = function(*subject.arguments)
            finally:
                for hook in hooks:
                    hook.remove()
        synchronize(self.device)
        elapsed = time.perf_counter_ns() - began
        outputs = named_tensors(result, "output", [])
        if not outputs:
            raise CellError(f"the callable returned no tensors (it returned {type(result).__name__}); return the "
                            "tensors to digest, in a tuple, list or dict if several")
        if self.spec.get("parameters"):
            outputs += subject.parameters()
        return outputs, elapsed

    def record(self, outputs, elapsed, warmup, run_index, recorder=None):
        digests = [(name, digest(tensor)) for name, tensor in outputs]
        run = {"digest": combined(digests), "outputs": [{"name": n, "digest": d} for n, d in digests],
               "warmup": warmup, "time_ns": elapsed}
        if recorder is not None:
            sequence = recorder.sequence()
            run["op_digest"], run["per_op"] = sequence["digest"], True
            sequences = self.observation.setdefault("op_sequences", [])
            if len(sequences) < MAX_SEQUENCES and all(s["digest"] != sequence["digest"] for s in sequences):
                sequences.append(sequence)
        self.observation["runs"].append(run)
        if warmup:
            return
        for (name, tensor), (_, value) in zip(outputs, digests):
            if name not in self.copies:
                self.copies[name] = (value, canonical(tensor).clone())
            elif self.copies[name][0] != value and name not in self.differences:
                changed, elements, gap, ulp = difference(self.copies[name][1], canonical(tensor))
                self.differences[name] = {"output": name, "run": run_index, "differing_elements": changed,
                                          "elements": elements, "max_abs_difference": gap, "max_ulp_difference": ulp}

    def compiled(self, step):
        mode = self.settings.get("compile", "off")
        if mode in ("off", "n/a"):
            return step
        torch._dynamo.reset()  # every cell compiles afresh; nothing is reused from the cell before
        return torch.compile(step, mode=None if mode == "default" else mode)

    def run(self):
        self.observation["warnings"] += apply_settings(self.settings, self.device)
        factory = import_callable(self.spec)
        subject = Subject(factory, self.seed, self.device)
        function = self.compiled(subject.step)
        subject.prime(function)
        warmup, repeats = REQUEST.get("warmup", 1), REQUEST.get("repeats", 10)
        for index in range(warmup):
            outputs, elapsed = self.run_once(subject, function)
            self.record(outputs, elapsed, True, index)
        times = []
        for index in range(repeats):
            outputs, elapsed = self.run_once(subject, function)
            self.record(outputs, elapsed, False, index)
            times.append(elapsed)
        self.per_op(subject, function, repeats)
        timing = REQUEST.get("timing", {})
        budget = time.perf_counter() + float(timing.get("budget_seconds", 2.0) or 2.0)
        while len(times) < int(timing.get("min_samples", 0)) and time.perf_counter() < budget:
            times.append(self.run_once(subject, function)[1])
        self.observation["timing_ns"] = times
        if self.differences:
            self.observation["output_differences"] = list(self.differences.values())

    def per_op(self, subject, function, repeats):
        if not self.spec.get("per_op", True):
            return
        if function is not subject.step:
            self.observation["per_op_unavailable"] = (
                "compiled code runs Inductor's kernels outside the dispatcher, so no op of it can be recorded; "
                "audit the step with compile=off to name the op where it diverges")
            return
        for index in range(max(2, repeats // 2)):
            recorder = OpRecorder(subject.module_names)
            outputs, elapsed = self.run_once(subject, function, recorder)
            self.record(outputs, elapsed, False, repeats + index, recorder)


def run_cell(cell):
    state = Cell(cell)
    printed = CountingStdout()
    sys.stdout = printed
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            state.run()
        state.observation["warnings"] += sorted({str(w.message).splitlines()[0] for w in caught if str(w.message)})
    except CellError as error:
        state.observation.update(status="exception", message=str(error))
    except SystemExit as error:
        state.observation.update(status="exception", message=f"the callable called sys.exit({error.code!r})")
    except BaseException as error:  # noqa: BLE001 (any failure of the user's code is the cell's verdict)
        where = traceback.extract_tb(error.__traceback__)[-1]
        state.observation.update(status="exception", message=f"{type(error).__name__}: {error} "
                                 f"(at {os.path.basename(where.filename)}:{where.lineno})")
    finally:
        sys.stdout = sys.__stderr__
    if printed.characters:
        state.observation["warnings"].append(
            f"the callable printed {printed.characters} characters to stdout (kept in the worker's log)")
    return state.observation


def main():
    if xxhash is None:
        for cell in REQUEST["cells"]:
            emit({"event": "start", "key": cell["key"]})
            emit({"event": "cell", "key": cell["key"], "observation": {
                "process": REQUEST.get("process", 0), "status": "exception", "runs": [],
                "message": f"{sys.executable} lacks the xxhash package (pip install xxhash): it digests outputs"}})
    else:
        for cell in REQUEST["cells"]:
            emit({"event": "start", "key": cell["key"]})
            emit({"event": "cell", "key": cell["key"], "observation": run_cell(cell)})
    emit({"event": "done"})


try:
    main()
finally:
    if CACHE:
        shutil.rmtree(CACHE, ignore_errors=True)
