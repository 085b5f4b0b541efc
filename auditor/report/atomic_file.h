#pragma once
#include <string>

namespace repro_audit {

// Writes a temporary file beside `path`, flushes it to disk, then renames it over `path`:
// a reader sees the old file or the new one, never a torn one. Throws UserError on failure.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace repro_audit
