#include "supervisor/process_launcher.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <utility>

#include <nlohmann/json.hpp>

#include "protocol/worker_protocol.h"

namespace repro_audit {

ProcessLauncher::~ProcessLauncher() = default;  // ends the workers never handed out

namespace {

constexpr const char* kForkPreload = "REPRO_AUDIT_FORK_PRELOAD";
// How long a round's worker waits for a fork server that was not started ahead to load.
constexpr std::chrono::seconds kServerAllowance{60};

// A module name a worker may ask a fork server to import: dotted identifiers, nothing else.
bool is_module_name(const std::string& name) {
  return !name.empty() && name.size() <= 100 && name.front() != '.' && name.back() != '.' &&
         std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
}

}  // namespace

std::unique_ptr<Worker> ProcessLauncher::start(const std::string& request,
                                               const std::map<std::string, std::string>& environment) {
  if (environment.count(kWorkerForkRound)) {
    auto own = environment;
    own.erase(kWorkerForkRound);
    if (!asks_fork_server(own)) return start(request, own);
    std::string socket, preload;
    {
      const std::lock_guard hold(servers_lock_);
      socket = server_socket(fork_server(own), std::chrono::steady_clock::now() + kServerAllowance);
      for (const auto& module : imports_[own]) preload += (preload.empty() ? "" : ",") + module;
    }
    if (socket.empty()) return start(request, own);  // no server: a worker that loads torch itself
    auto client = own;
    client[kForkClient] = socket;
    client[kForkPreload] = preload;
    return launch(client, request);
  }
  {
    const std::lock_guard hold(lock_);
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it)
      if (it->environment == environment) {
        auto worker = std::move(it->worker);
        waiting_.erase(it);
        worker->send(request);
        return worker;
      }
  }
  return launch(environment, request);
}

std::unique_ptr<WorkerProcess> ProcessLauncher::launch(const std::map<std::string, std::string>& environment,
                                                       const std::optional<std::string>& request) {
  const auto python = environment.find(kWorkerPython);
  if (python == environment.end() || python->second.empty() || !interpreter_) {
    if (environment.count(kForkClient))  // a C++ round's worker: the front end, which loads no libtorch
      return std::make_unique<WorkerProcess>(std::vector<std::string>{front_end(), "fork-client"}, environment, request,
                                             temporary_folder_);
    std::string program;
    if (!environment.count(kForkServe)) {  // a fork server is no worker that speaks for the environment
      const std::lock_guard hold(first_program_lock_);
      program = std::exchange(first_program_, std::string());
    }
    return std::make_unique<WorkerProcess>(
        std::vector<std::string>{program.empty() ? executable_ : program, subcommand_}, environment, request,
        temporary_folder_);
  }
  const auto start = interpreter_(python->second);
  auto overrides = environment;
  overrides[kWorkerPython] = "";
  for (const auto& [name, value] : start.environment) overrides[name] = value;
  if (!environment.count(kForkServe) && !environment.count(kForkClient)) {  // a first round's worker
    const std::lock_guard hold(sockets_lock_);
    const auto server = server_sockets_.find(environment);
    if (server != server_sockets_.end()) overrides[kWorkerForkServer] = server->second;
  }
  try {
    return std::make_unique<WorkerProcess>(start.argv, overrides, request, temporary_folder_);
  } catch (const SpawnError& error) {
    // Gone or broken since the audit checked it: the machine's failure, not the cells'. Nothing is
    // journaled for them, and --resume runs them once the interpreter is back. (A temporary folder or a
    // pipe that cannot be made fails as for any worker, unwrapped.)
    throw EnvironmentError(std::string("the py cells' interpreter cannot be started: ") + error.what());
  }
}

void ProcessLauncher::prestart(const std::vector<std::map<std::string, std::string>>& environments,
                               std::chrono::steady_clock::time_point deadline, const std::function<bool()>& give_up) {
  std::vector<WorkerProcess*> started;
  std::vector<Environment> own_workers;  // every worker to start ahead that is no fork server's
  {
    const std::lock_guard servers(servers_lock_);
    for (const auto& environment : environments) {
      if (!environment.count(kWorkerForkRound)) {
        own_workers.push_back(environment);
        continue;
      }
      auto own = environment;
      own.erase(kWorkerForkRound);
      if (!asks_fork_server(own)) {  // a worker of its own, as start() gives it
        own_workers.push_back(own);
        continue;
      }
      const bool known = servers_.count(own) > 0;
      auto& server = fork_server(own);
      if (!known && server.process) started.push_back(server.process.get());
    }
  }
  {
    const std::lock_guard hold(lock_);
    // A worker already waiting with the same environment counts for one of them (started ahead for a
    // later timing round that needs it now).
    std::vector<char> counted(waiting_.size(), 0);
    for (const auto& environment : own_workers) {
      std::size_t same = 0;
      while (same < counted.size() && (counted[same] || waiting_[same].environment != environment)) ++same;
      if (same < counted.size()) {
        counted[same] = 1;
        continue;
      }
      auto worker = launch(environment, std::nullopt);
      started.push_back(worker.get());
      waiting_.push_back({environment, std::move(worker)});
    }
  }
  // A worker that died or is slow is found out when its request is read: here it only stops waiting.
  // Eight workers importing torch on two cores take seconds: a stop or a refusal (give_up) is heard
  // within a poll, and the workers not handed out end with the launcher.
  constexpr std::chrono::milliseconds kGiveUpPoll{100};
  for (auto* worker : started)
    while (true) {
      const auto slice = std::min(deadline, std::chrono::steady_clock::now() + kGiveUpPoll);
      if (worker->has_line(slice)) break;
      const auto now = std::chrono::steady_clock::now();
      if (now < slice || now >= deadline) break;  // it ended or was stopped, or the time is up
      if (give_up && give_up()) return;
    }
}

std::string ProcessLauncher::front_end() const {
  return (std::filesystem::path(executable_).parent_path() / "repro-audit").string();
}

bool ProcessLauncher::asks_fork_server(const Environment& environment) const {
  const auto python = environment.find(kWorkerPython);
  if (python != environment.end() && !python->second.empty()) return true;  // the interpreter is the client
  return subcommand_ == "worker" && ::access(front_end().c_str(), X_OK) == 0;
}

ProcessLauncher::ForkServer& ProcessLauncher::fork_server(const Environment& environment) {
  auto it = servers_.find(environment);
  if (it != servers_.end()) return it->second;
  auto serving = environment;
  serving[kForkServe] = "1";
  ForkServer server;
  try {
    server.process = launch(serving, std::nullopt);
  } catch (const EnvironmentError&) {
    server.answered = true;  // the interpreter cannot start: the round's worker finds out and says so
  }
  if (server.process && !server.process->own_folder().empty()) {
    const std::lock_guard hold(sockets_lock_);
    server_sockets_[environment] = server.process->own_folder() + "/" + kForkSocketName;
  }
  return servers_.emplace(environment, std::move(server)).first->second;
}

std::string ProcessLauncher::server_socket(ForkServer& server, std::chrono::steady_clock::time_point deadline) {
  if (server.answered) return server.socket;
  server.answered = true;
  std::string line;
  if (!server.process->has_line(deadline) || server.process->read_line(line, deadline) != Worker::ReadStatus::line)
    return "";
  try {
    const auto said = nlohmann::json::parse(line);
    if (said.value("event", "") == "loaded") server.socket = said.value("fork_socket", "");
  } catch (const nlohmann::json::exception&) {
  }
  return server.socket;
}

void ProcessLauncher::note_imports(const std::map<std::string, std::string>& environment,
                                   const std::vector<std::string>& modules) {
  const std::lock_guard hold(servers_lock_);
  auto& noted = imports_[environment];
  for (const auto& module : modules)
    if (is_module_name(module) && noted.size() < 8) noted.insert(module);
}

}  // namespace repro_audit
