// Preloaded into the binary (LD_PRELOAD) by the CLI tests: the Nth file the process creates in one
// folder makes it signal itself right after the creation returns, so a test hits the moment a
// temporary file exists every time instead of by chance. The environment says what to watch:
//   REPRO_AUDIT_TEST_WATCH   the folder
//   REPRO_AUDIT_TEST_SIGNAL  the signal's number
//   REPRO_AUDIT_TEST_AT      which creation in that folder signals (1: the first)
//   REPRO_AUDIT_TEST_NO_UNNAMED  when set, O_TMPFILE fails as on a filesystem without unnamed files
// A creation is an open with O_CREAT or O_TMPFILE, or a mkstemp-like call.
#undef _FORTIFY_SOURCE  // its inline open() would clash with the one defined here
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <string>

namespace {

std::atomic<int> created{0};

// The folder a path names (the path itself for O_TMPFILE, else its parent), made absolute.
std::string folder_of(const char* path, bool is_folder) {
  std::string text(path ? path : "");
  if (!is_folder) {
    const auto slash = text.rfind('/');
    text = slash == std::string::npos ? "." : slash == 0 ? "/" : text.substr(0, slash);
  }
  char resolved[PATH_MAX];
  return ::realpath(text.c_str(), resolved) ? std::string(resolved) : std::string();
}

void after_creation(int result, const char* path, bool is_folder) {
  const char* watched = ::getenv("REPRO_AUDIT_TEST_WATCH");
  if (result < 0 || !watched || !*watched) return;
  char resolved[PATH_MAX];
  if (!::realpath(watched, resolved) || folder_of(path, is_folder) != resolved) return;
  const char* at = ::getenv("REPRO_AUDIT_TEST_AT");
  const char* signal = ::getenv("REPRO_AUDIT_TEST_SIGNAL");
  if (++created == (at ? ::atoi(at) : 1) && signal) ::kill(::getpid(), ::atoi(signal));
}

template <typename Function>
Function next(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

bool creates(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

bool refuse_unnamed(int flags) {
  if ((flags & O_TMPFILE) != O_TMPFILE || !::getenv("REPRO_AUDIT_TEST_NO_UNNAMED")) return false;
  errno = EOPNOTSUPP;
  return true;
}

}  // namespace

#define REPRO_AUDIT_WRAP_OPEN(name)                                                              \
  extern "C" __attribute__((visibility("default"))) int name(const char* path, int flags, ...) { \
    va_list arguments;                                                                           \
    va_start(arguments, flags);                                                                  \
    const mode_t mode = creates(flags) ? va_arg(arguments, mode_t) : 0;                          \
    va_end(arguments);                                                                           \
    static const auto real = next<int (*)(const char*, int, ...)>(#name);                        \
    const int result = real(path, flags, mode);                                                  \
    if (creates(flags)) after_creation(result, path, (flags & O_TMPFILE) == O_TMPFILE);          \
    return result;                                                                               \
  }

#define REPRO_AUDIT_WRAP_OPENAT(name)                                                                        \
  extern "C" __attribute__((visibility("default"))) int name(int folder, const char* path, int flags, ...) { \
    va_list arguments;                                                                                       \
    va_start(arguments, flags);                                                                              \
    const mode_t mode = creates(flags) ? va_arg(arguments, mode_t) : 0;                                      \
    va_end(arguments);                                                                                       \
    static const auto real = next<int (*)(int, const char*, int, ...)>(#name);                               \
    const int result = real(folder, path, flags, mode);                                                      \
    /* Only paths the working folder resolves are watched: the tool opens by path. */                        \
    if (creates(flags) && (folder == AT_FDCWD || path[0] == '/'))                                            \
      after_creation(result, path, (flags & O_TMPFILE) == O_TMPFILE);                                        \
    return result;                                                                                           \
  }

#define REPRO_AUDIT_WRAP_MKSTEMP(name)                                        \
  extern "C" __attribute__((visibility("default"))) int name(char* pattern) { \
    static const auto real = next<int (*)(char*)>(#name);                     \
    const int result = real(pattern);                                         \
    after_creation(result, pattern, false);                                   \
    return result;                                                            \
  }

#define REPRO_AUDIT_WRAP_MKOSTEMP(name)                                                  \
  extern "C" __attribute__((visibility("default"))) int name(char* pattern, int flags) { \
    static const auto real = next<int (*)(char*, int)>(#name);                           \
    const int result = real(pattern, flags);                                             \
    after_creation(result, pattern, false);                                              \
    return result;                                                                       \
  }

REPRO_AUDIT_WRAP_OPEN(open)
REPRO_AUDIT_WRAP_OPEN(open64)
REPRO_AUDIT_WRAP_OPENAT(openat)
REPRO_AUDIT_WRAP_OPENAT(openat64)
REPRO_AUDIT_WRAP_MKSTEMP(mkstemp)
REPRO_AUDIT_WRAP_MKSTEMP(mkstemp64)
REPRO_AUDIT_WRAP_MKOSTEMP(mkostemp)
REPRO_AUDIT_WRAP_MKOSTEMP(mkostemp64)
