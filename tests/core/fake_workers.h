#pragma once
// Scripted workers for the supervisor and audit tests: what a worker says, and how it ends.
#include <signal.h>

#include <deque>
#include <mutex>
#include <set>
#include <nlohmann/json.hpp>
#include <thread>

#include "plan/plan.h"
#include "supervisor/worker_launcher.h"
#include "supervisor/worker_process.h"

namespace repro_audit::testing {

struct Script {
  std::vector<std::string> lines;  // protocol lines, in order
  int signal = 0;                  // then it ends by this signal, or exits when 0
  bool hang = false;               // then it says nothing more until terminated
  bool stopped = false;            // as if stopped by SIGSTOP (hang too, for it to say nothing)
};

// A sum cell on the CPU named `key`.
inline Cell make_cell(const std::string& key, double timeout_seconds = 60) {
  Cell cell;
  cell.key = key;
  cell.probe = "sum";
  cell.variant = key;
  cell.device = "cpu";
  cell.timeout_seconds = timeout_seconds;
  return cell;
}

inline std::string start_line(const std::string& key) {
  return nlohmann::json{{"event", "start"}, {"key", key}}.dump();
}

// A cell's observation: `warmup` warm-up runs, then `repeats` runs, every one with `digest`.
inline std::string cell_line(const std::string& key, const std::string& digest = std::string(32, 'a'), int warmup = 0,
                             int repeats = 2) {
  auto runs = nlohmann::json::array();
  for (int i = 0; i < warmup + repeats; ++i)
    runs.push_back(
        {{"digest", digest}, {"outputs", nlohmann::json::array()}, {"warmup", i < warmup}, {"time_ns", 1000}});
  return nlohmann::json{
      {"event", "cell"}, {"key", key}, {"observation", {{"process", 0}, {"status", "ok"}, {"runs", runs}}}}
      .dump();
}

// A later timing round's answer (timing/timing.h): no runs, only timing-only samples.
inline std::string round_line(const std::string& key, const std::vector<std::int64_t>& samples = {900, 1100}) {
  return nlohmann::json{
      {"event", "cell"}, {"key", key}, {"observation", {{"process", 0}, {"status", "ok"}, {"timing_ns", samples}}}}
      .dump();
}

class FakeWorker : public Worker {
 public:
  explicit FakeWorker(Script script) : script_(std::move(script)) {}
  ReadStatus read_line(std::string& line, std::chrono::steady_clock::time_point deadline) override {
    if (next_ < script_.lines.size()) {
      line = script_.lines[next_++];
      return ReadStatus::line;
    }
    if (!script_.hang || terminated_) return ReadStatus::end_of_output;
    std::this_thread::sleep_until(deadline);
    return ReadStatus::deadline;
  }
  void terminate(std::chrono::milliseconds) override {
    terminated_ = true;
    if (script_.hang) script_.signal = SIGTERM;
  }
  std::string wait() override { return script_.signal ? "signal " + signal_name(script_.signal) : "exit 1"; }
  int signal() const override { return script_.signal; }
  std::string log_tail(std::size_t) const override { return "fake log"; }
  bool stopped() const override { return script_.stopped && !terminated_; }

 private:
  Script script_;
  std::size_t next_ = 0;
  bool terminated_ = false;
};

// Plays the queued scripts, then workers that finish every cell they are given with the runs asked for.
// Workers may be started from several threads at once (--jobs).
class FakeLauncher : public WorkerLauncher {
 public:
  std::unique_ptr<Worker> start(const std::string& request, const std::map<std::string, std::string>&) override {
    const std::lock_guard hold(lock_);
    requests.push_back(nlohmann::json::parse(request));
    if (!scripts.empty()) {
      auto script = std::move(scripts.front());
      scripts.pop_front();
      return std::make_unique<FakeWorker>(std::move(script));
    }
    Script good;
    const bool round = requests.back().value("timing_round", 0) > 1;
    for (const auto& cell : requests.back().at("cells")) {
      good.lines.push_back(start_line(cell.at("key")));
      if (crash_on.erase(cell.at("key")) || (round && crash_in_round.erase(cell.at("key")))) {  // dies, once
        good.signal = SIGSEGV;
        break;
      }
      good.lines.push_back(round ? round_line(cell.at("key"))
                                 : cell_line(cell.at("key"), std::string(32, 'a'), requests.back().value("warmup", 0),
                                             requests.back().value("repeats", 2)));
    }
    return std::make_unique<FakeWorker>(std::move(good));
  }
  // The cell keys of the i-th worker's batch.
  std::vector<std::string> requested_keys(std::size_t i) const {
    std::vector<std::string> keys;
    for (const auto& cell : requests.at(i).at("cells")) keys.push_back(cell.at("key"));
    return keys;
  }
  std::deque<Script> scripts;
  std::set<std::string> crash_on;        // after the scripts: a worker given one of these cells crashes on it, once
  std::set<std::string> crash_in_round;  // the same, in a later timing round only
  std::vector<nlohmann::json> requests;

 private:
  std::mutex lock_;
};

}  // namespace repro_audit::testing
