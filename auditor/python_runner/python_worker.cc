#include "python_runner/python_worker.h"

#include "repro/python_runner.h"

#include <dlfcn.h>
#include <unistd.h>

#include <c10/core/DeviceType.h>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

namespace repro_audit {

std::string python_of_batch(const WorkerRequest& request) {
  for (const auto& cell : request.cells)
    if (cell.model && is_python_model(*cell.model)) return cell.model->python;
  return "";
}

namespace {

// The word-sums kernel's library beside this program (CUDA builds): the runner digests a CUDA tensor's
// per-op records on the device with it. "" when there is none.
std::string word_sums_library() {
  std::error_code ignored;
  const auto program = std::filesystem::read_symlink("/proc/self/exe", ignored);
  if (program.empty()) return "";
  const auto library = program.parent_path() / "librepro_audit_word_sums.so";
  return std::filesystem::is_regular_file(library, ignored) ? library.string() : "";
}

}  // namespace

std::string exec_python_runner(const std::string& python, int events_fd, const std::string& loaded_line) {
  // The command resolves the interpreter (common/program_path.h); a relative path here would be
  // looked up in whatever folder the worker runs in.
  if (python.empty() || python.front() != '/') return fmt::format("the interpreter {} is not an absolute path", python);
  if (::dup2(events_fd, STDOUT_FILENO) < 0) return fmt::format("dup2 failed: {}", std::strerror(errno));
  // What the runner takes from its environment is set here, whatever the user's environment held.
  const auto library = word_sums_library();
  for (const auto& [name, value] : {std::pair<const char*, std::string>{"REPRO_AUDIT_WORD_SUMS_LIBRARY", library},
                                    {"REPRO_AUDIT_WORKER_LOADED", loaded_line}})
    if (value.empty() ? ::unsetenv(name) != 0 : ::setenv(name, value.c_str(), 1) != 0)
      return fmt::format("cannot set {}: {}", name, std::strerror(errno));
  ::unsetenv(kWorkerPython);
  // -u: unbuffered, so a line the runner emits reaches the supervisor at once; -c: the runner needs
  // no file on disk. The runner's name in tracebacks is its argv[0].
  const std::string flag_u = "-u", flag_c = "-c", name = "repro-audit-python-runner";
  std::vector<char*> argv = {const_cast<char*>(python.c_str()), const_cast<char*>(flag_u.c_str()),
                             const_cast<char*>(flag_c.c_str()), const_cast<char*>(kPyCellRunner),
                             const_cast<char*>(name.c_str()),   nullptr};
  ::execv(python.c_str(), argv.data());
  return fmt::format("cannot start {}: {}", python, std::strerror(errno));
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
