// `repro-audit worker`: the process a supervisor starts. It limits its own memory, says its
// environment, reads one request on stdin and runs it, one JSON line per event on stdout.
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "common/user_error.h"
#include "fingerprint/kept_cuda_facts.h"
#include "protocol/fork_rounds.h"
#include "protocol/worker_protocol.h"
#include "python_runner/python_worker.h"
#include "trace/library_verbose_tracer.h"
#include "trace/tracer_factory.h"
#include "worker/entry_points.h"
#include "worker/environment.h"
#include "worker/freed_memory.h"
#include "worker/worker.h"

namespace repro_audit {
namespace {

// A worker limits its own memory, so a runaway probe fails with an allocation error instead of
// pulling the machine into swap or the OOM killer: three quarters of physical memory.
void limit_memory() {
  const auto pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;
  rlimit limit{};
  ::getrlimit(RLIMIT_DATA, &limit);
  const rlim_t wanted = static_cast<rlim_t>(pages) / 4 * 3 * static_cast<rlim_t>(page);
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < wanted) return;
  limit.rlim_cur = wanted;
  ::setrlimit(RLIMIT_DATA, &limit);
}

}  // namespace

std::function<void(const nlohmann::json&)> event_stream() {
  const int events_fd = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  FILE* events = ::fdopen(events_fd, "w");
  return [events](const nlohmann::json& event) {
    const auto line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(line.data(), 1, line.size(), events);
    std::fflush(events);
  };
}

bool torch_side_linked() { return true; }

int worker_main() {
  // The supervisor decides when a worker stops: Ctrl-C reaches the whole process group, and the
  // supervisor ends its workers itself. If the supervisor dies (kill -9), its workers die with it.
  ::signal(SIGINT, SIG_IGN);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 3;  // the supervisor was gone before the line above took effect
  limit_memory();
  keep_freed_memory();
  // A fork server never returns here; a process it forked goes on as a later round's worker, with that
  // worker's streams, environment and process group (protocol/fork_rounds.h).
  (void)serve_forks();
  const auto emit = event_stream();
  // Before the request: a worker started ahead of it says so that it has loaded.
  const auto fingerprint = environment_fingerprint();
  emit(environment_event(fingerprint));
  // Where no CUDA driver loads, the CUDA facts it just read are the libraries' alone: kept for the next
  // audit, which need not start a worker with the whole of libtorch for them (fingerprint/kept_cuda_facts.h).
  keep_own_cuda_facts(fingerprint);
  nlohmann::json request_json;
  try {
    request_json = nlohmann::json::parse(std::cin);
  } catch (const nlohmann::json::exception& error) {
    std::cerr << "worker: bad request: " << error.what() << "\n";
    return 2;
  }
  WorkerRequest request;
  try {
    request = request_from_json(request_json);
  } catch (const nlohmann::json::exception& error) {
    std::cerr << "worker: bad request: " << error.what() << "\n";
    return 2;
  }
  if (!python_of_batch(request).empty()) {  // py cells run in their interpreter, started in this worker's place
    std::cerr << "worker: py cells reached a worker that is not their interpreter\n";
    return 2;
  }
  // MKL's first call in verbose mode prints its banner and, where its clock could not be preset
  // (trace/mkl_clock.h), measures the clock: a busy loop until time() ticks, 0-1 s of a core. A cell's
  // warm-up run is traced and untimed, so the first cell that calls MKL pays it there; a worker whose
  // cells call none never does. Paid here, before any run, where no warm-up run would take it, or where
  // a cell's --budget share counts its warm-up runs' time.
  const bool budgeted =
      std::any_of(request.cells.begin(), request.cells.end(), [](const Cell& cell) { return cell.budget_seconds > 0; });
  if (request.warmup == 0 || budgeted) warm_up_library_verbose();
  const auto tracer = make_tracer(request.device);
  const auto timer = make_run_timer(request.device);
  try {
    run_worker(request, *tracer, *timer, emit, true);
  } catch (const EnvironmentError& error) {
    // Said to the supervisor already. No destructors: a collective's rendezvous thread that was given
    // up on may still be inside c10d (runners/collective_cell.cc).
    std::cerr << "worker: " << error.what() << "\n";
    std::cerr.flush();
    std::_Exit(2);
  }
  return 0;
}

}  // namespace repro_audit
