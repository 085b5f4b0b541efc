#include "config/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

#include "config/user_error.h"

namespace repro_audit {

void write_file_atomically(const std::string& path, const std::string& content) {
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
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temporary.c_str());
    throw UserError(fmt::format("{}: rename failed: {}", path, reason));
  }
}

std::vector<std::string> write_files_atomically(const std::vector<FileContent>& files) {
  std::vector<std::string> failures;
  for (const auto& file : files) try {
      write_file_atomically(file.path, file.content);
    } catch (const UserError& error) {
      failures.push_back(error.what());
    }
  return failures;
}

}  // namespace repro_audit
