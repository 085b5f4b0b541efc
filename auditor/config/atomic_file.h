#pragma once
#include <string>
#include <vector>

namespace repro_audit {

// Writes a temporary file beside `path`, flushes it to disk, then renames it over `path`:
// a reader sees the old file or the new one, never a torn one. Throws UserError on failure.
void write_file_atomically(const std::string& path, const std::string& content);

struct FileContent {
  std::string path;
  std::string content;
};

// Writes every file, even after one fails: a full disk or a bad path loses that file, not the others.
// Returns one message per file that could not be written (each names its path); empty when all were.
std::vector<std::string> write_files_atomically(const std::vector<FileContent>& files);

}  // namespace repro_audit
