#include "common/phase_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace repro_audit {
namespace {

constexpr std::array<const char*, static_cast<std::size_t>(Phase::count)> kPhaseNames = {
    "prepare", "inputs", "sensitivity", "begin_run", "run",    "collect", "end_run",
    "submit",  "pause",  "timing",      "resume",    "warmup", "cell"};

const char* log_path() {
  static const char* path = [] {
    const char* value = std::getenv("REPRO_AUDIT_PHASE_LOG");
    return value && *value ? value : nullptr;
  }();
  return path;
}

std::array<std::int64_t, static_cast<std::size_t>(Phase::count)>& sums() {
  static std::array<std::int64_t, static_cast<std::size_t>(Phase::count)> values{};
  return values;
}

}  // namespace

bool phase_log_enabled() { return log_path() != nullptr; }

void add_phase_time(Phase phase, std::int64_t ns) { sums()[static_cast<std::size_t>(phase)] += ns; }

void flush_phase_log(const std::string& key, int round) {
  if (!log_path()) return;
  nlohmann::json line = {{"key", key}, {"round", round}, {"pid", ::getpid()}};
  for (std::size_t i = 0; i < kPhaseNames.size(); ++i) line[kPhaseNames[i]] = static_cast<double>(sums()[i]) / 1e9;
  sums().fill(0);
  const auto text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const int fd = ::open(log_path(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] const auto written = ::write(fd, text.data(), text.size());  // one write: lines stay whole
  ::close(fd);
}

}  // namespace repro_audit
