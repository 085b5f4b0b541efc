#pragma once
// Where an output path's content goes. Renaming a new file over the path, as the atomic writer does,
// would turn a link into a regular file (`/dev/stdout` for every process after) and a device or FIFO
// into a file nobody reads; so a link is followed to what it names, and what is not a regular file is
// written through. Both the check before the work and the writer after it ask here.
#include <string>

namespace repro_audit {

struct OutputTarget {
  enum class Kind {
    replace,        // a regular file, or none yet: written beside `path`, then renamed over it
    write_through,  // a character device or a FIFO: `path` opened and written, as a shell's `>` does
    descriptor,     // one of this process's descriptors (/dev/stdout, /dev/fd/N): `descriptor` written
    refused,        // `reason` says why nothing can be written there
  };
  Kind kind = Kind::replace;
  std::string path;  // the file the links lead to (the path itself when it is no link)
  int descriptor = -1;
  std::string reason;
};

// Follows every link of `path` (relative targets from the link's folder) to what it names.
OutputTarget resolve_output(const std::string& path);

}  // namespace repro_audit
