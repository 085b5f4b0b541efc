#pragma once
#include <signal.h>

#include <string>
#include <vector>

namespace repro_audit {

// Writes a temporary file beside `path`, flushes it to disk, then renames it over `path`:
// a reader sees the old file or the new one, never a torn one. A link is followed and the file it
// names replaced (the link stays); a character device, a FIFO or /dev/stdout is written through, never
// replaced (common/output_target.h). Throws UserError on failure.
void write_file_atomically(const std::string& path, std::string content);
// The same for a file the tool owns (FileContent::own): a link at `path` is replaced, not followed.
void write_own_file_atomically(const std::string& path, std::string content);

// Why the writer could not create its temporary in `folder`, or "" when it can. The file made to prove
// it is unnamed (O_TMPFILE) and never appears in the folder, so no moment of the check, a signal
// included, leaves anything there; where the filesystem has no unnamed files, a named one is made and
// removed with signals held.
std::string creation_problem(const std::string& folder);

struct FileContent {
  std::string path;
  std::string content;
  // A file the tool owns in a folder it owns (a journal's entries and header): whatever is at `path`, a
  // link (dangling or not), a FIFO or a device, is replaced, never written through or followed.
  bool own = false;
};

// While one lives, the stop signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM) are held: on leaving,
// the first one that arrived is raised again under the handlers from before (so a Ctrl-C still ends the program, or
// asks it to stop, once the files are complete). Output that must be all there or absent is written under one.
class DeferredSignals {
 public:
  DeferredSignals();
  ~DeferredSignals();
  DeferredSignals(const DeferredSignals&) = delete;
  DeferredSignals& operator=(const DeferredSignals&) = delete;

 private:
  struct sigaction previous_[7];  // one for each signal held
};

// Writes every file, even after one fails: a full disk or a bad path loses that file, not the others.
// Returns one message per file that could not be written (each names its path); empty when all were.
// Every temporary file is written before the first is renamed, with signals held (DeferredSignals): an
// interruption leaves all of the outputs or none of them, and no temporary file. A temporary is unnamed
// (O_TMPFILE) while it is written and flushed, where the filesystem allows: not even a SIGKILL then
// leaves it in the folder.
std::vector<std::string> write_files_atomically(const std::vector<FileContent>& files);

}  // namespace repro_audit
