#include "cli/output_paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/output_target.h"
#include "common/user_error.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

// Below this much free space the report would not fit; checked now rather than after the audit.
constexpr unsigned long long kMinimumFreeBytes = 1 << 20;

fs::path folder_of(const std::string& path) {
  const fs::path target(path);
  return target.has_parent_path() ? target.parent_path() : fs::path(".");
}

void check_writable(const NamedPath& output) {
  const auto fail = [&](const std::string& reason) {
    throw UserError(fmt::format("{} {}: {}", output.option, output.path, reason));
  };
  const auto target = resolve_output(output.path);
  if (target.kind == OutputTarget::Kind::refused) fail(target.reason);
  if (target.kind == OutputTarget::Kind::descriptor) {
    if ((::fcntl(target.descriptor, F_GETFL) & O_ACCMODE) == O_RDONLY) fail("is not open for writing");
    return;
  }
  if (target.kind == OutputTarget::Kind::write_through) {
    if (::access(target.path.c_str(), W_OK) != 0) fail(fmt::format("cannot write: {}", std::strerror(errno)));
    return;
  }
  const auto folder = folder_of(target.path);
  struct stat status {};
  if (::stat(folder.c_str(), &status) != 0)
    fail(fmt::format("cannot use the folder {}: {}", folder.string(), std::strerror(errno)));
  if (!S_ISDIR(status.st_mode)) fail(fmt::format("{} is not a folder", folder.string()));
  // The file is written beside its target, then renamed: prove that works now.
  if (const auto problem = creation_problem(folder.string()); !problem.empty())
    fail(fmt::format("cannot write in {}: {}", folder.string(), problem));
  struct statvfs space {};
  if (::statvfs(folder.c_str(), &space) == 0 &&
      static_cast<unsigned long long>(space.f_bavail) * space.f_frsize < kMinimumFreeBytes)
    fail(fmt::format("no space left in {}", folder.string()));
}

// Two paths name one file: the same inode when both exist, else the same normalised path of what each
// finally names once its links are followed (a link that dangles names the file it would make, as the
// writer follows it: common/output_target.h).
bool same_file(const std::string& a, const std::string& b) {
  struct stat first {
  }, second{};
  if (::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0)
    return first.st_dev == second.st_dev && first.st_ino == second.st_ino;
  std::error_code error;
  const auto left = fs::weakly_canonical(resolve_output(a).path, error);
  const auto right = fs::weakly_canonical(resolve_output(b).path, error);
  return !error && left == right;
}

}  // namespace

void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& output = outputs[i];
    if (output.path.empty()) continue;
    for (const auto& input : inputs)
      if (!input.path.empty() && same_file(output.path, input.path))
        throw UserError(fmt::format("{} {}: is also the input {} ({}); it would be overwritten", output.option,
                                    output.path, input.path, input.option));
    for (std::size_t j = 0; j < i; ++j)
      if (!outputs[j].path.empty() && same_file(output.path, outputs[j].path))
        throw UserError(fmt::format("{} and {} both write {}; give each its own file", outputs[j].option, output.option,
                                    output.path));
    check_writable(output);
  }
}

}  // namespace repro_audit
