#include "repro/python_check.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/program_path.h"
#include "common/user_error.h"
#include "supervisor/worker_process.h"

namespace repro_audit {
namespace {

// The question: the versions, after importing torch and `modules`. Not from the current folder, which
// `python -c` puts first on sys.path (a json.py there would answer), as the runner does not either.
// `find_torch`: torch is found, not imported (a second of CPU): its version is its distribution's, and
// importing it is left to the workers that import it anyway (the runner says when that fails).
std::string question(const std::vector<std::string>& modules, bool find_torch) {
  std::string text = "import sys\nif sys.path and sys.path[0] == '': del sys.path[0]\nimport json";
  for (const auto& module : modules) text += ", " + module;
  if (!find_torch)
    return text + "\nimport torch\nprint(json.dumps({'torch': torch.__version__, 'python': sys.version.split()[0]}))";
  return text +
         "\nimport importlib.util, importlib.metadata\n"
         "if importlib.util.find_spec('torch') is None: raise ModuleNotFoundError(\"No module named 'torch'\")\n"
         "try: version = importlib.metadata.version('torch')\nexcept Exception: version = 'unknown'\n"
         "print(json.dumps({'torch': version, 'python': sys.version.split()[0]}))";
}

std::string listed(const std::vector<std::string>& modules) {
  std::string text = "torch";
  for (const auto& module : modules) text += " and " + module;
  return text;
}

}  // namespace

PythonCheck check_python(const std::string& python, const std::string& temporary_folder,
                         std::chrono::seconds time_limit, const std::vector<std::string>& modules, bool find_torch) {
  PythonCheck check;
  check.python = python;
  std::unique_ptr<WorkerProcess> process;
  try {
    process =
        std::make_unique<WorkerProcess>(std::vector<std::string>{check.python, "-c", question(modules, find_torch)},
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
          "{} did not answer within {} s (python -c 'import {}'); it was stopped "
          "(REPRO_AUDIT_PYTHON_CHECK_SECONDS sets this limit)",
          check.python, time_limit.count(), listed(modules));
      return check;
    }
    break;  // the output ended
  }
  if (!check.torch_version.empty()) return check;  // the answer is all it owes: its exit is not waited for
  const auto ended = process->wait();
  const auto tail = process->log_tail(600);
  // json and sys come with every Python: an import error here is torch's or a module's the caller named.
  const auto newline = tail.find_last_of('\n');
  const auto last_line = newline == std::string::npos ? tail : tail.substr(newline + 1);
  if (last_line.rfind("ModuleNotFoundError", 0) == 0 || last_line.rfind("ImportError", 0) == 0)
    check.problem = fmt::format("{}: this Python cannot import {}: {}", check.python, listed(modules), last_line);
  else
    check.problem =
        fmt::format("{} ended ({}) without answering: {}", check.python, ended, tail.empty() ? "no output" : tail);
  return check;
}

std::string PythonChecks::start(const std::string& option, const std::string& word, const std::string& temporary_folder,
                                const std::vector<std::string>& modules) {
  auto python = program_path(option, word);
  pending_.push_back(
      {option, word,
       std::async(std::launch::async, check_python, python, temporary_folder, python_check_limit(), modules, true)});
  return python;
}

void PythonChecks::settle(Pending& pending) {
  if (!pending.answer.valid()) return;
  const auto check = pending.answer.get();
  if (!check.problem.empty()) throw UserError(fmt::format("{} {}: {}", pending.option, pending.word, check.problem));
}

void PythonChecks::wait() {
  for (auto& pending : pending_) settle(pending);
}

void PythonChecks::throw_if_refused() {
  for (auto& pending : pending_)
    if (pending.answer.valid() && pending.answer.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      settle(pending);
}

PythonCheck checked_python(const std::string& option, const std::string& word, const std::string& temporary_folder,
                           const std::vector<std::string>& modules, bool find_torch) {
  auto check = check_python(program_path(option, word), temporary_folder, python_check_limit(), modules, find_torch);
  if (!check.problem.empty()) throw UserError(fmt::format("{} {}: {}", option, word, check.problem));
  return check;
}

// Loading torch from a cold disk (a network home, a fresh container) can take a minute; a Python that
// has not answered in two is stuck. REPRO_AUDIT_PYTHON_CHECK_SECONDS changes it (the tests shorten it),
// up to a day: a larger value (10^10 s would overflow the clock's deadline into the past, an instant
// refusal) waits a day.
std::chrono::seconds python_check_limit() {
  constexpr long kDay = 24 * 60 * 60;
  const char* text = std::getenv("REPRO_AUDIT_PYTHON_CHECK_SECONDS");
  const long seconds = text ? std::strtol(text, nullptr, 10) : 0;
  return std::chrono::seconds(seconds > 0 ? std::min(seconds, kDay) : 120);
}

std::string checked_writable_folder(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const auto folder = fs::absolute(path, error).lexically_normal();
  const auto fail = [&](const std::string& why) { throw UserError(fmt::format("{} {}: {}", option, path, why)); };
  if (error) fail(error.message());
  // create_directories reports an existing file as "File exists": say what it is instead.
  const auto status = fs::symlink_status(folder, error);
  if (fs::is_symlink(status) && !fs::exists(folder, error) && error.value() != ELOOP) fail("is a link to nothing");
  if (fs::exists(status) && !fs::is_symlink(status) && !fs::is_directory(status)) fail("is a file, not a folder");
  fs::create_directories(folder, error);
  if (error) fail(error.value() == EEXIST ? "is a file, not a folder" : "cannot be made: " + error.message());
  if (!fs::is_directory(folder, error)) fail(error ? error.message() : "is a file, not a folder");
  // access() says yes to root on a read-only folder: a file made (and gone) is the answer.
  if (const auto problem = creation_problem(folder.string()); !problem.empty())
    fail(fmt::format("cannot be written: {}", problem));
  return folder.string();
}

}  // namespace repro_audit
