"""The runner's cell setup: settings, the callable and the state each run starts from, the timing rule, and
the walk of a result for its tensors (concatenated after python_recorders.py, see CMakeLists.txt)."""
import dataclasses  # noqa: E402
import math  # noqa: E402

# Inductor's switches, py cells only: each setting's `on` sets these torch._inductor.config flags (a
# dotted name is a member of a sub-config); `off` puts back the values the interpreter started with.
INDUCTOR_SWITCHES = {
    "inductor_deterministic": ("deterministic",),
    "inductor_batch_invariant": ("batch_invariant",),
    "autotune": ("max_autotune", "max_autotune_pointwise", "max_autotune_gemm", "coordinate_descent_tuning"),
}
INDUCTOR_STARTED = {}

# What torch.use_deterministic_algorithms does in the torch versions this runner knows: it imports
# torch._inductor.config (and with it Dynamo: most of a second of CPU) to set its `deterministic` to the
# mode, then sets torch's flag. A worker whose cells compile nothing need not pay for that import: the flag
# is set directly, and Inductor's config, if a callable imports it later, gets the mode then
# (InductorConfigFollowsTheFlag), as the call would have left it. Any other torch gets its own function.
KNOWN_DETERMINISTIC_SETTER = ("torch._inductor.config", "_inductor", "config", "deterministic", "_C",
                              "_set_deterministic_algorithms")
DETERMINISTIC_MODE = [None]  # the mode last set, for an Inductor config imported after it


class InductorConfigFollowsTheFlag(importlib.abc.MetaPathFinder):
    """On the first import of torch._inductor.config: its `deterministic` set to the mode last set."""

    def find_spec(self, name, path, target=None):
        if name != "torch._inductor.config" or DETERMINISTIC_MODE[0] is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            module.deterministic = DETERMINISTIC_MODE[0]

        spec.loader.exec_module = exec_module  # the loader's own object, so the module keeps its source
        return spec


def use_deterministic_algorithms(mode, warn_only):
    """torch.use_deterministic_algorithms(mode, warn_only=warn_only), without importing Inductor's config."""
    if torch.use_deterministic_algorithms.__code__.co_names != KNOWN_DETERMINISTIC_SETTER:
        torch.use_deterministic_algorithms(mode, warn_only=warn_only)
        return
    config = sys.modules.get("torch._inductor.config")
    if config is not None:
        config.deterministic = mode
    elif not any(isinstance(finder, InductorConfigFollowsTheFlag) for finder in sys.meta_path):
        sys.meta_path.insert(0, InductorConfigFollowsTheFlag())
    DETERMINISTIC_MODE[0] = mode
    torch._C._set_deterministic_algorithms(mode, warn_only=warn_only)


def apply_settings(settings, device):
    """The cell's flag set, as the C++ worker applies it (worker/settings_apply.cc)."""
    threads = settings.get("threads", "n/a")
    if threads != "n/a":
        torch.set_num_threads(int(threads))
    mode = settings.get("deterministic_algorithms", "off")
    use_deterministic_algorithms(mode != "off", warn_only=mode == "warn")
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
    if settings.get("compile", "off") not in ("off", "n/a"):
        apply_inductor_switches(settings)


def apply_inductor_switches(settings):
    """Every cell sets every switch (the cell before may have turned one on); a switch the installed torch
    lacks makes the cell unsupported when it is asked for, so it never passes as if it had been set."""
    import torch._inductor.config as inductor_config
    for setting, flags in INDUCTOR_SWITCHES.items():
        wanted = settings.get(setting, "off") == "on"
        missing = [flag for flag in flags if not hasattr(inductor_config, flag)]
        if missing and wanted:
            raise CellUnsupported(f"{setting}: torch {torch.__version__} has no torch._inductor.config."
                                  f"{', '.join(missing)}")
        for flag in flags:
            if flag in missing:
                continue
            INDUCTOR_STARTED.setdefault(flag, getattr(inductor_config, flag))
            setattr(inductor_config, flag, True if wanted else INDUCTOR_STARTED[flag])


def inductor_options(settings):
    """The Inductor flags a cell's switches turn on, for torch.compile(options=...): {flag: True}."""
    import torch._inductor.config as inductor_config
    return {flag: True for setting, flags in INDUCTOR_SWITCHES.items() if settings.get(setting, "off") == "on"
            for flag in flags if hasattr(inductor_config, flag)}


# What a cell's Python code prints reaches the worker's log up to this much per stream; the rest is
# counted, not kept (a step printing forever would fill the temporary folder in seconds).
LOG_CHARACTERS = 1 << 20


class CountingStdout(io.TextIOBase):
    """sys.stdout or sys.stderr while the callable runs: text goes to the log up to LOG_CHARACTERS, and the
    cell says how much was printed and whether the log was cut."""

    def __init__(self, name):
        self.name, self.characters = name, 0

    def write(self, text):
        kept = max(0, LOG_CHARACTERS - self.characters)
        self.characters += len(text)
        if kept:
            sys.__stderr__.write(text[:kept])
            if len(text) > kept:
                sys.__stderr__.write(f"\n[repro-audit: the callable's {self.name} is cut here: at most "
                                     f"{LOG_CHARACTERS} characters are kept]\n")
        return len(text)

    def flush(self):
        sys.__stderr__.flush()

    def note(self):
        """The cell's warning about what was printed, or "" when nothing was."""
        if not self.characters:
            return ""
        cut = "; kept in the worker's log up to {} characters".format(LOG_CHARACTERS)
        return (f"the callable printed {self.characters} characters to {self.name}"
                + (cut if self.characters > LOG_CHARACTERS else " (kept in the worker's log)"))


def median_interval_ranks(samples, confidence=0.95):
    """The 0-based ranks of the median's distribution-free interval, as timing/timing.cc computes them."""
    if samples < 6:
        return None
    cumulative, low = 0.0, 0
    for k in range(samples // 2):
        cumulative += math.exp(math.lgamma(samples + 1) - math.lgamma(k + 1) - math.lgamma(samples - k + 1)
                               - samples * math.log(2.0))
        if 2 * cumulative > 1 - confidence:
            break
        low = k
    return low, samples - 1 - low


def timing_done(samples, rule, spent_seconds):
    """timing/timing.h's rule: at least min_samples, then until the median's interval is within the target,
    the budget is spent or max_samples are taken."""
    if len(samples) >= rule["max_samples"]:
        return True
    if len(samples) < rule["min_samples"]:
        return False
    if spent_seconds >= rule["budget_seconds"]:
        return True
    ranks = median_interval_ranks(len(samples))
    if ranks is None:
        return False
    ordered = sorted(samples)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) // 2
    return median > 0 and (ordered[ranks[1]] - ordered[ranks[0]]) / 2 / median <= rule["target"]


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
            # Imported afresh for each cell, as a file's module is: what it does when imported (seeding a
            # generator, making one) happens for every cell, as in a process of its own.
            sys.modules.pop(module_text, None)
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
        self.loader = parts is None and is_loader(made)
        if self.loader:  # a loader cell: the step is set by the cell (LoaderStep)
            self.step, self.arguments, self.state = None, (), []
        elif parts is None:  # the callable is the step itself
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
        if not self.loader:  # a loader has no state to keep: each run makes it again
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


SCALARS = (str, bytes, int, float, complex, bool, type(None), torch.dtype, torch.device, torch.Size)


def holds_tensor(value, depth=0, seen=None):
    """Whether a value the digest does not walk holds a tensor anywhere within a few levels (its items,
    its attributes): such an output would be left out of the digest without a word."""
    seen = set() if seen is None else seen
    if isinstance(value, torch.Tensor):
        return True
    if depth > 4 or isinstance(value, SCALARS) or id(value) in seen:
        return False
    seen.add(id(value))
    if isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
    else:
        items = list(getattr(value, "__dict__", {}).values())
        slots = getattr(type(value), "__slots__", ())
        slots = (slots,) if isinstance(slots, str) else slots
        items += [getattr(value, slot) for slot in slots if hasattr(value, slot)]
    return any(holds_tensor(item, depth + 1, seen) for item in items)


def named_tensors(value, name, found):
    """The tensors of a nested result, named by their place: output, output.0, output.loss, output.field
    (a dataclass's), output.0 of a nested tensor's components. A container with no order (a set) or an
    object the digest cannot walk that holds tensors is an error naming it, never left out in silence."""
    if isinstance(value, torch.Tensor):
        if value.is_nested:
            for index, part in enumerate(value.unbind()):
                found.append((f"{name}.{index}", part))
        else:
            found.append((name, value))
    elif isinstance(value, dict):
        for key, item in value.items():
            named_tensors(item, f"{name}.{key}", found)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            named_tensors(item, f"{name}.{index}", found)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            named_tensors(getattr(value, field.name), f"{name}.{field.name}", found)
    elif isinstance(value, (set, frozenset)):
        if holds_tensor(value):
            raise CellError(f"{name} is a {type(value).__name__} holding tensors, which has no order to digest them "
                            "in: return them in a tuple, list or dict")
    elif not isinstance(value, SCALARS) and holds_tensor(value):
        raise CellError(f"{name} is a {type(value).__name__} holding tensors that the digest cannot walk: return "
                        "them in a tuple, list, dict or dataclass")
    return found
