#pragma once
// A later timing round's worker of C++ cells on the CPU as a process forked from a fork server, not a
// fresh program that loads libtorch again (0.3-0.4 s of CPU) for a round's few samples: one server per
// batch environment, a worker of that environment that has loaded libtorch and only forks; the round's
// worker is `repro-audit fork-client` (the front end, which loads no libtorch), which hands the server its
// standard streams, environment and process group, and ends as the forked process ended, so to the
// supervisor it is a worker like any other (supervisor/process_launcher.h). The server never runs an op
// (OpenMP's threads do not survive a fork) and starts no thread; what a fork shares with it (its memory
// layout up to the fork) a timing round does not judge. The protocol is the py runner's
// (python_runner.py, serve_forks and run_forked): one connection per round's worker, its descriptors 0, 1
// and 2 with a JSON message {"environment": {...}, "group": N}, answered {"status": wait status} once the
// forked process ended; only a peer of the same user is served.
namespace repro_audit {

// In a worker whose environment has kForkServe: listens on <TMPDIR>/fork.sock, says so on stdout
// ({"event": "loaded", "fork_socket": path}, or "fork_error" and the process exits 0 where no socket can
// be made there: the rounds' workers then load libtorch themselves), and forks for each worker that asks.
// Returns false at once elsewhere; true in each forked process, which goes on as that worker.
bool serve_forks();

// `repro-audit fork-client`: the round's worker, with the server's socket in kForkClient.
int fork_client_main();

}  // namespace repro_audit
