#include "supervisor/worker_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "common/user_error.h"
#include "supervisor/worker_process.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefix = "repro-audit-worker-";
constexpr const char* kLock = ".owner";

}  // namespace

std::optional<std::string> user_tmpdir() {
  if (const char* kept = std::getenv("REPRO_AUDIT_TMPDIR"))
    return *kept ? std::optional<std::string>(kept) : std::nullopt;
  if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir && *tmpdir) return tmpdir;
  return std::nullopt;
}

WorkerFolder::WorkerFolder(const std::string& parent) {
  const auto folder = parent.empty() ? std::string("/tmp") : parent;
  path_ = folder + "/" + kPrefix + "XXXXXX";
  if (!::mkdtemp(path_.data())) throw EnvironmentError(temporary_folder_problem(folder, errno));
  lock_fd_ = ::open((path_ + "/" + kLock).c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX) != 0) {
    const int error = errno;
    if (lock_fd_ >= 0) ::close(lock_fd_);
    std::error_code ignored;
    fs::remove_all(path_, ignored);
    throw EnvironmentError(temporary_folder_problem(folder, error));
  }
}

WorkerFolder::~WorkerFolder() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
  ::close(lock_fd_);
}

int remove_abandoned_worker_folders(const std::string& folder) {
  int removed = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder.empty() ? "/tmp" : folder, error)) {
    // Only real folders: a link of that name (planted in a shared /tmp) is no worker's.
    if (!entry.path().filename().string().starts_with(kPrefix) || entry.is_symlink(error) || !entry.is_directory(error))
      continue;
    const int fd = ::open((entry.path() / kLock).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      // Made this instant and not yet locked, or not ours: left alone unless a minute old.
      const auto age = fs::file_time_type::clock::now() - fs::last_write_time(entry.path(), error);
      if (error || age < std::chrono::minutes(1)) continue;
    } else {
      const bool owned = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
      ::close(fd);
      if (owned) continue;
    }
    if (fs::remove_all(entry.path(), error) != static_cast<std::uintmax_t>(-1) && !error) ++removed;
  }
  return removed;
}

}  // namespace repro_audit
