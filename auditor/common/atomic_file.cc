#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

#include "common/user_error.h"

namespace repro_audit {

namespace {

std::atomic<int> held_signal{0};
void hold(int signal) {
  int none = 0;
  held_signal.compare_exchange_strong(none, signal);
}
constexpr int kHeldSignals[] = {SIGINT, SIGTERM, SIGHUP};

// A file written beside `path` and flushed, not yet renamed over it; the temporary's name, or a
// UserError (nothing left behind).
std::string write_temporary(const std::string& path, const std::string& content) {
  const std::filesystem::path target(path);
  const auto folder = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::string temporary = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = mkstemp(temporary.data());
  if (fd < 0)
    throw UserError(fmt::format("{}: cannot create a file in {}: {}", path, folder.string(), std::strerror(errno)));
  auto fail = [&](const char* step) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    ::unlink(temporary.c_str());
    throw UserError(fmt::format("{}: {} failed: {}", path, step, reason));
  };
  std::size_t written = 0;
  while (written < content.size()) {
    const auto n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write");
    written += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) fail("chmod");
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    ::unlink(temporary.c_str());
    throw UserError(fmt::format("{}: close failed: {}", path, std::strerror(errno)));
  }
  return temporary;
}

void rename_into_place(const std::string& temporary, const std::string& path) {
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temporary.c_str());
    throw UserError(fmt::format("{}: rename failed: {}", path, reason));
  }
}

}  // namespace

// Only the outermost of nested holds installs and restores the handlers.
static int hold_depth = 0;

DeferredSignals::DeferredSignals() {
  if (hold_depth++ > 0) return;
  held_signal.store(0);
  struct sigaction action {};
  action.sa_handler = hold;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < std::size(kHeldSignals); ++i) sigaction(kHeldSignals[i], &action, &previous_[i]);
}

DeferredSignals::~DeferredSignals() {
  if (--hold_depth > 0) return;
  for (std::size_t i = 0; i < std::size(kHeldSignals); ++i) sigaction(kHeldSignals[i], &previous_[i], nullptr);
  if (const int signal = held_signal.exchange(0)) ::raise(signal);
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const DeferredSignals held;
  rename_into_place(write_temporary(path, content), path);
}

std::vector<std::string> write_files_atomically(const std::vector<FileContent>& files) {
  const DeferredSignals held;
  std::vector<std::string> failures;
  std::vector<std::pair<std::string, std::string>> written;  // temporary, path
  for (const auto& file : files) try {
      written.emplace_back(write_temporary(file.path, file.content), file.path);
    } catch (const UserError& error) {
      failures.push_back(error.what());
    }
  for (const auto& [temporary, path] : written) try {
      rename_into_place(temporary, path);
    } catch (const UserError& error) {
      failures.push_back(error.what());
    }
  return failures;
}

}  // namespace repro_audit
