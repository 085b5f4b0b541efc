// A shared library that defines a function of the C++ standard library, as some libtorch releases do
// (2.11 exports std::filesystem and std::chrono functions of its own). Linked after the objects, where
// libtorch goes, it must not take the executable's calls from libstdc++.
#include <filesystem>
#include <system_error>

namespace std::filesystem {

// The decoy: removes nothing and says so by a count no real call returns.
__attribute__((visibility("default"))) std::uintmax_t remove_all(const path&, std::error_code& error) {
  error = std::make_error_code(std::errc::operation_not_supported);
  return 4242;
}

}  // namespace std::filesystem

// Called by the test, so the library is loaded whatever the linker's --as-needed says.
extern "C" __attribute__((visibility("default"))) int decoy_standard_library_marker() { return 42; }
