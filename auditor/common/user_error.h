#pragma once
// The one exception type for mistakes a user can fix: bad config, bad arguments, unreadable files.
// The CLI catches it once and exits with code 2.
#include <stdexcept>
#include <string>

namespace repro_audit {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
  // `file:line:column: message`, lines and columns counted from 1 as editors do.
  UserError(const std::string& file, int line, int column, const std::string& message)
      : std::runtime_error(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message) {}
};

// A failure of the machine the tool runs on, not of a cell: the temporary folder gone or unwritable,
// a full disk, the binary removed, no process or pipe to be had. It is never a cell's verdict: the
// audit ends (exit 2) naming the problem and the path, its finished cells kept in the journal.
class EnvironmentError : public UserError {
 public:
  using UserError::UserError;
};

}  // namespace repro_audit
