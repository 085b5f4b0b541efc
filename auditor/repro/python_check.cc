#include "repro/python_check.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>

#include "common/user_error.h"
#include "supervisor/worker_process.h"

namespace repro_audit {
namespace {

constexpr const char* kQuestion =
    "import json, sys, torch; print(json.dumps({'torch': torch.__version__, 'python': sys.version.split()[0]}))";

// posix_spawn does not search PATH: a bare name (`--python python3`) is looked up here as a shell
// would; "" when it is on no folder of PATH.
std::string found_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view folders = path ? path : "";
  while (!folders.empty()) {
    const auto colon = folders.find(':');
    const auto folder = folders.substr(0, colon);
    const auto candidate = (folder.empty() ? std::string(".") : std::string(folder)) + "/" + name;
    struct stat status {};
    if (::stat(candidate.c_str(), &status) == 0 && !S_ISDIR(status.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string_view::npos) break;
    folders.remove_prefix(colon + 1);
  }
  return "";
}

// Why `python` cannot be started, told apart before trying (posix_spawn's errno says EACCES alike
// for a folder and a file without its execute bit); "" when it looks startable.
std::string start_problem(const std::string& given, const std::string& python) {
  if (python.empty()) return fmt::format("{}: no such program on PATH; give the interpreter's path", given);
  struct stat status {};
  if (::stat(python.c_str(), &status) != 0)
    return errno == ENOENT || errno == ENOTDIR ? fmt::format("{}: no such file", python)
                                               : fmt::format("{} cannot be started: {}", python, std::strerror(errno));
  if (S_ISDIR(status.st_mode)) return fmt::format("{} is a folder, not a Python interpreter", python);
  if (::access(python.c_str(), X_OK) != 0)
    return fmt::format("{} is not executable ({})", python, std::strerror(errno));
  return "";
}

}  // namespace

PythonCheck check_python(const std::string& python, const std::string& temporary_folder,
                         std::chrono::seconds time_limit) {
  PythonCheck check;
  check.python = found_on_path(python);
  check.problem = start_problem(python, check.python);
  if (!check.problem.empty()) return check;
  std::unique_ptr<WorkerProcess> process;
  try {
    process = std::make_unique<WorkerProcess>(std::vector<std::string>{check.python, "-c", kQuestion},
                                              std::map<std::string, std::string>{}, std::string(), temporary_folder);
  } catch (const std::exception& error) {
    // "cannot start PATH: Exec format error" (a file that is no program and has no #! line): the
    // interpreter's problem. Anything else (the temporary folder) keeps its own message.
    std::string reason = error.what();
    const auto prefix = fmt::format("cannot start {}: ", check.python);
    if (reason.rfind(prefix, 0) != 0) {
      if (dynamic_cast<const UserError*>(&error)) throw;
    } else {
      reason.erase(0, prefix.size());
    }
    check.problem = fmt::format("{} cannot be started: {}", check.python, reason);
    return check;
  }
  const auto deadline = std::chrono::steady_clock::now() + time_limit;
  std::string line;
  while (check.torch_version.empty()) {
    const auto status = process->read_line(line, deadline);
    if (status == Worker::ReadStatus::line) {
      const auto answer = nlohmann::json::parse(line, nullptr, false);
      if (answer.is_object() && answer.value("torch", nlohmann::json()).is_string()) {
        check.torch_version = answer.at("torch").get<std::string>();
        check.python_version = answer.value("python", "");
      }
      continue;
    }
    if (status == Worker::ReadStatus::deadline) {
      process->terminate(std::chrono::seconds(3));
      check.problem = fmt::format(
          "{} did not answer within {} s (python -c 'import torch'); it was stopped "
          "(REPRO_AUDIT_PYTHON_CHECK_SECONDS sets this limit)",
          check.python, time_limit.count());
      return check;
    }
    break;  // the output ended
  }
  if (!check.torch_version.empty()) return check;  // the answer is all it owes: its exit is not waited for
  const auto ended = process->wait();
  const auto tail = process->log_tail(600);
  // json and sys come with every Python: an import error here is torch's (missing, or a library of its).
  const auto newline = tail.find_last_of('\n');
  const auto last_line = newline == std::string::npos ? tail : tail.substr(newline + 1);
  if (last_line.rfind("ModuleNotFoundError", 0) == 0 || last_line.rfind("ImportError", 0) == 0)
    check.problem = fmt::format("{}: this Python cannot import torch: {}", check.python, last_line);
  else
    check.problem =
        fmt::format("{} ended ({}) without answering: {}", check.python, ended, tail.empty() ? "no output" : tail);
  return check;
}

}  // namespace repro_audit
