"""repro-audit's runner for `py` cells: the user's Python callable, run by the user's interpreter.

The runner is eight files, concatenated in this order into one script (CMakeLists.txt): this one (the
worker's start and protocol, and the fork server of later timing rounds), python_digests.py,
python_recorders.py, python_subject.py, python_randomness.py, python_loader.py, python_kernels.py and
python_cell.py (which runs main()).

The supervisor starts the user's interpreter with this script as a worker (stdin holds the request,
stdout is the event pipe, stderr the worker's log): the script imports torch first and says it has
loaded, so a worker started ahead of its request (supervisor/worker_launcher.h) has paid for the import
before any cell runs. It speaks the worker protocol (protocol/worker_protocol.h): a start
event and a cell event per cell, then done. It runs only the callable a cell names by its module path;
it never reads code or values from a report.
"""
import sys

# `python -c` puts the current folder first on sys.path: a json.py or xxhash.py where the user stands
# would be imported in place of the runner's own. The callable's folder is put there by name
# (python_subject.py, import_callable), never the current one by accident.
if sys.path and sys.path[0] == "":
    del sys.path[0]

import ctypes  # noqa: E402
import errno  # noqa: E402
import importlib.abc  # noqa: E402
import importlib.machinery  # noqa: E402
import inspect  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

# What `repro-audit worker` does first (worker/worker_main.cc): the supervisor decides when a worker
# stops (a Ctrl-C reaches it alone, and it ends its workers), a worker dies with the supervisor (kill
# -9), and a runaway callable fails with an allocation error, not by pulling the machine into swap or
# the OOM killer: at most three quarters of physical memory.
signal.signal(signal.SIGINT, signal.SIG_IGN)
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() == 1:  # the supervisor was gone before the line above took effect
    os._exit(3)
try:
    _MEMORY = os.sysconf("SC_PHYS_PAGES") // 4 * 3 * os.sysconf("SC_PAGE_SIZE")
    _HARD = resource.getrlimit(resource.RLIMIT_DATA)[1]
    if _MEMORY > 0 and (_HARD == resource.RLIM_INFINITY or _HARD >= _MEMORY):
        resource.setrlimit(resource.RLIMIT_DATA, (_MEMORY, _HARD))
except (OSError, ValueError):
    pass
# What a run frees stays with the worker for the next run (worker/freed_memory.h), unless GLIBC_TUNABLES
# names glibc.malloc: mallopt M_MMAP_THRESHOLD (-3) 32 MiB, M_TRIM_THRESHOLD (-1) at its largest.
if "glibc.malloc." not in os.environ.get("GLIBC_TUNABLES", ""):
    _LIBC = ctypes.CDLL(None)
    if hasattr(_LIBC, "mallopt"):
        _LIBC.mallopt(-3, 32 << 20)
        _LIBC.mallopt(-1, 2**31 - 1)

# A later timing round of py cells on the CPU runs in a process forked from an interpreter that has
# imported torch already (supervisor/process_launcher.h): this one only hands its stdin, event pipe and
# log to that fork server, with its environment, and ends as the forked process ends. The process it
# stands for joins its process group, so ending this worker's group ends it too. A server that cannot be
# reached: this process loads torch and runs the round itself.
FORK_PRELOADABLE = ("torch._dynamo",)  # what a fork server imports before forking, when a round needs it


def run_forked(server):
    import socket
    preload = [name for name in os.environ.pop("REPRO_AUDIT_FORK_PRELOAD", "").split(",") if name]
    try:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(server)
        payload = json.dumps({"environment": dict(os.environ), "group": os.getpgrp(), "preload": preload})
        socket.send_fds(connection, [payload.encode()], [0, 1, 2])
        connection.shutdown(socket.SHUT_WR)
    except (OSError, AttributeError):  # AttributeError: a Python before 3.9 (no send_fds)
        return
    reply = b""
    while True:
        try:
            chunk = connection.recv(4096)
        except InterruptedError:
            continue
        except OSError:
            break
        if not chunk:
            break
        reply += chunk
    try:
        status = int(json.loads(reply)["status"])
    except (ValueError, KeyError, TypeError):
        sys.stderr.write("repro-audit: the fork server ended before the process it forked for this worker\n")
        os._exit(70)
    if os.WIFSIGNALED(status):  # ended as the forked process did, so the supervisor reads the same signal
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70)


if os.environ.get("REPRO_AUDIT_FORK_CLIENT"):
    run_forked(os.environ.pop("REPRO_AUDIT_FORK_CLIENT"))
SERVES_FORKS = os.environ.pop("REPRO_AUDIT_FORK_SERVE", "") == "1"
FORK_SERVER = os.environ.pop("REPRO_AUDIT_FORK_SERVER", "")  # a first round's worker: its rounds' server


class ForkServerImportsAlong(importlib.abc.MetaPathFinder):
    """A first round's worker whose later rounds a fork server will fork: when the cells' code starts
    importing a module that server imports before it forks (torch._dynamo, which an optimizer's
    constructor imports: a second or more), the worker asks the server to import it now, beside its own
    import, instead of when the second round asks for a process, which then waited for it. The worker
    waits for the server's answer before any run it times (await_fork_server): the server's import never
    shares the machine with a timing. A server not listening yet is asked once more there; one that
    cannot be reached is not asked: the round's request makes it import the module, as before."""

    def __init__(self, server):
        self.server = server
        self.wanted = list(FORK_PRELOADABLE)
        self.pending = []  # to ask the server
        self.connection = None  # asked, not yet answered
        self.preloaded = []  # what the server answered it has imported

    def find_spec(self, name, path=None, target=None):
        if name in self.wanted:
            self.wanted.remove(name)
            self.pending.append(name)
            if self.connection is None:
                self.ask()
        return None  # the import itself goes on as it would

    def ask(self):
        try:
            connection = SOCKETS.socket(SOCKETS.AF_UNIX, SOCKETS.SOCK_STREAM)
            connection.connect(self.server)
            connection.sendall(json.dumps({"preload": self.pending}).encode())
            connection.shutdown(SOCKETS.SHUT_WR)
        except OSError:  # not listening yet (asked again before a timed run), or gone
            return
        self.connection, self.pending = connection, []

    def wait(self):
        while self.pending or self.connection is not None:
            if self.connection is None:
                self.ask()
                if self.connection is None:
                    self.pending = []
                    return
            reply = b""
            try:
                self.connection.settimeout(120)
                while True:
                    chunk = self.connection.recv(4096)
                    if not chunk:
                        break
                    reply += chunk
            except OSError:
                pass
            self.connection.close()
            self.connection = None
            try:
                imported = json.loads(reply)["imported"]
            except (ValueError, KeyError, TypeError):
                imported = []
            self.preloaded += [name for name in imported if name in FORK_PRELOADABLE and name not in self.preloaded]


ALONG = None
if FORK_SERVER and not SERVES_FORKS:
    import socket as SOCKETS
    ALONG = ForkServerImportsAlong(FORK_SERVER)
    sys.meta_path.insert(0, ALONG)


def await_fork_server():
    """Before a timed run: the fork server's import asked for by this worker is over."""
    if ALONG is not None:
        ALONG.wait()


def import_preloadable(names):
    """A fork server's imports ahead: those of `names` it may import and has not."""
    for name in names if isinstance(names, list) else []:
        if name in FORK_PRELOADABLE and name not in sys.modules:
            try:
                importlib.import_module(name)
            except Exception:  # the round meets the same error where its callable imports it
                pass


def preload_ahead(connection, message):
    """A fork server, asked by a first round's worker to import modules now: imports those it may import
    ahead, then answers with what it has imported."""
    try:
        import_preloadable(json.loads(message)["preload"])
    except (ValueError, KeyError, TypeError):
        pass
    try:
        connection.sendall(json.dumps({"imported": [name for name in FORK_PRELOADABLE if name in sys.modules]})
                           .encode())
    except OSError:  # the worker ended
        pass
    connection.close()
EVENTS = None
WORD_SUMS_LIBRARY = ""
OWN_FOLDER = None
CACHE = None
USERS_CACHE = None  # the user's TORCHINDUCTOR_CACHE_DIR, where their own processes keep Inductor's caches


def take_environment():
    """What the worker takes from its environment: run at its start, and again in a process forked for a
    later timing round, which takes its worker's."""
    global EVENTS, WORD_SUMS_LIBRARY, OWN_FOLDER, CACHE, USERS_CACHE
    EVENTS = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything written to fd 1 (C code, subprocesses) goes to the worker's log, not the pipe
    # Set by the supervisor, whatever the environment held (python_runner/python_worker.cc).
    WORD_SUMS_LIBRARY = os.environ.pop("REPRO_AUDIT_WORD_SUMS_LIBRARY", "")
    # The worker's TMPDIR is a folder of its own, removed when it ends however it ends
    # (supervisor/worker_folder.h); REPRO_AUDIT_TMPDIR holds the user's. The callable and torch get the
    # user's back: torch keeps caches there meant to outlive a process (Inductor's precompiled headers).
    OWN_FOLDER = None
    if "REPRO_AUDIT_TMPDIR" in os.environ:
        OWN_FOLDER = os.environ.get("TMPDIR")
        if os.environ["REPRO_AUDIT_TMPDIR"]:
            os.environ["TMPDIR"] = os.environ["REPRO_AUDIT_TMPDIR"]
        else:
            os.environ.pop("TMPDIR", None)
        tempfile.tempdir = None
    # Before torch._dynamo is imported, which fixes its cache's folder from Inductor's (below). The batch's
    # --compile-cache comes in the environment the supervisor gave the worker (supervisor/batch_runner.cc:
    # set, or removed), since the request is read only once torch is imported.
    CACHE = None
    USERS_CACHE = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not os.environ.get("REPRO_AUDIT_COMPILE_CACHE"):
        # A process compiles afresh: differences between two compiles are cross-process divergence. In
        # the worker's own folder: a callable that crashes or hangs leaves nothing behind.
        CACHE = tempfile.mkdtemp(prefix="repro-audit-inductor-", dir=OWN_FOLDER)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = CACHE
        os.environ["TRITON_CACHE_DIR"] = os.path.join(CACHE, "triton")
    else:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.environ["REPRO_AUDIT_COMPILE_CACHE"]
    os.environ.pop("REPRO_AUDIT_COMPILE_CACHE", None)


take_environment()


def check_vector_isas():
    """Inductor's checks of which vector instructions the compiler and this CPU support (about ten small
    compiles and a process that loads each, seconds in all), taken where the user's own processes keep
    them: their TORCHINDUCTOR_CACHE_DIR, or Inductor's default folder. They are facts of the machine and
    its compiler that every process of the user's shares, not a compile of theirs; in the cell's own
    cache (a fresh folder each process) they were made again in every process. Every graph and kernel
    still compiles in the cell's cache (that folder, or --compile-cache's). Inductor keeps the answer for
    the process (cpu_vec_isa.valid_vec_isa_list), so a later cell's call costs nothing; where it cannot be
    had here, the compile asks again, as before."""
    own = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    try:
        import torch._inductor.codecache  # noqa: F401  (imported before the folder is switched)
        from torch._inductor import cpu_vec_isa
        from torch._inductor.runtime.cache_dir_utils import default_cache_dir
        users = os.path.abspath(USERS_CACHE or default_cache_dir())
        if not own or os.path.abspath(own) == users:
            return
        os.makedirs(users, exist_ok=True)
    except Exception:
        return
    if not os.access(users, os.W_OK | os.X_OK):  # a check that cannot be written would say "unsupported"
        return
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = users
    try:
        cpu_vec_isa.pick_vec_isa()
    except Exception:
        pass
    finally:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = own


def emit(event):
    EVENTS.write(json.dumps(event) + "\n")
    EVENTS.flush()


import re  # noqa: E402
import struct  # noqa: E402

try:
    import torch  # noqa: E402
except BaseException as failure:  # a torch that is installed and breaks on import: no cell can run here
    # The interpreter check only found torch (it does not import it: each worker does, once); a torch that
    # cannot be imported fails the machine, as a missing interpreter does, never a cell.
    emit({"event": "environment_failure",
          "message": f"{sys.executable}: this Python cannot import torch: {type(failure).__name__}: {failure}"})
    raise SystemExit(1)
# libtorch's once-per-process warnings (sdpa's backward under warn-only, a deprecation) reach every cell,
# whichever cells this worker ran before it (the C++ worker does the same: worker/worker.cc).
torch.set_warn_always(True)
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils._pytree import tree_flatten  # noqa: E402

try:
    import xxhash
except ImportError:
    xxhash = None
if os.environ.pop("REPRO_AUDIT_WORKER_COMPILES", ""):
    try:
        # Imported by torch.compile (most of a second): here, while the worker loads beside the others
        # started ahead, rather than inside the first cell that compiles. A worker none of whose cells
        # compiles never imports it (python_subject.py's use_deterministic_algorithms).
        import torch._dynamo  # noqa: E402,F401
    except Exception:  # a step that needs it meets the same error as its own, where it is reported
        pass



def serve_forks():
    """A fork server's loop (run_forked above is its client): forks a process for each worker that asks,
    which returns from here as that worker, once torch is imported; this process only forks, and never
    runs an op (OpenMP's threads, CUDA and the like would not survive a fork). Returns in the forked
    processes only."""
    import socket
    path = os.path.join(OWN_FOLDER or tempfile.gettempdir(), "fork.sock")
    try:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)  # in the worker's own folder, which only this user can enter
        server.listen(8)
    except OSError as error:  # a path too long for a socket: the rounds' workers load torch themselves
        emit({"event": "loaded", "fork_error": str(error)})
        os._exit(0)
    emit({"event": "loaded", "fork_socket": path})
    me = os.getpid()
    credentials = struct.Struct("3i")
    while True:
        try:
            connection, _ = server.accept()
            _, uid, _ = credentials.unpack(connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                                 credentials.size))
            message, descriptors, _, _ = socket.recv_fds(connection, 1 << 16, 3)
        except OSError:
            continue
        if uid == os.getuid() and not descriptors:  # a first round's worker, asking for an import
            preload_ahead(connection, message)
            continue
        while descriptors and uid == os.getuid():
            chunk = connection.recv(1 << 16)
            if not chunk:
                break
            message += chunk
        try:
            asked = json.loads(message)
            environment, group = dict(asked["environment"]), int(asked["group"])
        except (ValueError, KeyError, TypeError):
            asked = None
        if uid != os.getuid() or len(descriptors) != 3 or asked is None:
            for descriptor in descriptors:
                os.close(descriptor)
            connection.close()
            continue
        import_preloadable(asked.get("preload", []))
        child = os.fork()
        if child == 0:
            server.close()
            connection.close()
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # dies with the server
            if os.getppid() != me:
                os._exit(3)
            os.setpgid(0, group)  # the worker's group: ending the worker's group ends this process
            for target, descriptor in enumerate(descriptors):
                os.dup2(descriptor, target)
                os.close(descriptor)
            EVENTS.close()
            os.environ.clear()
            os.environ.update(environment)
            take_environment()
            return
        for descriptor in descriptors:
            os.close(descriptor)
        while True:
            try:
                _, status = os.waitpid(child, 0)
                break
            except InterruptedError:
                continue
        try:
            connection.sendall(json.dumps({"status": status}).encode())
        except OSError:  # the worker was ended (a time limit): its group, the forked process with it
            pass
        connection.close()


if SERVES_FORKS:
    serve_forks()
emit({"event": "loaded"})
REQUEST = json.load(sys.stdin)
