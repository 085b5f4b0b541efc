#pragma once
// This build's binaries and the test data in the source tree. Defined in test_paths.cc, which CMake
// writes for each build (tests/CMakeLists.txt), not in compile flags or a generated header: a compiler
// cache then shares every test's object between clones, and only that one small file is compiled again.
namespace test_paths {

extern const char* const kSourceDir;
extern const char* const kGoldenDir;
extern const char* const kFuzzCorpusDir;
extern const char* const kFixtureDir;
// Every executable this build makes, separated by ';' (the link tests check each one's bindings).
extern const char* const kExecutables;
// The binary and the Python next to libtorch: empty in a build without the torch side.
extern const char* const kBinary;
extern const char* const kPython;
// The library the CLI tests preload to signal the binary as it creates a file (cli/signal_on_create.cc).
extern const char* const kSignalOnCreate;

}  // namespace test_paths
