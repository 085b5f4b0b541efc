// Every symbol of the C++ standard library an executable uses binds to libstdc++, whatever else the
// executable links (CMakeLists.txt puts libstdc++ first in each executable's load order).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>
#include "test_paths.h"

namespace fs = std::filesystem;

extern "C" int decoy_standard_library_marker();

namespace {

std::string command_output(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  while (auto n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  pclose(pipe);
  return output;
}

// Every executable of the build (from CMake), or those REPRO_AUDIT_CHECK_EXECUTABLES names (';'-separated:
// a build of the binary alone against another libtorch, as `tools/dev compat` makes).
std::vector<std::string> executables() {
  const char* chosen = std::getenv("REPRO_AUDIT_CHECK_EXECUTABLES");
  std::stringstream list(chosen ? chosen : test_paths::kExecutables);
  std::vector<std::string> paths;
  for (std::string path; std::getline(list, path, ';');)
    if (!path.empty()) paths.push_back(path);
  return paths;
}

bool is_standard_library(const std::string& path) {
  return fs::path(path).filename().string().starts_with("libstdc++.so");
}

// This executable links a library that defines std::filesystem::remove_all (a decoy that removes
// nothing), after its objects, as the executables link libtorch. The call still reaches libstdc++.
TEST(StandardLibrary, ACallThatAnotherLinkedLibraryAlsoDefinesReachesLibstdcxx) {
  const auto folder = fs::temp_directory_path() / ("standard-library-" + std::to_string(getpid()));
  fs::create_directories(folder / "inner");
  std::ofstream(folder / "inner" / "file") << "x";
  std::error_code error;
  const auto removed = fs::remove_all(folder, error);
  EXPECT_FALSE(error) << error.message();
  EXPECT_EQ(removed, 3u) << "4242 is the decoy's answer";
  EXPECT_FALSE(fs::exists(folder));

  // The same lookup the dynamic linker made, by name: the first definition in load order.
  void* symbol = dlsym(RTLD_DEFAULT, "_ZNSt10filesystem10remove_allERKNS_7__cxx114pathERSt10error_code");
  ASSERT_NE(symbol, nullptr);
  Dl_info info{};
  ASSERT_NE(dladdr(symbol, &info), 0);
  EXPECT_TRUE(is_standard_library(info.dli_fname)) << "bound to " << info.dli_fname;
}

// The decoy is really loaded and really defines the symbol: otherwise the test above proves nothing.
TEST(StandardLibrary, TheDecoyDefinesTheSymbolTheTestCalls) {
  EXPECT_EQ(decoy_standard_library_marker(), 42);
  void* decoy = dlopen("libdecoy_standard_library.so", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(decoy, nullptr) << "the decoy is not among the loaded libraries: " << dlerror();
  EXPECT_NE(dlsym(decoy, "_ZNSt10filesystem10remove_allERKNS_7__cxx114pathERSt10error_code"), nullptr);
  dlclose(decoy);
}

// libstdc++ is the first library each executable loads: nothing it links can take a symbol from it.
TEST(StandardLibrary, EveryExecutableLoadsLibstdcxxBeforeAnyOtherLibrary) {
  ASSERT_FALSE(executables().empty());
  for (const auto& executable : executables()) {
    ASSERT_TRUE(fs::exists(executable)) << executable << " was not built";
    // What `ldd` prints: the libraries in load order, breadth first, the executable's own first.
    const auto listed = command_output("LD_TRACE_LOADED_OBJECTS=1 '" + executable + "' 2>&1");
    std::vector<std::string> order;
    std::stringstream lines(listed);
    for (std::string line; std::getline(lines, line);) {
      std::smatch match;
      if (std::regex_search(line, match, std::regex(R"(^\s*(\S+) =>)"))) order.push_back(match[1]);
    }
    ASSERT_FALSE(order.empty()) << executable << ":\n" << listed;
    EXPECT_TRUE(is_standard_library(order.front())) << executable << " loads " << order.front() << " first:\n"
                                                    << listed;
  }
}

// A symbol libstdc++ itself defines (this process has it loaded: it is linked first here too).
bool defined_by_libstdcxx(const std::string& symbol) {
  static void* library = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
  void* address = library ? dlsym(library, symbol.c_str()) : nullptr;
  Dl_info info{};
  return address && dladdr(address, &info) != 0 && info.dli_fname && is_standard_library(info.dli_fname);
}

// Every symbol libstdc++ defines that an executable uses is bound to libstdc++ (or, a copy relocation
// such as a vtable or std::cout, to the executable's own copy, which libstdc++ uses too) when all of
// its relocations are resolved at start-up. A binding to an unversioned copy elsewhere (torch 2.11's
// std::filesystem) carries no version in the log, so the symbols are told by name.
TEST(StandardLibrary, EveryStandardLibrarySymbolOfEveryExecutableBindsToLibstdcxx) {
  for (const auto& executable : executables()) {
    const auto log = fs::temp_directory_path() / ("bindings-" + std::to_string(getpid()));
    // --help: the executables start and stop without work; LD_BIND_NOW resolves every symbol first.
    command_output("LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT='" + log.string() + "' '" + executable +
                   "' --help > /dev/null 2>&1");
    std::map<std::string, std::string> wrong;  // symbol -> library
    std::size_t checked = 0;
    const std::regex binding(R"(binding file (\S+) \[0\] to (\S+) \[0\]: normal symbol `([^']+)')");
    for (const auto& entry : fs::directory_iterator(log.parent_path())) {
      if (!entry.path().filename().string().starts_with(log.filename().string() + ".")) continue;
      std::ifstream in(entry.path());
      for (std::string line; std::getline(in, line);) {
        std::smatch match;
        if (!std::regex_search(line, match, binding) || match[1] != executable) continue;
        if (!defined_by_libstdcxx(match[3])) continue;
        ++checked;
        if (!is_standard_library(match[2]) && match[2] != executable) wrong[match[3]] = match[2];
      }
      fs::remove(entry.path());
    }
    EXPECT_GT(checked, 0u) << executable << ": no standard-library binding was seen";
    for (const auto& [symbol, library] : wrong)
      ADD_FAILURE() << executable << ": " << symbol << " bound to " << library;
  }
}

}  // namespace
