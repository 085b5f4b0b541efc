#include "supervisor/worker_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "common/remove_tree.h"
#include "common/user_error.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "repro-audit-worker-";
constexpr std::string_view kSuffixPattern = "XXXXXX";  // mkdtemp's: six letters or digits
constexpr const char* kLock = ".owner";
// What the owner mark holds: with the exact name and a regular file of the user's, what proves a
// folder is one this tool made.
constexpr std::string_view kMark = "repro-audit worker folder\n";

// Whether `name` is exactly what mkdtemp made of kPrefix + kSuffixPattern.
bool is_worker_folder_name(std::string_view name) {
  if (!name.starts_with(kPrefix) || name.size() != kPrefix.size() + kSuffixPattern.size()) return false;
  return std::all_of(name.begin() + static_cast<long>(kPrefix.size()), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

// The open owner mark of `folder`'s entry `name` when it provably is an abandoned folder of this
// tool's, its lock held (so no other audit sweeps it meanwhile); -1 otherwise. Nothing here can block
// on what another user made: no link is followed, a FIFO or device opens without waiting and is
// refused by fstat before any read or lock, and the lock is tried, never waited for.
int lock_abandoned(int folder_fd, const std::string& name) {
  struct stat entry {};
  if (::fstatat(folder_fd, name.c_str(), &entry, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(entry.st_mode) ||
      entry.st_uid != ::geteuid())
    return -1;
  const int dir_fd = ::openat(folder_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return -1;
  const int fd = ::openat(dir_fd, kLock, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  ::close(dir_fd);
  if (fd < 0) return -1;
  struct stat mark {};
  char text[kMark.size() + 1];
  const bool ours = ::fstat(fd, &mark) == 0 && S_ISREG(mark.st_mode) && mark.st_uid == ::geteuid() &&
                    mark.st_size == static_cast<off_t>(kMark.size()) &&
                    ::pread(fd, text, sizeof text, 0) == static_cast<ssize_t>(kMark.size()) &&
                    std::string_view(text, kMark.size()) == kMark;
  if (!ours || ::flock(fd, LOCK_EX | LOCK_NB) != 0) {  // not ours, or its owner lives
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::optional<std::string> user_tmpdir() {
  if (const char* kept = std::getenv("REPRO_AUDIT_TMPDIR"))
    return *kept ? std::optional<std::string>(kept) : std::nullopt;
  if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir && *tmpdir) return tmpdir;
  return std::nullopt;
}

std::string temporary_folder_problem(const std::string& folder, int error) {
  const auto named = user_tmpdir() == folder ? folder + " (TMPDIR)" : folder;
  const char* state = error == ENOENT                                       ? "is missing"
                      : error == ENOTDIR                                    ? "is not a folder"
                      : error == EACCES || error == EPERM || error == EROFS ? "cannot be written"
                      : error == ENOSPC || error == EDQUOT                  ? "is full"
                                                                            : "cannot be used";
  return fmt::format("the temporary folder {} {}: {}", named, state, std::strerror(error));
}

int anonymous_file(const std::string& folder) {
  std::string path = (folder.empty() ? std::string("/tmp") : folder) + "/repro-audit-worker-log.XXXXXX";
  const int fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) throw EnvironmentError(temporary_folder_problem(folder.empty() ? "/tmp" : folder, errno));
  ::unlink(path.c_str());
  return fd;
}

WorkerFolder::WorkerFolder(const std::string& parent) {
  const auto folder = parent.empty() ? std::string("/tmp") : parent;
  path_ = folder + "/" + std::string(kPrefix) + std::string(kSuffixPattern);
  if (!::mkdtemp(path_.data())) throw EnvironmentError(temporary_folder_problem(folder, errno));
  lock_fd_ = ::open((path_ + "/" + kLock).c_str(), O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
  // Locked before the mark is written: a sweep that finds the mark finds it locked while this lives.
  const bool ready = lock_fd_ >= 0 && ::flock(lock_fd_, LOCK_EX) == 0 &&
                     ::write(lock_fd_, kMark.data(), kMark.size()) == static_cast<ssize_t>(kMark.size());
  if (!ready) {
    const int error = errno;
    if (lock_fd_ >= 0) ::close(lock_fd_);
    std::error_code ignored;
    fs::remove_all(path_, ignored);
    throw EnvironmentError(temporary_folder_problem(folder, error));
  }
}

WorkerFolder::~WorkerFolder() {
  remove_tree(path_);
  ::close(lock_fd_);
}

int remove_abandoned_worker_folders(const std::string& folder) {
  const auto parent = folder.empty() ? std::string("/tmp") : folder;
  const int folder_fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder_fd < 0) return 0;
  int removed = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(parent, error)) {
    const auto name = entry.path().filename().string();
    if (!is_worker_folder_name(name)) continue;  // a folder of the user's that shares the prefix
    const int lock = lock_abandoned(folder_fd, name);
    if (lock < 0) continue;
    // The folder is the tool's own (its mark proves it, held locked): what its worker left inside goes
    // with it, never through a link out of it nor into a filesystem mounted inside.
    if (remove_tree(entry.path().string())) ++removed;
    ::close(lock);
  }
  ::close(folder_fd);
  return removed;
}

}  // namespace repro_audit
