#include "repro/script_host.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "supervisor/worker_process.h"

namespace repro_audit {
namespace {

// The marker the host prints after each script's output, with the child's exit status.
constexpr std::string_view kEnd = "@@repro-audit script ended ";

// The host. Every request comes at once on stdin (a JSON array per line: the script, then its
// arguments). The child dies with the host (PR_SET_PDEATHSIG), and a TERM to the host ends the
// child first, so a hung script leaves nothing behind.
constexpr const char* kHost = R"PY(import ctypes, json, os, runpy, signal, sys, traceback
import torch  # once, for every child
try:  # torch.use_deterministic_algorithms imports Inductor (1.5 s) to set its deterministic mode
    import torch._inductor
except Exception:
    pass

requests = [json.loads(line) for line in sys.stdin.read().splitlines() if line.strip()]
child = 0


def end(signum, frame):
    if child:
        os.kill(child, signal.SIGKILL)
    os._exit(128 + signum)


signal.signal(signal.SIGTERM, end)
for argv in requests:
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        status = 0
        try:
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
            runpy.run_path(argv[0], run_name="__main__")
        except SystemExit as exit:
            status = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
        except BaseException:
            traceback.print_exc()
            status = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    _, status = os.waitpid(child, 0)
    child = 0
    print("\n@@repro-audit script ended " + str(os.waitstatus_to_exitcode(status)), flush=True)
sys.stderr.flush()
os._exit(0)  # every script has ended: torch's and Inductor's teardown (1.5-2 s) would only be waited for
)PY";

}  // namespace

std::vector<ScriptRun> run_in_host(const std::vector<std::vector<std::string>>& scripts,
                                   const ScriptHostOptions& options) {
  std::vector<ScriptRun> runs(scripts.size());
  std::size_t next = 0;  // the script the host runs now
  const auto fail_rest = [&](const std::string& reason, bool stopped) {
    for (; next < scripts.size(); ++next) runs[next] = {"", reason, false, stopped};
  };
  try {
    write_file_atomically(options.host_path, kHost);
    std::string input;
    for (const auto& argv : scripts) input += nlohmann::json(argv).dump() + "\n";
    WorkerProcess host({options.python, options.host_path}, {}, input, options.temporary_folder);
    auto deadline = std::chrono::steady_clock::now() + options.script_time_limit;
    std::string line;
    while (next < scripts.size()) {
      auto& run = runs[next];
      // Read a second at a time, so that a stop asked for is heeded within a second.
      const auto slice = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(1));
      const auto status = host.read_line(line, slice);
      if (status == Worker::ReadStatus::line && !line.starts_with(kEnd)) {
        if (!line.empty()) run.last_line = line;
        continue;
      }
      if (status == Worker::ReadStatus::line) {
        if (run.last_line.empty())
          run.failure = fmt::format("{} printed nothing (exit {}): {}", scripts[next][0], line.substr(kEnd.size()),
                                    host.log_tail(600));
        ++next;
        // The next script is not started when there is a reason (another host's script hung, a stop).
        const auto reason = next < scripts.size() && options.not_run_reason ? options.not_run_reason() : "";
        if (!reason.empty()) {
          host.terminate(std::chrono::seconds(3));
          fail_rest(reason, true);
        }
        deadline = std::chrono::steady_clock::now() + options.script_time_limit;
        continue;
      }
      if (status == Worker::ReadStatus::end_of_output) {
        const auto ended = host.wait();
        fail_rest(fmt::format("the Python that runs the scripts ended ({}) before {} did: {}", ended, scripts[next][0],
                              host.log_tail(600)),
                  false);
        break;
      }
      run.stopped = options.stop_requested && options.stop_requested();
      run.timed_out = std::chrono::steady_clock::now() >= deadline;
      if (!run.stopped && !run.timed_out) continue;
      host.terminate(std::chrono::seconds(3));
      run.failure = run.timed_out ? fmt::format("{} did not answer within {} s; it was stopped", scripts[next][0],
                                                options.script_time_limit.count())
                                  : fmt::format("{} was stopped: a stop was asked for", scripts[next][0]);
      if (run.timed_out && options.on_timeout) options.on_timeout(next);
      ++next;
      fail_rest(options.not_run_reason ? options.not_run_reason() : "not run", true);
    }
    host.wait();
  } catch (const std::exception& error) {
    for (; next < scripts.size(); ++next)
      runs[next] = {"", fmt::format("{} did not run: {}", scripts[next][0], error.what())};
  }
  for (auto& run : runs)
    if (!run.failure.empty()) run.last_line.clear();
  return runs;
}

}  // namespace repro_audit
