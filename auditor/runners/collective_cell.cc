#include "runners/collective_cell.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include "audit/audit.h"
#include "common/user_error.h"
#include "plan/ranks.h"
#include "protocol/worker_protocol.h"
#include "ranks/collective_step.h"
#include "ranks/rank_group.h"
#include "runners/repeat_cell.h"
#include "supervisor/worker_process.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// How long a rank is waited for: to join (from the cell's start to the group's), and in each collective.
std::chrono::milliseconds wait_limit(const Cell& cell) {
  const double seconds = std::clamp(cell.timeout_seconds / 2, 1.0, 60.0);
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}

std::chrono::milliseconds left_until(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

// make_rank_group on a thread of its own, waited for until `deadline` (null after it) while `check`
// (called every poll) may throw. c10d's rendezvous has no deadline of its own: FileStore's constructor waits its
// default 300 s for a file whose folder is gone, then each store call waits the timeout again. A
// thread given up on is left to end when its calls time out; it holds only what it shares here.
std::unique_ptr<RankGroup> meet(const RankGroupOptions& options, Clock::time_point deadline,
                                const std::function<void()>& check) {
  struct Meeting {
    std::mutex lock;
    std::condition_variable ended;
    bool done = false;
    std::unique_ptr<RankGroup> group;
    std::exception_ptr error;
  };
  const auto meeting = std::make_shared<Meeting>();
  std::thread([meeting, options] {
    std::unique_ptr<RankGroup> group;
    std::exception_ptr error;
    try {
      group = make_rank_group(options);
    } catch (...) {
      error = std::current_exception();
    }
    const std::lock_guard hold(meeting->lock);
    meeting->group = std::move(group);
    meeting->error = error;
    meeting->done = true;
    meeting->ended.notify_all();
  }).detach();
  std::unique_lock hold(meeting->lock);
  while (!meeting->ended.wait_for(hold, std::chrono::milliseconds(100), [&] { return meeting->done; })) {
    hold.unlock();
    check();
    if (Clock::now() >= deadline) return nullptr;
    hold.lock();
  }
  if (meeting->error) std::rethrow_exception(meeting->error);
  return std::move(meeting->group);
}

// The other ranks' processes, and what became of them.
class Peers {
 public:
  ~Peers() { end(std::chrono::milliseconds(0)); }

  // A CPU cell's ranks run in repro-audit-cpu where it sits beside this worker (audit/audit.h): they need
  // no CUDA, whose half of libtorch takes a rank as long to load as the rest of it.
  void start(const std::vector<std::string>& requests, bool on_cpu) {
    const auto executable = on_cpu ? worker_executable("cpu") : own_executable();
    const auto folder = temporary_folder();
    // A rank that cannot be started (it throws) leaves the ranks started so far for end() to reap.
    for (const auto& request : requests)
      ranks_.push_back({std::make_unique<WorkerProcess>(std::vector<std::string>{executable, "rank"},
                                                        std::map<std::string, std::string>{}, request, folder)});
  }

  // Waits until every rank said `event`; throws CellFailure when one ended or the limit passed.
  void await(const std::string& event, std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    for (std::size_t i = 0; i < ranks_.size(); ++i)
      while (ranks_[i].said != event) {
        if (!ranks_[i].ended.empty())
          throw CellFailure(ObservationStatus::crashed,
                            fmt::format("rank {} ended before it joined: {}", i + 1, ranks_[i].ended));
        if (Clock::now() >= deadline)
          throw CellFailure(ObservationStatus::timeout,
                            fmt::format("rank {} never joined within {:g} s", i + 1, seconds(limit)));
        read(ranks_[i], std::min(deadline, Clock::now() + kPoll));
      }
  }

  // A rank that a signal ended within `grace` ("rank 2 ended: signal SIGSEGV"), "" when none. The
  // others may end too, on the error its end gave them: they say so and exit, they did not crash.
  std::string crashed(std::chrono::milliseconds grace) {
    const auto deadline = Clock::now() + grace;
    while (true) {
      for (std::size_t i = 0; i < ranks_.size(); ++i) {
        read(ranks_[i], Clock::now() + std::chrono::milliseconds(10));
        if (ranks_[i].ended.rfind("signal", 0) == 0) return fmt::format("rank {} ended: {}", i + 1, ranks_[i].ended);
      }
      if (Clock::now() >= deadline) return "";
    }
  }

  // Waits up to `grace` for the ranks to end by themselves, then ends the rest and reaps them all.
  void end(std::chrono::milliseconds grace) {
    const auto deadline = Clock::now() + grace;
    for (auto& rank : ranks_)
      while (rank.ended.empty() && Clock::now() < deadline) read(rank, std::min(deadline, Clock::now() + kPoll));
    for (auto& rank : ranks_) rank.process->terminate(std::chrono::milliseconds(0));
    ranks_.clear();
  }

 private:
  static constexpr std::chrono::milliseconds kPoll{100};
  static double seconds(std::chrono::milliseconds duration) { return static_cast<double>(duration.count()) / 1000; }

  // One other rank's process, and what it said: its last event, its error, its end ("" while it runs).
  struct Rank {
    std::unique_ptr<WorkerProcess> process;
    std::string said;
    std::string ended;
    std::string error;
  };

  // Takes what `rank` said until `deadline`: its events, its error, or its end.
  static void read(Rank& rank, Clock::time_point deadline) {
    if (!rank.ended.empty()) return;
    std::string line;
    while (true) {
      const auto status = rank.process->read_line(line, deadline);
      if (status == Worker::ReadStatus::deadline) return;
      if (status == Worker::ReadStatus::end_of_output) {
        rank.ended = rank.process->wait();
        if (!rank.error.empty()) rank.ended += " (" + rank.error + ")";
        return;
      }
      try {
        const auto event = nlohmann::json::parse(line);
        rank.said = event.value("event", "");
        if (rank.said == "error") rank.error = event.value("message", "");
      } catch (const nlohmann::json::exception&) {
      }
    }
  }

  std::vector<Rank> ranks_;
};

class CollectiveRunner : public CellRunner {
 public:
  ~CollectiveRunner() override {
    try {
      if (group_ && !failed_) end_runs(*group_);
      peers_.end(std::chrono::seconds(2));
    } catch (...) {
    }
    group_.reset();
    std::error_code ignored;
    if (!folder_.empty()) fs::remove_all(folder_, ignored);
  }

  RunFunction prepare(const Cell& cell, const CellSetup& setup, ProcessObservation& observation) override {
    const auto [probe, variant] = cell_probe(cell, setup.device);
    const int ranks = ranks_of(cell.settings);
    if (ranks < 2) throw Unsupported("a collective cell needs 2 ranks or more");
    limit_ = wait_limit(cell);
    // Every rank joins within the limit from here, however the time is spent (starting, meeting).
    const auto deadline = Clock::now() + limit_;
    temporary_ = temporary_folder();
    auto pattern = (fs::path(temporary_) / "repro-audit-ranks-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw EnvironmentError(temporary_folder_problem(temporary_, errno));
    folder_ = pattern;
    const auto store = (fs::path(folder_) / "store").string();
    std::vector<std::string> requests;
    for (int rank = 1; rank < ranks; ++rank) {
      WorkerRequest request;
      request.device = setup.device.str();
      request.input_scheme = setup.scheme;
      request.cells = {cell};
      requests.push_back(nlohmann::json{
          {"request", request_to_json(request)}, {"rank", rank}, {"store", store}, {"timeout_ms", limit_.count()}}
                             .dump());
    }
    peers_.start(requests, setup.device.is_cpu());
    peers_.await("joining", left_until(deadline));
    group_ = guarded([&] {
      return meet({0, ranks, store, left_until(deadline), setup.device}, deadline, [&] { check_meeting(); });
    });
    if (!group_)
      throw CellFailure(ObservationStatus::timeout,
                        fmt::format("the ranks did not meet within {:g} s (half the cell's time limit)",
                                    static_cast<double>(limit_.count()) / 1000));
    ProbeContext context(setup.device, setup.seed, *variant, setup.inputs, setup.scheme);
    context.set_group(group_.get());
    const auto run = probe->prepare(context);
    observation.input_digest = context.input_digest();
    measure_first_sensitivity(*probe, *variant, setup, observation);
    return [this, run] {
      ++runs_;
      return guarded([&] { return lead_run(*group_, run); });
    };
  }

  nlohmann::json export_inputs(const Cell& cell, InputScheme scheme, const std::string& directory,
                               std::int64_t) const override {
    throw Unsupported("a collective cell's inputs are drawn by every rank; repro has no script for it");
  }

 private:
  // `call`, its failure told by what became of the other ranks.
  template <typename Call>
  auto guarded(const Call& call) -> decltype(call()) {
    try {
      return call();
    } catch (const Unsupported&) {
      failed_ = true;
      throw;
    } catch (const CellFailure&) {
      failed_ = true;
      throw;
    } catch (const EnvironmentError&) {
      failed_ = true;
      throw;
    } catch (const std::exception& error) {
      failed_ = true;
      if (runs_ == 0) check_folders();
      const auto where = runs_ == 0 ? std::string("while the ranks met") : fmt::format("in run {}", runs_ - 1);
      const auto crashed = peers_.crashed(std::chrono::seconds(2));
      if (!crashed.empty()) throw CellFailure(ObservationStatus::crashed, fmt::format("{} {}", crashed, where));
      const std::string text = error.what();
      if (text.find("imed out") == std::string::npos && text.find("imeout") == std::string::npos)
        throw std::runtime_error(fmt::format("rank 0 {}: {}", where, text));
      throw CellFailure(ObservationStatus::timeout,
                        fmt::format("a rank did not answer {} within {:g} s; every rank is still running (one hangs "
                                    "or is too slow for the limit): {}",
                                    where, static_cast<double>(limit_.count()) / 1000, error.what()));
    }
  }

  // While the ranks meet: a rank that crashed ends the cell at once, and so does the machine's failure.
  void check_meeting() {
    check_folders();
    const auto crashed = peers_.crashed(std::chrono::milliseconds(0));
    if (!crashed.empty()) throw CellFailure(ObservationStatus::crashed, crashed + " while the ranks met");
  }

  // The rendezvous folder, or the temporary folder it is in, removed under the ranks.
  void check_folders() const {
    std::error_code error;
    if (fs::is_directory(folder_, error)) return;
    if (!fs::is_directory(temporary_, error)) throw EnvironmentError(temporary_folder_problem(temporary_, ENOENT));
    throw EnvironmentError(fmt::format("the ranks' rendezvous folder {} was removed while they ran", folder_));
  }

  Peers peers_;
  std::unique_ptr<RankGroup> group_;
  std::string temporary_;
  std::string folder_;
  std::chrono::milliseconds limit_{30000};
  int runs_ = 0;
  bool failed_ = false;
};

}  // namespace

std::unique_ptr<CellRunner> make_collective_runner() { return std::make_unique<CollectiveRunner>(); }

}  // namespace repro_audit
