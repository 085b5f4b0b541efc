"""The runner's random sources (concatenated after python_subject.py, see CMakeLists.txt).

A source is a generator a step may draw from: Python's `random`, NumPy's global RNG, torch's CPU and
CUDA generators, and the random.Random, numpy.random.RandomState, numpy.random.Generator and
torch.Generator objects the step reaches (its module's attributes and those of the modules its functions
come from, its closures, its arguments and state, and their attributes), found once the factory has run.
Each run starts from the random state the factory left, as it starts from the same model and optimizer
state: the sources the step's untimed first call advanced are put back before every run (torch's own
generators are seeded with the cell's seed instead, as always); the others cost a run nothing and are read
once more after the digested runs. A source's state after the factory is digested in every process: the
same digest in every process is a seeded source, different ones a source nobody seeded.
"""
import collections  # noqa: E402
import random  # noqa: E402
import types  # noqa: E402

MAX_WALK_OBJECTS = 20000
MAX_WALK_DEPTH = 6
MAX_SOURCES = 32
# Packages whose modules the walk does not enter: thousands of objects each, and no generator of theirs
# is one a step draws from but the global ones named below.
NOT_WALKED = {"torch", "numpy", "triton", "sympy", "functorch", "typing_extensions", "xxhash", "filelock",
              "jinja2", "networkx", "fsspec", "mpmath", "markupsafe", "sitecustomize", "_distutils_hack"}
STANDARD_MODULES = set(getattr(sys, "stdlib_module_names", ())) | {"__main__", "builtins"}


def source_kind(value):
    """The kind of generator `value` is, or None."""
    if isinstance(value, random.Random):
        return "random.Random"
    if isinstance(value, torch.Generator):
        return "torch.Generator"
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        if isinstance(value, numpy_random.RandomState):
            return "numpy.random.RandomState"
        if isinstance(value, numpy_random.Generator):
            return "numpy.random.Generator"
    return None


def state_of(kind, value):
    if kind == "random.Random":
        return value.getstate()
    if kind == "numpy.random.RandomState":
        return value.get_state(legacy=False)
    if kind == "numpy.random.Generator":
        return value.bit_generator.state
    return value.get_state()


def set_state(kind, value, state):
    if kind == "random.Random":
        value.setstate(state)
    elif kind == "numpy.random.RandomState":
        value.set_state(state)
    elif kind == "numpy.random.Generator":
        value.bit_generator.state = state
    else:
        value.set_state(state)


def state_text(value, parts):
    """A state as text: dicts by key, sequences by item, arrays and tensors by their bytes."""
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            parts.append(f"{key}=")
            state_text(value[key], parts)
    elif isinstance(value, (list, tuple)):
        parts.append("(")
        for item in value:
            state_text(item, parts)
        parts.append(")")
    elif isinstance(value, torch.Tensor):
        parts.append(digest(value))
    elif hasattr(value, "tobytes"):
        parts.append(xxhash.xxh3_128_hexdigest(value.tobytes()))
    else:
        parts.append(repr(value) + ",")
    return parts


def state_digest(kind, value):
    return digest_text("".join(state_text(state_of(kind, value), [])))


# What puts each global source in the same state in every process: the recipe's line, and the setting
# that applies it.
GLOBAL_RECIPES = {
    "random": "random.seed(seed) before the factory draws (the setting seed_random=on)",
    "numpy.random": "np.random.seed(seed) before the factory draws (the setting seed_numpy=on)",
}
OWN_RECIPES = {
    "random.Random": "random.Random(seed) where it is made",
    "numpy.random.RandomState": "np.random.RandomState(seed) where it is made",
    "numpy.random.Generator": "np.random.default_rng(seed) where it is made",
    "torch.Generator": "torch.Generator().manual_seed(seed) where it is made",
}


class Source:
    def __init__(self, name, kind, value, where):
        self.name, self.kind, self.value, self.where = name, kind, value, where
        self.saved = None        # the state after the factory, put back before every run
        self.state = ""          # its digest
        self.start = ""          # the digest every run starts from
        self.in_factory = False  # the factory advanced it
        self.in_runs = False     # a digested run advanced it
        self.seeded_each_run = False  # torch's own generators: the runner seeds them before every run

    def observation(self):
        found = {"name": self.name, "kind": self.kind, "where": self.where, "state": self.state,
                 "drawn_in_factory": self.in_factory, "drawn_in_runs": self.in_runs}
        if self.seeded_each_run:
            found["seeded_by_runner"] = True
        elif self.where == "global":
            found["recipe"] = GLOBAL_RECIPES.get(self.name, "")
        else:
            recipe = OWN_RECIPES.get(self.kind, "")
            device = getattr(self.value, "device", None)  # a torch.Generator on another device is made there
            if self.kind == "torch.Generator" and device is not None and str(device) != "cpu":
                recipe = recipe.replace("torch.Generator()", f"torch.Generator(device='{device}')")
            found["recipe"] = recipe + ": the global seeds do not reach it"
        return found


def global_sources():
    """Python's and NumPy's global generators and torch's, by the names the report gives them."""
    found = [Source("random", "random.Random", random._inst, "global")]
    # NumPy 2 imports numpy.random on its first use (torch imports numpy, not numpy.random): made here,
    # seeded by the operating system as the step's first use would make it, so that its state is known.
    numpy = sys.modules.get("numpy")
    numpy_random = getattr(numpy, "random", None) if numpy is not None else None
    if numpy_random is not None and hasattr(numpy_random, "mtrand"):
        found.append(Source("numpy.random", "numpy.random.RandomState", numpy_random.mtrand._rand, "global"))
    torch_cpu = Source("torch (cpu)", "torch.Generator", torch.default_generator, "global")
    torch_cpu.seeded_each_run = True
    found.append(torch_cpu)
    if torch.cuda.is_initialized():
        for index, generator in enumerate(torch.cuda.default_generators):
            source = Source(f"torch (cuda:{index})", "torch.Generator", generator, "global")
            source.seeded_each_run = True
            found.append(source)
    return found


def walked_package(name):
    """Whether the walk enters what the module named `name` holds: the user's code and libraries it uses,
    not torch's, NumPy's or the standard library's."""
    top = (name or "").split(".")[0]
    return top not in NOT_WALKED and top not in STANDARD_MODULES and not top.startswith("_")


def children(value):
    """(name suffix, where, child) for what the walk enters from `value`."""
    if isinstance(value, types.ModuleType):
        return [(f".{key}", "module attribute", item) for key, item in vars(value).items()
                if not key.startswith("__")] if walked_package(getattr(value, "__name__", "")) else []
    if isinstance(value, dict):
        return [(f"[{key!r}]", None, item) for key, item in value.items()]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [(f"[{index}]", None, item) for index, item in enumerate(value)]
    if isinstance(value, types.MethodType):
        return [(".__self__", None, value.__self__), ("", None, value.__func__)]
    if isinstance(value, types.FunctionType):
        module = sys.modules.get(value.__module__ or "")
        found = []
        for variable, cell in zip(value.__code__.co_freevars, value.__closure__ or ()):
            try:
                found.append((f".<closure {variable}>", "closure", cell.cell_contents))
            except ValueError:  # an empty cell
                pass
        found += [(f".<default {index}>", None, item) for index, item in enumerate(value.__defaults__ or ())]
        if module is not None:
            found.append((None, None, module))
        return found
    if isinstance(value, functools.partial):
        return [(".func", None, value.func), (".args", None, value.args), (".keywords", None, value.keywords)]
    if isinstance(value, type):
        if not walked_package(getattr(value, "__module__", "")):
            return []
        return [(f".{key}", None, item) for key, item in vars(value).items() if not key.startswith("__")]
    if isinstance(value, (torch.Tensor, *SCALARS)) or callable(getattr(value, "__array__", None)):
        return []
    found = [(f".{key}", None, item) for key, item in getattr(value, "__dict__", {}).items()]
    slots = getattr(type(value), "__slots__", ())
    for slot in (slots,) if isinstance(slots, str) else slots:
        if hasattr(value, slot):
            found.append((f".{slot}", None, getattr(value, slot)))
    return found


def walk_sources(roots, known):
    """The generators reachable from `roots` ((name, value) pairs), breadth first, each by the shortest
    path to it; `known` (id -> Source) holds the global ones, which keep their names."""
    queue = collections.deque((name, "object path", value, 0) for name, value in roots)
    seen, found, visited = set(known), [], 0
    while queue and visited < MAX_WALK_OBJECTS and len(found) < MAX_SOURCES:
        name, where, value, depth = queue.popleft()
        if id(value) in seen:
            continue
        seen.add(id(value))
        visited += 1
        kind = source_kind(value)
        if kind is not None:
            found.append(Source(name, kind, value, where))
            continue
        if depth >= MAX_WALK_DEPTH:
            continue
        try:
            items = children(value)
        except Exception:  # noqa: BLE001 (an object whose attributes raise is not walked)
            continue
        for suffix, child_where, child in items:
            if suffix is None:  # a function's module: named from its own name
                queue.append((child.__name__, "module attribute", child, depth + 1))
            else:
                queue.append((name + suffix, child_where or where, child, depth + 1))
    return found


class RandomSources:
    """The cell's sources in this process: their states after the factory, put back before every run."""

    def __init__(self, seed):
        torch.manual_seed(seed)  # as Subject does before the factory
        self.active = None  # the sources each run puts back, once the step's first call has shown them
        self.sources = global_sources()
        self.before = [state_digest(source.kind, source.value) for source in self.sources]

    def after_factory(self, subject, factory):
        for source, before in zip(self.sources, self.before):
            source.state = state_digest(source.kind, source.value)
            source.in_factory = source.state != before
            # torch's generators are seeded before every run: that state is where runs start
            source.start = before if source.seeded_each_run else source.state
        roots = [("step", subject.step), ("arguments", subject.arguments), ("state", subject.state)]
        module = sys.modules.get(getattr(factory, "__module__", "") or "")
        if module is not None:
            roots.insert(0, (module.__name__, module))
        roots.append(("factory", factory))
        known = {id(source.value): source for source in self.sources}
        for source in walk_sources(roots, known):
            source.state = source.start = state_digest(source.kind, source.value)
            self.sources.append(source)
        for source in self.sources:
            if not source.seeded_each_run:
                source.saved = state_of(source.kind, source.value)

    def prime(self, subject, function):
        """The step's untimed first call: the sources it advances are the ones every run puts back (and
        reads); the others cost the runs nothing, and are read once more after them (finish)."""
        before = [state_digest(source.kind, source.value) for source in self.sources]
        subject.prime(function)
        if subject.loader:  # each run makes the loader again: every source is put back and read each run
            return
        self.active = []
        for source, digest_before in zip(self.sources, before):
            if state_digest(source.kind, source.value) != digest_before:
                source.in_runs = True
                self.active.append(source)

    def restore(self):
        for source in self.sources if self.active is None else self.active:
            if source.saved is not None:
                set_state(source.kind, source.value, source.saved)

    def after_run(self):
        """After a digested run of a loader cell: which sources it advanced."""
        if self.active is None:
            self.finish()

    def finish(self):
        """After the digested runs: a source none of them put back and that no longer has the state the runs
        started from was drawn by one of them."""
        for source in self.sources:
            if not source.in_runs and state_digest(source.kind, source.value) != source.start:
                source.in_runs = True

    def observation(self):
        return [source.observation() for source in self.sources if source.in_factory or source.in_runs]


def hash_facts():
    """PYTHONHASHSEED as this process had it ("" unset: a random one per process), and a digest of the
    hashes of fixed strings: two processes with the same digest hash strings, so order sets, alike."""
    hashes = ",".join(str(hash(text)) for text in ("repro-audit", "a", "b"))
    return {"hash_seed": os.environ.get("PYTHONHASHSEED", ""), "hash_probe": digest_text(hashes)[:16]}


def fresh_random_state():
    """The global generators as a fresh process has them, seeded from the operating system: a worker runs
    several cells, and one cell's seeds must not reach the next (the callable's module is imported again
    for each cell, see import_callable, so what it seeds when imported is seeded again)."""
    random.seed()
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()


def seed_recipe(settings, seed):
    """The recipe's lines as settings: seed Python's and NumPy's global generators before the factory."""
    if settings.get("seed_random", "off") == "on":
        random.seed(seed)
    if settings.get("seed_numpy", "off") == "on":
        try:
            import numpy
        except ImportError:
            raise CellUnsupported(f"seed_numpy=on: {sys.executable} has no numpy") from None
        numpy.random.seed(seed % 2 ** 32)
