"""The kernels a py cell's digested runs launched, recorded as the C++ workers record them (trace/tracer.h):
each kernel's name, grid and block, in launch order, at most MAX_KERNELS_PER_RUN a run, the sequence
digested as kernel_sequence_digest does, taken from torch.profiler's Kineto results (CUDA activity:
CUPTI's kernel records). Concatenated after python_subject.py, before python_cell.py (CMakeLists.txt)."""

MAX_KERNELS_PER_RUN = 1000  # trace/tracer.h's kMaxKernelsPerRun
# A test switch, inert unless set to 1: a CPU cell's ATen ops, as the profiler's CPU activity records
# them, stand in for kernels, so that the whole path from profiler events to the report's kernel records
# runs where there is no GPU. Only tests/cli/python_digest_test.cc sets it; an audit never should (a CPU cell's
# ops are what its per-op records name).
CPU_OPS_AS_KERNELS = os.environ.get("REPRO_AUDIT_TEST_CPU_OPS_AS_KERNELS") == "1"


def shape_text(value):
    """Kineto's [x, y, z] (metadata or Chrome trace) as "x,y,z"; "" where it is not one."""
    if isinstance(value, (list, tuple)) and len(value) == 3 and all(isinstance(v, int) for v in value):
        return ",".join(str(v) for v in value)
    return ""


def launch_shape(event, key):
    """A kernel event's "grid" or "block" as "x,y,z" (CUPTI's dimensions, as the C++ tracer writes them);
    "" where the event has none (a CPU op). Kineto gives them in the event's metadata, a JSON fragment
    (`"grid": [1, 128, 1], "block": [512, 1, 1], ...`, as in its Chrome trace's "args"); torch 2.14 also
    has them typed."""
    value = None
    text = event.metadata_json()
    if text:
        try:
            value = json.loads("{" + text + "}").get(key)
        except ValueError:
            value = None
    if value is None and hasattr(event, "typed_metadata"):
        value = (event.typed_metadata() or {}).get(key)
    return shape_text(value)


def is_device_kernel(event):
    """A kernel the GPU ran: not a copy, a fill or a synchronization, which CUPTI records beside kernels
    and the C++ tracer leaves out. torch 2.14 names the activity; a torch that does not but gives events
    their metadata has a grid on kernels only. (A torch whose events carry no metadata, as 2.11's, is
    read from its trace instead: trace_kernel_records.)"""
    if event.device_type() != torch._C._autograd.DeviceType.CUDA:
        return False
    if hasattr(event, "activity_type") and event.activity_type() == "kernel":
        return True
    return launch_shape(event, "grid") != ""


def is_aten_op(event):
    """An ATen op the CPU ran (the test switch's "kernels"): what the C++ tracer records on the CPU too."""
    return event.device_type() == torch._C._autograd.DeviceType.CPU and event.name().startswith("aten::")


def kernel_records(events, counts):
    """The events that `counts` takes for kernels, as the report's kernel records, in launch order: by
    correlation id, which CUPTI and the profiler number launches and ops by as they start (the kernels of
    one CUDA graph's launch share their launch's: they go in the order the GPU started them)."""
    chosen = sorted((event for event in events if counts(event)), key=lambda e: (e.correlation_id(), e.start_ns()))
    records = []
    for event in chosen[:MAX_KERNELS_PER_RUN]:
        record = {"name": event.name()}
        grid, block = launch_shape(event, "grid"), launch_shape(event, "block")
        if grid:
            record["grid"], record["block"] = grid, block
        records.append(record)
    return records


def trace_kernel_records(result):
    """The kernels of a profiler session from its Chrome trace: torch before 2.14 gives a device event
    neither its kind nor its grid (Kineto's device events reach Python without their metadata; seen on
    torch 2.11 on an H200: every kernel was left out), while the trace it saves holds both
    ("cat": "kernel", "args": grid, block, correlation). In launch order, as kernel_records."""
    handle, path = tempfile.mkstemp(prefix="repro-audit-trace-", suffix=".json")
    os.close(handle)
    try:
        result.save(path)
        with open(path, encoding="utf-8") as file:
            trace = json.load(file)
    finally:
        os.unlink(path)
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else []
    kernels = [event for event in events if isinstance(event, dict) and event.get("ph") == "X"
               and str(event.get("cat", "")).lower() == "kernel"]

    def order(event):
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        correlation = args.get("correlation", 0)
        return (correlation if isinstance(correlation, int) else 0, event.get("ts", 0))

    records = []
    for event in sorted(kernels, key=order)[:MAX_KERNELS_PER_RUN]:
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        record = {"name": str(event.get("name", ""))}
        grid, block = shape_text(args.get("grid")), shape_text(args.get("block"))
        if grid and block:
            record["grid"], record["block"] = grid, block
        records.append(record)
    return records


def kernel_sequence_digest(kernels):
    """trace/kernel_sequence.cc's digest: names, grids and blocks in order, so that runs of py cells and
    C++ cells compare alike."""
    return digest_text("".join(f"{k['name']}\0{k.get('grid', '')}\0{k.get('block', '')}\n" for k in kernels))


class KernelTracer:
    """Traces a cell's digested runs, one profiler session a run: begin_run before the run (after the device
    is synchronized, before its timed region), end_run after it (the device synchronized again). Warm-up,
    timing-only and per-op runs are not traced. `unavailable` says why nothing is traced, as trace_unavailable."""

    def __init__(self, device):
        self.unavailable, self.tracing, self.sequences, self.from_trace = "", False, [], False
        if CPU_OPS_AS_KERNELS and device == "cpu":
            activity, self.counts = "CPU", is_aten_op
        elif not device.startswith("cuda"):
            self.unavailable = (f"the Python runner traces kernels on CUDA only (torch.profiler's CUDA activity), "
                                f"and this cell runs on {device}: its per-op records name the ops")
            return
        else:
            activity, self.counts = "CUDA", is_device_kernel
        # Where the profiler's events carry no kernel metadata, the session's trace is read instead.
        self.from_trace = activity == "CUDA" and not hasattr(torch._C._autograd._KinetoEvent, "typed_metadata")
        try:
            from torch._C._profiler import ProfilerActivity, ProfilerConfig, ProfilerState, _ExperimentalConfig
            from torch.autograd import _disable_profiler, _enable_profiler, _prepare_profiler
            supported = torch.autograd._supported_activities()
        except (ImportError, AttributeError) as error:
            self.unavailable = f"torch {torch.__version__} has no Kineto profiler to trace kernels with ({error})"
            return
        if getattr(ProfilerActivity, activity) not in supported:
            names = ", ".join(sorted(a.name for a in supported)) or "none"
            self.unavailable = (f"torch.profiler cannot trace {activity} activity in this interpreter (torch "
                                f"{torch.__version__}: no CUDA device it can use, or Kineto built without CUPTI); "
                                f"its supported activities: {names}")
            return
        self.activities = {getattr(ProfilerActivity, activity)}
        # Positional: the keyword names differ between torch versions. No shapes, memory, stacks, flops
        # or modules: the least the profiler can record.
        self.config = lambda: ProfilerConfig(ProfilerState.KINETO, False, False, False, False, False,
                                             _ExperimentalConfig())
        self.prepare, self.enable, self.disable = _prepare_profiler, _enable_profiler, _disable_profiler

    def fail(self, error):
        self.unavailable = f"torch.profiler failed, so no run of this cell is traced: {type(error).__name__}: {error}"

    def begin_run(self):
        """The low-level calls torch.profiler.profile makes, without its Python-side processing of every event
        and its warnings (the callable's warnings are the cell's, the profiler's are not)."""
        if self.unavailable:
            return
        try:
            if torch.autograd._profiler_enabled():
                self.unavailable = ("the callable's own torch.profiler session was running, which a session of "
                                    "the runner's would cancel: no run of this cell is traced")
                return
            self.prepare(self.config(), self.activities)
            self.enable(self.config(), self.activities)
            self.tracing = True
        except Exception as error:  # noqa: BLE001 (another profiler running, CUPTI refused: said, not fatal)
            self.fail(error)

    def end_run(self):
        """The kernels of the run since begin_run; None where it was not traced. Never raises: it also ends
        the session of a run that raised."""
        if not self.tracing:
            return None
        self.tracing = False
        try:
            result = self.disable()
            if self.from_trace:
                return trace_kernel_records(result)
            return kernel_records(result.events(), self.counts)
        except Exception as error:  # noqa: BLE001
            self.fail(error)
            return None

    def keep(self, kernels):
        """A traced run's kernel digest; its sequence kept once per distinct digest, as the C++ worker does."""
        value = kernel_sequence_digest(kernels)
        if all(sequence["digest"] != value for sequence in self.sequences):
            self.sequences.append({"digest": value, "kernels": kernels})
        return value

    def finish(self, observation):
        """The observation's kernel fields: every traced run's sequence, or why none is traced (the runs
        traced before the profiler failed then lose their digests: a cell's runs are traced all or none)."""
        if self.unavailable:
            observation["trace_unavailable"] = self.unavailable
            for run in observation["runs"]:
                run.pop("kernel_digest", None)
        elif self.sequences:
            observation["kernel_sequences"] = self.sequences
