#include "cli/torch_side.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

#include "audit/audit.h"
#include "audit/report_environment.h"
#include "cli/terminal.h"
#include "common/user_error.h"
#include "fingerprint/kept_cuda_facts.h"
#include "supervisor/worker_process.h"
#include "worker/entry_points.h"
#include "worker/environment.h"

namespace repro_audit {

std::string torch_side_program() {
  std::error_code error;
  const auto own = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error)
    throw EnvironmentError(
        fmt::format("cannot find this program's folder (/proc/self/exe: {}), where "
                    "repro-audit-torch is, which this command needs",
                    error.message()));
  return (own.parent_path() / "repro-audit-torch").string();
}

namespace {

std::string cannot_start(const std::string& program, int error) {
  return fmt::format(
      "cannot start {}, which this command needs (it runs everything that loads libtorch; it is "
      "built beside repro-audit): {}",
      program, std::strerror(error));
}

// The program a command is handed to: repro-audit-cpu beside repro-audit-torch where `cpu_side_may_run` and it
// can serve (it is there, no CUDA driver loads, and repro-audit-torch's CUDA facts are kept and still hold),
// else repro-audit-torch (torch_side_program: throws where this program's path cannot be read).
std::string handed_to(bool cpu_side_may_run) {
  const auto torch_side = torch_side_program();
  if (!cpu_side_may_run) return torch_side;
  const auto cpu_side = worker_executable("cpu", {}, torch_side);  // repro-audit-cpu beside it, where built
  return cpu_side != torch_side && !cuda_driver_loadable() && kept_cuda_facts(torch_side, environ) ? cpu_side
                                                                                                   : torch_side;
}

}  // namespace

std::string torch_program() {
  if (torch_side_linked() && !running_as_cpu_side()) return own_executable();
  auto program = torch_side_program();
  if (::access(program.c_str(), X_OK) != 0) throw EnvironmentError(cannot_start(program, errno));
  return program;
}

bool running_as_cpu_side() { return std::filesystem::path(own_executable()).filename() == "repro-audit-cpu"; }

int start_torch_side(char** argv, bool cpu_side_may_run) {
  try {
    const auto program = handed_to(cpu_side_may_run);
    ::execv(program.c_str(), argv);  // returns only on failure
    throw EnvironmentError(cannot_start(program, errno));
  } catch (const EnvironmentError& error) {
    print_message(std::string("repro-audit: ") + error.what());
    return 2;
  }
}

std::string front_end_executable() {
  const std::filesystem::path own = own_executable();
  const auto front_end = own.parent_path() / "repro-audit";
  const bool torch_side = own.filename() == "repro-audit-torch" || own.filename() == "repro-audit-cpu";
  return torch_side && ::access(front_end.c_str(), X_OK) == 0 ? front_end.string() : own.string();
}

nlohmann::json command_fingerprint() {
  if (!torch_side_linked()) return environment_fingerprint();  // the front end's: repro-audit-torch's, asked
  auto fingerprint = environment_fingerprint();
  if (!running_as_cpu_side()) {
    keep_own_cuda_facts(fingerprint);  // for the next command, which repro-audit-cpu may then run
    return fingerprint;
  }
  const auto kept = kept_cuda_facts(torch_side_program(), environ);
  return with_cuda_facts(std::move(fingerprint), kept ? *kept : torch_side_fingerprint());
}

bool cuda_driver_loadable() {
  void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return false;
  ::dlclose(driver);
  return true;
}

nlohmann::json torch_side_fingerprint() {
  const auto program = torch_side_program();
  // Its TMPDIR as this process has it (a worker's would be a folder of its own).
  const char* tmpdir = std::getenv("TMPDIR");
  WorkerProcess process({program, "env"}, {{"TMPDIR", tmpdir ? tmpdir : ""}}, std::string(), temporary_folder());
  std::string text, line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  Worker::ReadStatus status;
  while ((status = process.read_line(line, deadline)) == Worker::ReadStatus::line) text += line + "\n";
  if (status == Worker::ReadStatus::deadline) process.terminate(std::chrono::seconds(1));
  const auto ended = process.wait();
  try {
    if (ended == "exit 0") return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
  }
  throw EnvironmentError(fmt::format("{} env, asked for the environment fingerprint, {}: {}", program,
                                     status == Worker::ReadStatus::deadline ? "took over 120 s" : "ended with " + ended,
                                     process.log_tail(2000)));
}

}  // namespace repro_audit
