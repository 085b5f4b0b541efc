#include "cli/torch_side.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

#include "audit/audit.h"
#include "cli/terminal.h"

namespace repro_audit {

int start_torch_side(char** argv) {
  std::error_code error;
  const auto own = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) {
    print_message(
        fmt::format("repro-audit: cannot find this program's folder (/proc/self/exe: {}), where "
                    "repro-audit-torch is, which this command needs",
                    error.message()));
    return 2;
  }
  const auto torch_side = (own.parent_path() / "repro-audit-torch").string();
  ::execv(torch_side.c_str(), argv);  // returns only on failure
  print_message(
      fmt::format("repro-audit: cannot start {}, which this command needs (it runs everything that "
                  "loads libtorch; it is built beside repro-audit): {}",
                  torch_side, std::strerror(errno)));
  return 2;
}

std::string front_end_executable() {
  const std::filesystem::path own = own_executable();
  const auto front_end = own.parent_path() / "repro-audit";
  return own.filename() == "repro-audit-torch" && ::access(front_end.c_str(), X_OK) == 0 ? front_end.string()
                                                                                         : own.string();
}

}  // namespace repro_audit
