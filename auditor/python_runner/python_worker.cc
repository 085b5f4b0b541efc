#include "python_runner/python_worker.h"

#include "common/user_error.h"
#include "repro/python_runner.h"

#include <dlfcn.h>
#include <unistd.h>

#include <c10/core/DeviceType.h>
#include <filesystem>

namespace repro_audit {

std::string python_of_batch(const WorkerRequest& request) {
  for (const auto& cell : request.cells)
    if (cell.model && is_python_model(*cell.model)) return cell.model->python;
  return "";
}

std::vector<std::string> python_runner_command(const std::string& python) {
  // The command resolves the interpreter (common/program_path.h); a relative path (a journal edited by
  // hand) would be looked up in whatever folder the audit runs in.
  if (python.empty() || python.front() != '/')
    throw EnvironmentError("the py cells' interpreter cannot be started: " + python + " is not an absolute path");
  return {python, "-u", "-c", kPyCellRunner, "repro-audit-python-runner"};
}

std::map<std::string, std::string> python_runner_environment() {
  std::error_code ignored;
  const auto program = std::filesystem::read_symlink("/proc/self/exe", ignored);
  const auto library =
      program.empty() ? std::filesystem::path() : program.parent_path() / "librepro_audit_word_sums.so";
  return {{"REPRO_AUDIT_WORD_SUMS_LIBRARY",
           !library.empty() && std::filesystem::is_regular_file(library, ignored) ? library.string() : ""}};
}

std::string python_next_to_libtorch() {
  Dl_info info{};
  // Any function of libc10 tells where the libtorch in use lies (<prefix>/lib/pythonX.Y/site-packages/torch/lib).
  if (dladdr(reinterpret_cast<void*>(&c10::DeviceTypeName), &info) == 0 || info.dli_fname == nullptr) return "";
  std::error_code ignored;
  auto folder = std::filesystem::canonical(info.dli_fname, ignored).parent_path();
  for (int level = 0; level < 6 && folder.has_parent_path(); ++level, folder = folder.parent_path())
    for (const char* name : {"bin/python3", "bin/python"})
      if (::access((folder / name).c_str(), X_OK) == 0) return (folder / name).string();
  return "";
}

}  // namespace repro_audit
