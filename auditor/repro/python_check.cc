#include "repro/python_check.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "supervisor/worker_process.h"

namespace repro_audit {

PythonCheck check_python(const std::string& python, const std::string& temporary_folder,
                         std::chrono::seconds time_limit) {
  PythonCheck check;
  std::unique_ptr<WorkerProcess> process;
  try {
    process = std::make_unique<WorkerProcess>(
        std::vector<std::string>{python, "-c",
                                 "import json, sys, torch; print(json.dumps({'torch': torch.__version__}))"},
        std::map<std::string, std::string>{}, std::string(), temporary_folder);
  } catch (const std::runtime_error& error) {
    check.problem = fmt::format("{} cannot be started: {}", python, error.what());
    return check;
  }
  const auto deadline = std::chrono::steady_clock::now() + time_limit;
  std::string line;
  while (true) {
    const auto status = process->read_line(line, deadline);
    if (status == Worker::ReadStatus::line) {
      const auto answer = nlohmann::json::parse(line, nullptr, false);
      if (answer.is_object() && answer.contains("torch") && answer.at("torch").is_string())
        check.torch_version = answer.at("torch").get<std::string>();
      continue;
    }
    if (status == Worker::ReadStatus::deadline) {
      process->terminate(std::chrono::seconds(3));
      check.problem =
          fmt::format("{} did not answer within {} s (import torch); it was stopped", python, time_limit.count());
      return check;
    }
    break;
  }
  const auto ended = process->wait();
  if (!check.torch_version.empty()) return check;
  const auto tail = process->log_tail(600);
  if (tail.find("No module named 'torch'") != std::string::npos)
    check.problem = fmt::format("{} cannot import torch: {}", python, tail);
  else
    check.problem =
        fmt::format("{} ended ({}) without answering: {}", python, ended, tail.empty() ? "no output" : tail);
  return check;
}

}  // namespace repro_audit
