#include "common/output_target.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <optional>

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

// The kernel's own limit on links followed in one path.
constexpr int kMaximumLinks = 40;

// The descriptor N that `path` names when it is this process's /proc/self/fd/N (what /dev/stdout,
// /dev/stderr and /dev/fd/N lead to), open or not (`open` says). Opening that path again would give a
// new file position on a regular file, or fail on a socket; a shell writes to the descriptor itself.
struct OwnDescriptor {
  int number;
  bool open;
};
std::optional<OwnDescriptor> own_descriptor(const std::string& path) {
  const fs::path location(path);
  const auto number = location.filename().string();
  if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos || number.size() > 9)
    return std::nullopt;
  char folder[PATH_MAX];
  const auto parent = location.has_parent_path() ? location.parent_path().string() : std::string(".");
  if (!::realpath(parent.c_str(), folder)) return std::nullopt;
  if (std::string(folder) != fmt::format("/proc/{}/fd", ::getpid())) return std::nullopt;
  const int descriptor = std::stoi(number);
  return OwnDescriptor{descriptor, ::fcntl(descriptor, F_GETFD) >= 0};
}

}  // namespace

OutputTarget resolve_output(const std::string& path) {
  std::string current = path;
  for (int links = 0;; ++links) {
    if (const auto descriptor = own_descriptor(current)) {
      if (descriptor->open) return {OutputTarget::Kind::descriptor, current, descriptor->number, ""};
      return {OutputTarget::Kind::refused, current, -1,
              fmt::format("names the descriptor {0}, which is not open in this process (a shell opens it with "
                          "{0}>FILE)",
                          descriptor->number)};
    }
    struct stat status {};
    if (::lstat(current.c_str(), &status) != 0) return {OutputTarget::Kind::replace, current, -1, ""};
    if (S_ISREG(status.st_mode)) return {OutputTarget::Kind::replace, current, -1, ""};
    if (S_ISCHR(status.st_mode) || S_ISFIFO(status.st_mode))
      return {OutputTarget::Kind::write_through, current, -1, ""};
    if (S_ISDIR(status.st_mode)) return {OutputTarget::Kind::refused, current, -1, "is a folder; give a file name"};
    if (!S_ISLNK(status.st_mode))
      return {OutputTarget::Kind::refused, current, -1,
              "is neither a regular file, a character device nor a FIFO; give a file name"};
    if (links == kMaximumLinks) return {OutputTarget::Kind::refused, current, -1, "too many levels of links"};
    std::error_code error;
    const auto target = fs::read_symlink(current, error);
    if (error)
      return {OutputTarget::Kind::refused, current, -1, fmt::format("cannot read the link: {}", error.message())};
    current = (target.is_absolute() ? target : fs::path(current).parent_path() / target).string();
  }
}

}  // namespace repro_audit
