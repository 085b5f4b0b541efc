#include "fingerprint/shared_library.h"

#include <dlfcn.h>
#include <link.h>

#include <filesystem>

namespace repro_audit {

SharedLibrary::SharedLibrary(const std::string& name) {
  // RTLD_LOCAL: the symbols serve this lookup only and never interpose on libtorch's.
  handle_ = dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* text = dlerror();
    error_ = text != nullptr ? text : name + ": cannot be loaded";
  }
}

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

std::string SharedLibrary::path() const {
  link_map* map = nullptr;
  if (handle_ == nullptr || dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return "";
  // A wheel's RPATH gives ".../torch/lib/../../nvidia/cu13/lib/libcublas.so.13": say it plainly.
  return std::filesystem::path(map->l_name).lexically_normal().string();
}

void* SharedLibrary::address(const char* symbol) const { return handle_ != nullptr ? dlsym(handle_, symbol) : nullptr; }

}  // namespace repro_audit
