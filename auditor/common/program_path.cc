#include "common/program_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "common/user_error.h"

namespace repro_audit {
namespace {

// Why `path` cannot be run as a program; "" when it can. stat follows links, so a link to a
// program is that program.
std::string run_problem(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0)
    return errno == ENOENT || errno == ENOTDIR ? "no such file" : std::string(std::strerror(errno));
  if (S_ISDIR(status.st_mode)) return "is a folder, not a program";
  if (!S_ISREG(status.st_mode)) return "is not a regular file";
  if (::access(path.c_str(), X_OK) != 0) return std::string("is not executable (") + std::strerror(errno) + ")";
  return "";
}

std::string absolute(const std::string& path) {
  std::error_code ignored;
  const auto made = std::filesystem::absolute(path, ignored);
  return made.empty() ? path : made.lexically_normal().string();
}

}  // namespace

ProgramLookup find_program(const std::string& word, const std::string& search_path) {
  if (word.empty()) return {"", "give a program's name (looked up on PATH) or its path"};
  if (word.find('/') != std::string::npos) {
    auto problem = run_problem(word);
    return {problem.empty() ? absolute(word) : "", std::move(problem)};
  }
  std::string_view folders = search_path;
  while (!folders.empty()) {
    const auto colon = folders.find(':');
    const auto folder = folders.substr(0, colon);
    if (!folder.empty()) {
      const auto candidate = std::string(folder) + "/" + word;
      if (run_problem(candidate).empty()) return {absolute(candidate), ""};
    }
    if (colon == std::string_view::npos) break;
    folders.remove_prefix(colon + 1);
  }
  return {"", "no such program on PATH (a program in the current folder is named ./" + word + ")"};
}

std::string program_path(const std::string& option, const std::string& word) {
  const char* search_path = std::getenv("PATH");
  auto found = find_program(word, search_path ? search_path : "");
  if (!found.problem.empty()) throw UserError(option + (word.empty() ? "" : " " + word) + ": " + found.problem);
  return found.path;
}

}  // namespace repro_audit
