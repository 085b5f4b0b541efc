#include "cli/standard_library.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace repro_audit {
namespace {

constexpr const char* kPreloaded = "REPRO_AUDIT_STANDARD_LIBRARY_PRELOADED";

// The file that defines what this process calls as std::filesystem::remove_all.
std::string remove_all_library() {
  using RemoveAll = std::uintmax_t (*)(const std::filesystem::path&, std::error_code&);
  const RemoveAll function = &std::filesystem::remove_all;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(function), &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

// The loaded libstdc++'s path, or "" when none is loaded.
std::string standard_library_path() {
  void* handle = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return "";
  link_map* map = nullptr;
  std::string path;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr) path = map->l_name;
  dlclose(handle);
  return path;
}

}  // namespace

void ensure_standard_library_first(char** argv) {
  const auto library = remove_all_library();
  if (library.empty() || library.find("libstdc++") != std::string::npos) return;
  if (std::getenv(kPreloaded) != nullptr) return;  // once: never a loop
  const auto path = standard_library_path();
  if (path.empty()) return;
  const char* preload = std::getenv("LD_PRELOAD");
  const auto value = preload != nullptr && *preload != '\0' ? path + ":" + preload : path;
  setenv("LD_PRELOAD", value.c_str(), 1);
  setenv(kPreloaded, "1", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then go on as before
}

}  // namespace repro_audit
