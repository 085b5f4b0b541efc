#pragma once
// A shared library opened at run time. The fingerprint reads versions from libraries the process may
// or may not have (NVML, cuBLAS, NCCL): none of them is ever required, so none is linked.
#include <string>

namespace repro_audit {

class SharedLibrary {
 public:
  // dlopen(name); when `name` is already loaded (e.g. by libtorch) this is that same copy.
  explicit SharedLibrary(const std::string& name);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  // dlerror()'s text when the library could not be loaded.
  const std::string& error() const { return error_; }
  // The file the loader took, e.g. ".../nvidia/cu13/lib/libcublas.so.13"; empty when not loaded.
  std::string path() const;

  // The symbol as a function pointer of type Function, or nullptr when absent.
  template <typename Function>
  Function function(const char* symbol) const {
    return reinterpret_cast<Function>(address(symbol));
  }

 private:
  void* address(const char* symbol) const;

  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace repro_audit
