#pragma once
// Some libtorch releases (2.11) export their own, broken, copies of libstdc++ functions
// (std::filesystem). The build links libstdc++ first (CMakeLists.txt), but a toolchain can still leave
// it out of the executable's own libraries (GCC 13.3 in /opt/gcc on an Ubuntu 24.04 GPU machine did):
// the executable's std::filesystem calls then bind to libtorch's copies and crash.

namespace repro_audit {

// When this process's std::filesystem::remove_all is not libstdc++'s, runs the program again (same
// arguments) with libstdc++ preloaded, which the dynamic linker then binds first. Returns when it is
// libstdc++'s already, or when running again is not possible (then nothing changes).
void ensure_standard_library_first(char** argv);

}  // namespace repro_audit
