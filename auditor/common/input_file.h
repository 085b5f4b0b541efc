#pragma once
// The one bounded, validated path by which every input file is read: a size cap per kind of file,
// read errors reported instead of taken as an empty file, and a nesting limit for JSON.
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace repro_audit {

// Caps far above any real file, so they only ever stop a wrong path (/dev/zero) or a hostile file
// before it exhausts memory. A config of the full catalogue is a few KiB.
inline constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;  // config and gate policy
// A journal entry holds one cell's runs: a few KiB, up to a few MiB with long kernel traces.
inline constexpr std::size_t kMaxJournalBytes = std::size_t{256} << 20;  // one journal header or entry file
// The full matrix on a large GPU is tens of MiB of report; loading one takes about 4 times the file in
// memory (its text, and its cells one by one: 10^5 cells, 283 MB, took 1.2 GB).
inline constexpr std::size_t kMaxReportBytes = std::size_t{2} << 30;  // reports and baselines
// Real files nest fewer than 10 levels; the limit keeps recursive code (copies, printers) off the stack's end.
inline constexpr int kMaxNestingDepth = 64;  // JSON and YAML

// Why `path` cannot be an input file ("does not exist", "is a FIFO, not a regular file", "is a
// character device, not a regular file", ...), or "" for a regular file (a link is followed). It looks
// without opening: opening a FIFO waits for a writer. Every command's file inputs are checked by it.
std::string input_file_problem(const std::string& path);

// Reads the whole file, at most `max_bytes`. `what` names the kind of file in messages ("config",
// "gate policy"). Throws UserError("PATH: cannot read the WHAT: REASON") for a missing file, anything
// but a regular file (never blocking on a FIFO) or a read error, and UserError("PATH: larger than N MiB,
// the limit for a WHAT").
std::string read_input_file(const std::string& path, const std::string& what, std::size_t max_bytes);

// Parses JSON nested at most kMaxNestingDepth deep. Throws UserError naming `source` and the byte
// offset for invalid or too deeply nested JSON.
nlohmann::json parse_json_input(const std::string& text, const std::string& source);

// As above, but each element of the root object's array `streamed_key` goes to `take` as soon as it
// is parsed and is not kept (the array stays empty in the result): a large report's cells are never
// all held as JSON at once.
nlohmann::json parse_json_input(const std::string& text, const std::string& source, const std::string& streamed_key,
                                const std::function<void(nlohmann::json&&)>& take);

// The form of every digest in reports and baselines: XXH3-128 as 32 lower-case hex digits.
bool is_digest(std::string_view text);

}  // namespace repro_audit
