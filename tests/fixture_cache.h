// Test fixtures that take long to make (an AOTInductor package compiles for ~25 s) kept between test
// runs under ~/.cache/repro-audit/test-fixtures, keyed by what made them: the same script (its text,
// wherever the checkout is) run by the same interpreter makes the same file. A cold cache (a new
// machine) makes it, and the test is the same.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <system_error>

namespace repro_audit::testing {

inline std::filesystem::path fixture_cache_folder() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && *xdg) return std::filesystem::path(xdg) / "repro-audit" / "test-fixtures";
  return std::filesystem::path(home && *home ? home : "/tmp") / ".cache" / "repro-audit" / "test-fixtures";
}

// Runs `command` (which writes `file`) unless a file made by the same command from the same `script`
// is cached; copies the cached one to `file` then. Returns the command's status (0 from the cache).
inline int make_fixture(const std::string& script, const std::string& command, const std::string& file) {
  std::ifstream in(script, std::ios::binary);
  std::ostringstream text;
  // The key holds the script's text and the command with the script and the file's folder left out, not
  // their paths: a fresh clone elsewhere, or a test in another temporary folder, finds what this one made.
  const auto replace_all = [](std::string where, const std::string& from, const std::string& to) {
    if (from.empty()) return where;
    for (auto at = where.find(from); at != std::string::npos; at = where.find(from, at + to.size()))
      where.replace(at, from.size(), to);
    return where;
  };
  const auto folder = std::filesystem::path(file).parent_path().string();
  auto made_by = replace_all(command, script, std::filesystem::path(script).filename().string());
  if (!folder.empty()) made_by = replace_all(made_by, folder + "/", "");
  text << in.rdbuf() << '\0' << made_by;
  const auto cached = fixture_cache_folder() / fmt::format("{:016x}-{}", std::hash<std::string>{}(text.str()),
                                                           std::filesystem::path(file).filename().string());
  std::error_code error;
  if (std::filesystem::is_regular_file(cached, error) &&
      std::filesystem::copy_file(cached, file, std::filesystem::copy_options::overwrite_existing, error))
    return 0;
  const int status = std::system(command.c_str());
  if (status != 0) return status;
  std::filesystem::create_directories(cached.parent_path(), error);
  const auto partial = cached.string() + fmt::format(".{}.partial", ::getpid());
  if (std::filesystem::copy_file(file, partial, std::filesystem::copy_options::overwrite_existing, error))
    std::filesystem::rename(partial, cached, error);  // whole or not at all, whoever else is writing it
  std::filesystem::remove(partial, error);
  return 0;
}

}  // namespace repro_audit::testing
