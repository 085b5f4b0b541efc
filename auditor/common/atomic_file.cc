#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <utility>

#include "common/output_target.h"
#include "common/user_error.h"

namespace repro_audit {

namespace {

std::atomic<int> held_signal{0};
void hold(int signal) {
  int none = 0;
  held_signal.compare_exchange_strong(none, signal);
}
constexpr int kHeldSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};
static_assert(std::size(kHeldSignals) == 7, "DeferredSignals::previous_ holds one action per signal");

// Writes all of `content`; false, with errno set, when it cannot.
bool write_all(int fd, const std::string& content) {
  std::size_t written = 0;
  while (written < content.size()) {
    const auto n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<std::size_t>(n);
  }
  return true;
}

// Filesystems (and kernels) without unnamed files answer O_TMPFILE with one of these.
bool lacks_unnamed_files(int error) { return error == EOPNOTSUPP || error == EISDIR || error == EINVAL; }

// Writes, sets the mode and flushes to disk; the failed step, or nullptr.
const char* fill(int fd, const std::string& content) {
  if (!write_all(fd, content)) return "write";
  if (::fchmod(fd, 0644) != 0) return "chmod";
  if (::fsync(fd) != 0) return "fsync";
  return nullptr;
}

std::filesystem::path folder_of(const std::string& path) {
  const std::filesystem::path target(path);
  return target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
}

// The temporary's name beside `path`: hidden, and unique within the process (a name taken, say by a
// killed run of the same process id, is passed over).
std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned> count{0};
  return (folder_of(path) /
          fmt::format(".{}.{}-{}", std::filesystem::path(path).filename().string(), ::getpid(), count++))
      .string();
}

// The temporary written unnamed (O_TMPFILE), so that nothing is in the folder while it is written and
// flushed, not even after a SIGKILL; named only for the rename. nullopt where the filesystem or a
// missing /proc allows no unnamed file; a UserError on any other failure (nothing left behind).
std::optional<std::string> write_unnamed(const std::string& path, const std::string& content) {
  const int fd = ::open(folder_of(path).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0 && lacks_unnamed_files(errno)) return std::nullopt;
  if (fd < 0)
    throw UserError(
        fmt::format("{}: cannot create a file in {}: {}", path, folder_of(path).string(), std::strerror(errno)));
  const auto fail = [&](const char* step) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    throw UserError(fmt::format("{}: {} failed: {}", path, step, reason));
  };
  if (const char* step = fill(fd, content)) fail(step);
  const auto descriptor = fmt::format("/proc/self/fd/{}", fd);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const auto name = temporary_name(path);
    if (::linkat(AT_FDCWD, descriptor.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      ::close(fd);
      return name;
    }
    if (errno == ENOENT && ::access("/proc/self/fd", F_OK) != 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (errno != EEXIST) fail("link");
  }
  errno = EEXIST;
  fail("link");
  return std::nullopt;
}

// A file written beside `path` and flushed, not yet renamed over it; the temporary's name, or a
// UserError (nothing left behind). Called with signals held: the temporary never outlives a signal.
std::string write_temporary(const std::string& path, const std::string& content) {
  if (auto written = write_unnamed(path, content)) return *written;
  const auto folder = folder_of(path);
  std::string temporary = (folder / ("." + std::filesystem::path(path).filename().string() + ".XXXXXX")).string();
  const int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0)
    throw UserError(fmt::format("{}: cannot create a file in {}: {}", path, folder.string(), std::strerror(errno)));
  if (const char* step = fill(fd, content)) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    ::unlink(temporary.c_str());
    throw UserError(fmt::format("{}: {} failed: {}", path, step, reason));
  }
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

// Writes into a device, a FIFO or an open descriptor of ours, which stays what it is. Opening a FIFO
// waits for its reader; a signal (held, so it interrupts the wait) stops that wait.
void write_through(const OutputTarget& target, const std::string& path, const std::string& content) {
  int fd = target.descriptor;
  if (target.kind == OutputTarget::Kind::descriptor) {
    std::fflush(nullptr);  // what the program printed to that descriptor comes before the file
  } else {
    do fd = ::open(target.path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR && held_signal.load() == 0);
    if (fd < 0) throw UserError(fmt::format("{}: cannot open {}: {}", path, target.path, std::strerror(errno)));
  }
  const bool written = write_all(fd, content);
  const std::string reason = std::strerror(errno);
  if (fd != target.descriptor) ::close(fd);
  if (!written) throw UserError(fmt::format("{}: write failed: {}", path, reason));
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

std::string creation_problem(const std::string& folder) {
  const int unnamed = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (unnamed >= 0) {
    ::close(unnamed);
    return "";
  }
  if (!lacks_unnamed_files(errno)) return std::strerror(errno);
  const DeferredSignals held;
  std::string named = (std::filesystem::path(folder) / ".repro-audit-write-check.XXXXXX").string();
  const int fd = ::mkostemp(named.data(), O_CLOEXEC);
  if (fd < 0) return std::strerror(errno);
  ::close(fd);
  ::unlink(named.c_str());
  return "";
}

namespace {

// One file, its content moved in (a list's initialiser would copy it twice: a model's inputs are
// hundreds of megabytes).
void write_one(const std::string& path, std::string content, bool own) {
  std::vector<FileContent> files(1);
  files.front().path = path;
  files.front().content = std::move(content);
  files.front().own = own;
  const auto failures = write_files_atomically(files);
  if (!failures.empty()) throw UserError(failures.front());
}

}  // namespace

void write_file_atomically(const std::string& path, std::string content) { write_one(path, std::move(content), false); }

void write_own_file_atomically(const std::string& path, std::string content) {
  write_one(path, std::move(content), true);
}

std::vector<std::string> write_files_atomically(const std::vector<FileContent>& files) {
  const DeferredSignals held;
  std::vector<std::string> failures;
  std::vector<std::pair<std::string, std::string>> written;  // temporary, the file it replaces
  std::vector<std::pair<OutputTarget, const FileContent*>> streams;
  for (const auto& file : files) try {
      const auto target =
          file.own ? OutputTarget{OutputTarget::Kind::replace, file.path, -1, ""} : resolve_output(file.path);
      if (target.kind == OutputTarget::Kind::refused) throw UserError(fmt::format("{}: {}", file.path, target.reason));
      if (target.kind == OutputTarget::Kind::replace)
        written.emplace_back(write_temporary(target.path, file.content), target.path);
      else
        streams.emplace_back(target, &file);
    } catch (const UserError& error) {
      failures.push_back(error.what());
    }
  for (const auto& [temporary, path] : written) try {
      rename_into_place(temporary, path);
    } catch (const UserError& error) {
      failures.push_back(error.what());
    }
  // Last: a FIFO's reader may take its time, and the files are in place meanwhile.
  for (const auto& [target, file] : streams) try {
      write_through(target, file->path, file->content);
    } catch (const UserError& error) {
      failures.push_back(error.what());
    }
  return failures;
}

}  // namespace repro_audit
