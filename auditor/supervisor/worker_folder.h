#pragma once
// A child process's own temporary folder: made in the temporary folder, given to the child as its
// TMPDIR, and removed when the child ends, whether it finished, crashed or was killed. What the child
// and its children make there (an AOTInductor package unpacked, the Python runner's fresh Inductor
// cache) goes with it; the Python runner gives the callable and torch the user's TMPDIR back. A
// folder whose owner was killed with SIGKILL is removed by the next audit that uses the same
// temporary folder: its owner holds a lock on it while it lives. The sweep removes only what provably
// is such a folder (remove_abandoned_worker_folders) and never waits on what another user made there.
// Beside it, the temporary folder's own facts: the user's TMPDIR, a file made there, what is wrong with it.
#include <optional>
#include <string>

namespace repro_audit {

// The TMPDIR the user gave, if any. Inside a child, whose TMPDIR is its own folder, the user's is kept
// in REPRO_AUDIT_TMPDIR (empty: none), so the child names and uses the same temporary folder.
std::optional<std::string> user_tmpdir();

// Creates and unlinks a file in `folder`; returns its descriptor. Throws EnvironmentError naming the folder.
int anonymous_file(const std::string& folder);

// "the temporary folder /x (TMPDIR) is missing: No such file or directory": what `error` (an errno) says
// of a temporary folder that a file or folder could not be made in.
std::string temporary_folder_problem(const std::string& folder, int error);

class WorkerFolder {
 public:
  // Throws EnvironmentError naming `parent` when no folder can be made there.
  explicit WorkerFolder(const std::string& parent);
  ~WorkerFolder();
  WorkerFolder(const WorkerFolder&) = delete;
  WorkerFolder& operator=(const WorkerFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int lock_fd_ = -1;
};

// Removes the children's folders in `folder` whose owner is gone (no process holds their lock);
// returns how many. A folder counts as one only when its name is exactly the generated one
// (repro-audit-worker-XXXXXX), it and its owner mark belong to this user, and the mark is a regular
// file (no link) holding the tool's text: a user's folder that shares the prefix, a folder of
// another user, or a FIFO or link as the mark is left alone, and nothing is waited for.
int remove_abandoned_worker_folders(const std::string& folder);

}  // namespace repro_audit
