"""The runner's cells: determinism runs, per-op or per-graph runs, timing-only runs, the interpreter's
facts and the protocol's main loop (concatenated last, after python_kernels.py, see CMakeLists.txt)."""


def synchronize(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


GRAPHS = None  # the GraphCatalogue, made when the first cell compiles


class Cell:
    """One cell in this process: warm-up, the digested runs, the recorded runs, the timing-only runs."""

    def __init__(self, cell):
        self.cell, self.spec, self.settings = cell, cell["model"], cell["settings"]
        self.device, self.seed = cell["device"], int(cell["settings"].get("seed", "0"))
        self.observation = {"process": REQUEST.get("process", 0), "status": "ok", "runs": [], "warnings": []}
        self.tracer = KernelTracer(self.device)
        self.kernels = None  # the last run's kernel records, where it was traced
        self.copies = {}
        self.differences = {}
        self.sources = None  # the random sources, once the factory has run
        self.began = time.perf_counter()

    def run_once(self, subject, function, recorder=None, traced=False):
        """One run: its outputs and time. `traced` (the digested runs): its kernels in self.kernels, traced
        around the timed region as the C++ worker traces its runs (a run that raises: run_cell ends it)."""
        subject.restore()
        torch.manual_seed(self.seed)
        if self.sources is not None:
            self.sources.restore()
        synchronize(self.device)
        self.kernels = None
        if traced:
            self.tracer.begin_run()
        began = time.perf_counter_ns()
        if recorder is None:
            result = function(*subject.arguments)
        else:
            def entered(module, _):  # a hook returns None: anything else would replace the input or output
                recorder.modules.append(subject.module_names.get(id(module), ""))

            def left(module, _, __):
                if recorder.modules:
                    recorder.modules.pop()

            hooks = []
            if isinstance(recorder, OpRecorder):
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
        if traced:
            self.kernels = self.tracer.end_run()
            if self.sources is not None:
                self.sources.after_run()
        outputs = named_tensors(result, "output", [])
        if not outputs:
            raise CellError(f"the callable returned no tensors (it returned {type(result).__name__}); return the "
                            "tensors to digest, in a tuple, list or dict if several")
        if self.spec.get("parameters"):
            outputs += subject.parameters()
        return outputs, elapsed

    def record(self, outputs, elapsed, warmup, run_index, recorder=None, kernels=None):
        digests = [(name, digest(tensor)) for name, tensor in outputs]
        run = {"digest": combined(digests), "outputs": [{"name": n, "digest": d} for n, d in digests],
               "warmup": warmup, "time_ns": elapsed}
        if kernels is not None:
            run["kernel_digest"] = self.tracer.keep(kernels)
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
            # A quantized tensor is compared by its integers (a packed dtype has no copy kernel).
            tensor = tensor.detach().int_repr() if tensor.is_quantized else tensor
            if name not in self.copies:
                self.copies[name] = (value, tensor.detach().to("cpu", copy=True))
            elif self.copies[name][0] != value and name not in self.differences:
                changed, elements, gap, ulp = difference(self.copies[name][1], tensor)
                self.differences[name] = {"output": name, "run": run_index, "differing_elements": changed,
                                          "elements": elements, "max_abs_difference": gap, "max_ulp_difference": ulp}

    def compiled(self, step):
        global GRAPHS
        mode = self.settings.get("compile", "off")
        if mode in ("off", "n/a"):
            return step
        if GRAPHS is None:
            GRAPHS = GraphCatalogue()
        GRAPHS.clear()
        torch._dynamo.reset()  # every cell compiles afresh; nothing is reused from the cell before
        if self.device == "cpu":
            check_vector_isas()
        options = inductor_options(self.settings)
        if not options:
            return torch.compile(step, mode=None if mode == "default" else mode)
        # The switches also go to every compile as Inductor's config patches: a global flag alone does not
        # hold (torch.use_deterministic_algorithms, which Dynamo calls again after each frame it converts,
        # sets torch._inductor.config.deterministic back). `mode` and `options` cannot both be given.
        import torch._inductor as inductor  # `import torch._inductor` would make `torch` local to this function
        merged = dict(inductor.list_mode_options(mode)) if mode != "default" else {}
        merged.update(options)
        return torch.compile(step, options=merged)

    def spent(self):
        return time.perf_counter() - self.began

    def run(self):
        apply_settings(self.settings, self.device)
        fresh_random_state()
        seed_recipe(self.settings, self.seed)
        factory = import_callable(self.spec)
        sources = RandomSources(self.seed)
        subject = Subject(factory, self.seed, self.device)
        if subject.loader:
            if self.settings.get("compile", "off") not in ("off", "n/a"):
                raise CellUnsupported("compile: a DataLoader cell has no step to compile (its batches are digested)")
            subject.step = LoaderStep(factory, self.seed, self.device, self.settings, self.spec)
        sources.after_factory(subject, factory)
        self.sources = sources
        function = self.compiled(subject.step)
        sources.prime(subject, function)
        warmup, repeats = REQUEST.get("warmup", 1), REQUEST.get("repeats", 10)
        rule = dict(REQUEST.get("timing", {}))
        rounds = max(1, int(rule.get("rounds", 1)))
        rule["budget_seconds"] = float(rule.get("budget_seconds", 0.03)) / rounds  # this round's share
        rule.setdefault("max_samples", 2000)
        rule.setdefault("target", 0.01)
        share = float(self.cell.get("budget_seconds", 0) or 0)
        if int(REQUEST.get("timing_round", 0)) > 1:  # a later timing round: a warm-up, then timing only
            for _ in range(warmup):
                self.run_once(subject, function)
            rule["min_samples"] = int(rule.get("round_min_samples", 3))
            self.time_until_done(subject, function, rule)
            self.observation["timing_rounds"] = int(REQUEST["timing_round"])
            return
        # The warm-up runs are not traced (the C++ worker's are): a step compiled with CUDA graphs
        # (reduce-overhead, max-autotune) records its graphs in its first calls, whose kernels need not be
        # the later runs', and would show as a kernel selection that varies.
        for index in range(warmup):
            outputs, elapsed = self.run_once(subject, function)
            self.record(outputs, elapsed, True, index)
        await_fork_server()  # what the factory and the warm-up imported, the server too
        for index in range(repeats):
            if share > 0 and index >= 3 and self.spent() >= share:
                self.observation["budget_limited"] = True
                break
            outputs, elapsed = self.run_once(subject, function, traced=True)
            self.record(outputs, elapsed, False, index, kernels=self.kernels)
            if subject.loader and "loader" not in self.observation:
                self.observation["loader"] = subject.step.observation()
        sources.finish()
        await_fork_server()  # before the per-op runs' plain timings and the timing-only runs
        self.recorded_runs(subject, function, repeats)
        if REQUEST.get("process", 0) > 0:  # one process's timing-only runs time the cell; the others add digests
            rule["budget_seconds"], rule["min_samples"] = 0, 0
        if share > 0:  # timing-only runs only from what is left of the share, however few
            rule["budget_seconds"], rule["min_samples"] = min(rule["budget_seconds"], max(0, share - self.spent())), 0
        self.time_until_done(subject, function, rule)
        if self.differences:
            self.observation["output_differences"] = list(self.differences.values())

    def time_until_done(self, subject, function, rule):
        """Timing-only runs, neither digested nor recorded, until the timing rule is met."""
        times, began = [], time.perf_counter()
        while not timing_done(times, rule, time.perf_counter() - began):
            times.append(self.run_once(subject, function)[1])
        if times:
            self.observation["timing_ns"] = times

    def recorded_runs(self, subject, function, repeats):
        """Eager: per-op records. Compiled: per-graph and per-kernel records of the Inductor graphs it calls."""
        if not self.spec.get("per_op", True):
            return
        if subject.loader:
            self.observation["per_op_unavailable"] = (
                "a DataLoader cell digests each batch (outputs epochE.batchB), not the ops that made it")
            return
        compiled = function is not subject.step
        if compiled and GRAPHS.unavailable:
            self.observation["per_op_unavailable"] = (
                f"compiled code runs Inductor's kernels outside the dispatcher, and {GRAPHS.unavailable}; "
                "audit the step with compile=off to name the op where it diverges")
            return
        digests, why = device_digests(self.device)
        if why:
            self.observation["warnings"].append(why)

        def make():
            return GRAPHS.recorder(digests) if compiled else OpRecorder(subject.module_names, digests)
        runs, graph_calls, without_kernels = max(2, repeats // 2), 0, []
        for index in range(runs):
            recorder = make()
            outputs, elapsed = self.run_once(subject, function, recorder)
            self.record(outputs, elapsed, False, repeats + 2 * index, recorder)
            if compiled:
                graph_calls += recorder.graph_calls
                without_kernels += [name for name in recorder.without_kernels if name not in without_kernels]
            # A plain run after each recorded one: what the per-op digests cost is measured against runs
            # of this process in the same stretch of time (verdict.h: per_op_plain_timing).
            outputs, elapsed = self.run_once(subject, function)
            self.record(outputs, elapsed, False, repeats + 2 * index + 1)
        if compiled and graph_calls == 0:
            plural = "s" if GRAPHS.made != 1 else ""
            made = (f", though Inductor made or loaded {GRAPHS.made} graph{plural} for this cell" if GRAPHS.made
                    else ": Inductor made none for this cell and loaded none from a cache (a step Dynamo runs eagerly "
                    "has none)")
            self.observation["per_op_unavailable"] = (
                f"compiled code runs Inductor's kernels outside the dispatcher, and its {runs} recorded runs called no "
                f"Inductor graph{made}; audit the step with compile=off to name the op where it diverges")
        for name in without_kernels:
            self.observation["warnings"].append(
                f"the recorded runs found no generated wrapper module behind {name}: its kernels are not recorded")


class MachineFailure(Exception):
    """The machine failed the cell, not the callable: the audit ends (exit 2) naming the problem."""


def no_space_left(error):
    """The first error in `error`'s chain that says the disk is full (an OSError with ENOSPC, or a
    compiler's message, which Inductor wraps in its own errors); None when none does."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if (isinstance(error, OSError) and error.errno == errno.ENOSPC) or "No space left on device" in str(error):
            return error
        error = error.__cause__ or error.__context__
    return None


class KeptWarnings:
    """The callable's distinct warnings, the first KEPT_WARNINGS of them, and a count of the rest
    (protocol/observation_json.h's kKeptWarnings): a step warning 200,000 times a run holds 50."""

    def __init__(self):
        self.kept = set()
        self.not_kept = 0

    def show(self, message, *args, **kwargs):
        text = str(message).splitlines()[0] if str(message) else ""
        if not text or text in self.kept:
            return
        if len(self.kept) < KEPT_WARNINGS:
            self.kept.add(text)
        else:
            self.not_kept += 1

    def lines(self):
        more = [f"{self.not_kept} more warning(s) not kept: a run keeps its first {KEPT_WARNINGS}"]
        return sorted(self.kept) + (more if self.not_kept else [])


def run_cell(cell):
    state = Cell(cell)
    printed, complained = CountingStdout("stdout"), CountingStdout("stderr")
    sys.stdout, sys.stderr = printed, complained
    try:
        kept = KeptWarnings()
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = kept.show
            state.run()
        state.observation["warnings"] += kept.lines()
    except CellUnsupported as error:
        state.observation.update(status="unsupported", message=str(error), runs=[])
    except CellError as error:
        state.observation.update(status="exception", message=str(error))
    except SystemExit as error:
        state.observation.update(status="exception", message=f"the callable called sys.exit({error.code!r})")
    except BaseException as error:  # noqa: BLE001 (any failure of the user's code is the cell's verdict)
        full = no_space_left(error)
        if full is not None:
            folder = os.environ.get("TMPDIR") or tempfile.gettempdir()
            raise MachineFailure(f"no space left on device while the py cell {cell['key']} ran "
                                 f"(its temporary folder: {folder}): {str(full).splitlines()[0][:500]}") from None
        where = traceback.extract_tb(error.__traceback__)[-1]
        state.observation.update(status="exception", message=f"{type(error).__name__}: {error} "
                                 f"(at {os.path.basename(where.filename)}:{where.lineno})")
    finally:
        sys.stdout, sys.stderr = sys.__stderr__, sys.__stderr__
        state.tracer.end_run()  # the profiler session of a run that raised
    state.observation.update(hash_facts())
    if state.sources is not None and state.observation["status"] == "ok":
        drawn = state.sources.observation()
        if drawn:
            state.observation["random_sources"] = drawn
    state.tracer.finish(state.observation)
    # What goes to stderr is the log's business (libraries' progress, logging) unless it had to be cut.
    for stream in (printed, complained) if complained.characters > LOG_CHARACTERS else (printed,):
        if stream.note():
            state.observation["warnings"].append(stream.note())
    return state.observation


# Every digest rests on xxhash, which PYTHONPATH or a site-packages folder can replace: before any cell
# it must give the XXH3-128 of the reference implementation (libxxhash 0.8, the C++ side's hash/digest.cc)
# on an empty input and, in two updates, on "repro-audit" followed by bytes 0..255 five times.
XXHASH_VECTORS = ((b"", "99aa06d3014798d86001c324468d497f"),
                  (b"repro-audit" + bytes(range(256)) * 5, "5692eb6cd6ef91833546232d2637108b"))


def xxhash_problem():
    """Why the xxhash imported is not XXH3-128 (naming its file), or ""."""
    for data, expected in XXHASH_VECTORS:
        try:
            state = xxhash.xxh3_128()
            state.update(data[:7])
            state.update(data[7:])
            answers = (state.hexdigest(), xxhash.xxh3_128_hexdigest(data))
        except Exception as error:  # a module without the functions the runner calls
            answers = (f"{type(error).__name__}: {error}",)
        if any(answer != expected for answer in answers):
            return (f"the xxhash module {getattr(xxhash, '__file__', '?')} imported by {sys.executable} gives "
                    f"{answers[0]!r}, not XXH3-128's {expected}, for a {len(data)}-byte test input: the digests "
                    "would not be XXH3; install the xxhash package (pip install xxhash), or remove the module "
                    "that stands in its place (PYTHONPATH)")
    return ""


def interpreter_facts():
    """The interpreter that runs the cells and its torch, for the report's environment: the audit's
    fingerprint describes the libtorch the tool was built with, which need not be this one."""
    import platform
    facts = {"python": f"{sys.executable} ({platform.python_version()})", "python_torch": torch.__version__,
             "python_torch_path": os.path.dirname(os.path.abspath(torch.__file__)),
             "python_xxhash": f"{getattr(xxhash, 'VERSION', '?')} ({os.path.abspath(getattr(xxhash, '__file__', '?'))})"}
    facts["sources"] = {"python": "the py cells' interpreter (sys.executable, platform.python_version())",
                        "python_torch": "torch.__version__ in the py cells' interpreter",
                        "python_torch_path": "torch.__file__ in the py cells' interpreter",
                        "python_xxhash": "xxhash.VERSION and xxhash.__file__ in the py cells' interpreter, "
                                         "checked against XXH3-128 test vectors"}
    # The runner's test switches change what it records (REPRO_AUDIT_TEST_CPU_OPS_AS_KERNELS,
    # REPRO_AUDIT_TEST_HOST_WORD_SUMS): a report made with one set says so.
    switches = sorted(f"{name}={value}" for name, value in os.environ.items() if name in TEST_SWITCHES)
    if switches:
        facts["test_switches"] = ", ".join(switches)
        facts["sources"]["test_switches"] = "the py cells' environment: test switches that change what is recorded"
    return facts


def main():
    problem = xxhash_problem() if xxhash is not None else ""
    if xxhash is None:
        for cell in REQUEST["cells"]:
            emit({"event": "start", "key": cell["key"]})
            emit({"event": "cell", "key": cell["key"], "observation": {
                "process": REQUEST.get("process", 0), "status": "exception", "runs": [],
                "message": f"{sys.executable} lacks the xxhash package (pip install xxhash): it digests outputs"}})
    elif problem:
        emit({"event": "environment_failure", "message": problem})
        return
    else:
        emit({"event": "environment", "environment": interpreter_facts()})
        for cell in REQUEST["cells"]:
            emit({"event": "start", "key": cell["key"]})
            try:
                observation = run_cell(cell)
            except MachineFailure as failure:
                emit({"event": "environment_failure", "message": str(failure)})
                return
            emit({"event": "cell", "key": cell["key"], "observation": observation})
        # What the cells imported that a fork server would import once for the later timing rounds.
        imported = [name for name in FORK_PRELOADABLE if name in sys.modules]
        if imported:
            await_fork_server()
            emit({"event": "imports", "modules": imported, "preloaded": ALONG.preloaded if ALONG else []})
    emit({"event": "done"})


try:
    main()
finally:
    if CACHE:
        shutil.rmtree(CACHE, ignore_errors=True)
# All is said: the interpreter's teardown (torch's takes most of a second) would only hold up the next
# worker, which starts once this one has exited. What the callable started ends with the process group.
for stream in (EVENTS, sys.stdout, sys.stderr):
    stream.flush()
os._exit(0)
