#include "supervisor/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <fmt/format.h>

#include "common/input_file.h"
#include "common/user_error.h"
#include "hash/digest.h"
#include "common/atomic_file.h"
#include "protocol/observation_json.h"
#include "common/json_number.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;
constexpr const char* kHeaderFile = "audit.json";
constexpr const char* kLockFile = "lock";

nlohmann::json read_json(const fs::path& path) {
  return parse_json_input(read_input_file(path.string(), "journal file", kMaxJournalBytes), path.string());
}

// Creates the folder when asked; a file in its place, or a folder that cannot be made, is the user's to fix.
void prepare_folder(const std::string& folder, bool create) {
  std::error_code error;
  if (fs::exists(folder, error) && !fs::is_directory(folder, error))
    throw UserError(fmt::format("{}: not a folder; give a folder for the journal", folder));
  if (create) fs::create_directories(folder, error);
  if (error) throw UserError(fmt::format("{}: cannot create the journal folder: {}", folder, error.message()));
  if (!fs::is_directory(folder, error)) {
    if (fs::exists(folder, error))
      throw UserError(fmt::format("{}: not a folder; give a folder for the journal", folder));
    throw UserError(fmt::format("{}: no such journal folder", folder));
  }
}

// flock, not a lock file's existence: the lock ends with its holder, even after kill -9.
int lock_folder(const std::string& folder) {
  const auto path = (fs::path(folder) / kLockFile).string();
  // The lock is the journal's own file: a link there (to a user's file, or in a shared folder to
  // another user's) is refused, never followed and truncated; a FIFO or device opens without waiting.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ELOOP)
    throw UserError(fmt::format("{}: is a link; a journal's lock is a file of its own: remove the link", path));
  if (fd < 0) throw UserError(fmt::format("{}: cannot lock the journal: {}", path, std::strerror(errno)));
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode) || status.st_nlink != 1) {
    ::close(fd);
    throw UserError(fmt::format("{}: is not a file of the journal's own ({}); remove it", path,
                                !S_ISREG(status.st_mode) ? "not a regular file" : "a file with other names too"));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int reason = errno;
    char holder[32] = {};
    const auto n = ::pread(fd, holder, sizeof holder - 1, 0);
    ::close(fd);
    if (reason == EWOULDBLOCK)
      throw UserError(
          fmt::format("{}: the journal is in use by another running audit{}; wait for it to end or give "
                      "another --journal",
                      folder, n > 0 ? fmt::format(" (pid {})", std::string(holder, n)) : ""));
    throw UserError(fmt::format("{}: cannot lock the journal: {}", path, std::strerror(reason)));
  }
  const auto pid = std::to_string(::getpid());
  if (::ftruncate(fd, 0) == 0 && ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The pid only makes the "in use" message friendlier; the lock itself is taken.
  }
  return fd;
}

// Entries are named by cell and process, so a cell run's new entry replaces its old one.
std::string entry_file_name(const std::string& key, int process) {
  return fmt::format("cell-{}.json", digest_text(key + "#" + std::to_string(process)));
}

// An entry as read, before it is trusted.
struct ReadEntry {
  JournalEntry entry;
  std::string problem;      // set when it cannot be read at all
  std::string observation;  // its observation as written, to tell entries for one cell run apart
  std::optional<int> version;
  std::optional<std::string> audit;
  bool name_matches = false;
  bool process_matches = false;
};

ReadEntry read_entry(const fs::path& path) {
  ReadEntry read;
  try {
    const auto j = read_json(path);
    if (!j.is_object() || !j.contains("key") || !j.contains("process") || !j.contains("observation")) {
      read.problem = "without their cell key, process or observation";
      return read;
    }
    read.entry.key = j.at("key").get<std::string>();
    read.entry.observation = j.at("observation").get<ProcessObservation>();
    const int process = json_integer<int>(j.at("process"));
    read.process_matches = !j.at("observation").contains("process") || read.entry.observation.process == process;
    read.entry.observation.process = process;
    read.observation = j.at("observation").dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (j.contains("version")) read.version = json_integer<int>(j.at("version"));
    if (j.contains("audit")) read.audit = j.at("audit").get<std::string>();
    read.name_matches = path.filename().string() == entry_file_name(read.entry.key, process);
  } catch (const std::exception&) {
    // A torn disk or a hand edit loses one cell run, not the audit.
    read.problem = "unreadable or malformed";
  }
  return read;
}

// Why an entry that could be read cannot be trusted, or "" when it can.
std::string provenance_problem(const ReadEntry& read, bool v1_journal, bool v1_fingerprinted,
                               const std::string& audit_digest) {
  if (!read.name_matches) return "filed under another cell run's name";
  if (!read.process_matches) return "naming another process than their observation";
  if (read.version && *read.version != kJournalEntryVersion) return "of an unknown format version";
  if (!read.version && !v1_journal) return "without a format version";
  if (read.audit) return *read.audit == audit_digest ? "" : "written by an audit of another config";
  // The versions before the fingerprint wrote neither field. Once a version that writes the fingerprint
  // has written to a /1 journal, an entry there without one has lost it.
  if (!v1_journal || read.version || v1_fingerprinted) return "without their audit's fingerprint";
  return "";
}

}  // namespace

Journal::Journal(Journal&& other) noexcept
    : folder_(std::move(other.folder_)), header_(std::move(other.header_)), lock_fd_(other.lock_fd_) {
  other.lock_fd_ = -1;
}

Journal::~Journal() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Journal Journal::create(const std::string& folder, const nlohmann::json& header) {
  prepare_folder(folder, true);
  const int lock = lock_folder(folder);
  if (fs::exists(fs::path(folder) / kHeaderFile)) {
    ::close(lock);
    throw UserError(fmt::format("{}: already holds a journal; resume it with --resume {}", folder, folder));
  }
  auto full = header;
  full["schema"] = kJournalSchema;
  try {
    write_own_file_atomically((fs::path(folder) / kHeaderFile).string(),
                              full.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  } catch (...) {
    ::close(lock);
    throw;
  }
  return Journal(folder, full, lock);
}

void Journal::set_header_field(const std::string& name, const nlohmann::json& value) {
  auto header = header_;
  header[name] = value;
  write_own_file_atomically((fs::path(folder_) / kHeaderFile).string(),
                            header.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  header_ = std::move(header);
}

Journal Journal::open(const std::string& folder) {
  prepare_folder(folder, false);
  const int lock = lock_folder(folder);
  try {
    const auto header_path = fs::path(folder) / kHeaderFile;
    if (!fs::exists(header_path))
      throw UserError(fmt::format("{}: not a repro-audit journal (no {})", folder, kHeaderFile));
    auto header = read_json(header_path);
    const auto schema = header.is_object() ? header.value("schema", "") : "";
    if (schema != kJournalSchema && schema != kJournalSchemaV1)
      throw UserError(fmt::format("{}: not a repro-audit journal (expected \"schema\": \"{}\")", header_path.string(),
                                  kJournalSchema));
    return Journal(folder, std::move(header), lock);
  } catch (...) {
    ::close(lock);
    throw;
  }
}

void Journal::record(const Cell& cell, const ProcessObservation& observation) const {
  const auto name = entry_file_name(cell.key, observation.process);
  const nlohmann::json entry = {{"version", kJournalEntryVersion},
                                {"key", cell.key},
                                {"process", observation.process},
                                {"audit", audit_digest()},
                                {"observation", observation}};
  write_own_file_atomically((fs::path(folder_) / name).string(),
                            entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

std::string Journal::audit_digest() const {
  const auto config = header_.is_object() ? header_.value("config", nlohmann::json()) : nlohmann::json();
  const auto device = header_.is_object() ? header_.value("device", nlohmann::json()) : nlohmann::json();
  return digest_text(config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "@" +
                     device.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

JournalEntries Journal::entries() const {
  std::vector<ReadEntry> read;
  for (const auto& file : fs::directory_iterator(folder_)) {
    const auto name = file.path().filename().string();
    if (name.rfind("cell-", 0) != 0 || file.path().extension() != ".json") continue;  // temporaries start with '.'
    read.push_back(read_entry(file.path()));
  }
  // Two entries for one cell run that disagree: nothing says which is the audit's, so neither is.
  std::map<std::pair<std::string, int>, std::set<std::string>> versions;
  for (const auto& entry : read)
    if (entry.problem.empty()) versions[{entry.entry.key, entry.entry.observation.process}].insert(entry.observation);
  const bool v1 = header_.value("schema", "") == kJournalSchemaV1;
  const bool fingerprinted = std::any_of(read.begin(), read.end(), [](const ReadEntry& entry) {
    return entry.problem.empty() && entry.audit && !entry.version;
  });
  JournalEntries result;
  for (auto& entry : read) {
    auto problem = entry.problem;
    if (problem.empty() && versions.at({entry.entry.key, entry.entry.observation.process}).size() > 1)
      problem = "disagreeing with another entry for the same cell run";
    if (problem.empty()) problem = provenance_problem(entry, v1, fingerprinted, audit_digest());
    if (problem.empty())
      result.entries.push_back(std::move(entry.entry));
    else
      ++result.set_aside[problem];
  }
  return result;
}

std::string set_aside_message(const std::string& folder, const SetAsideEntries& set_aside) {
  int total = 0;
  std::string reasons;
  for (const auto& [reason, count] : set_aside) {
    total += count;
    reasons += fmt::format("{}{} {}", reasons.empty() ? "" : "; ", count, reason);
  }
  if (total == 0) return "";
  return fmt::format("{}: {} journal {} set aside, their cell runs run again: {}", folder, total,
                     total == 1 ? "entry" : "entries", reasons);
}

}  // namespace repro_audit
