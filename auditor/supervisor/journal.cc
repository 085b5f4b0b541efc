#include "supervisor/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

#include "config/input_file.h"
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
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw UserError(fmt::format("{}: cannot lock the journal: {}", path, std::strerror(errno)));
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
    write_file_atomically((fs::path(folder) / kHeaderFile).string(),
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
  write_file_atomically((fs::path(folder_) / kHeaderFile).string(),
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
    if (!header.is_object() || header.value("schema", "") != kJournalSchema)
      throw UserError(fmt::format("{}: not a repro-audit journal (expected \"schema\": \"{}\")", header_path.string(),
                                  kJournalSchema));
    return Journal(folder, std::move(header), lock);
  } catch (...) {
    ::close(lock);
    throw;
  }
}

void Journal::record(const Cell& cell, const ProcessObservation& observation) const {
  const auto name = fmt::format("cell-{}.json", digest_text(cell.key + "#" + std::to_string(observation.process)));
  const nlohmann::json entry = {
      {"key", cell.key}, {"process", observation.process}, {"audit", audit_digest()}, {"observation", observation}};
  write_file_atomically((fs::path(folder_) / name).string(),
                        entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

std::string Journal::audit_digest() const {
  const auto config = header_.is_object() ? header_.value("config", nlohmann::json()) : nlohmann::json();
  const auto device = header_.is_object() ? header_.value("device", nlohmann::json()) : nlohmann::json();
  return digest_text(config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "@" +
                     device.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

JournalEntries Journal::entries() const {
  JournalEntries result;
  for (const auto& file : fs::directory_iterator(folder_)) {
    const auto name = file.path().filename().string();
    if (name.rfind("cell-", 0) != 0 || file.path().extension() != ".json") continue;  // temporaries start with '.'
    try {
      const auto entry = read_json(file.path());
      // An entry of another audit (copied in, or left by one with other repeats or settings) would join
      // this audit's runs under its config; entries of versions that wrote no digest are taken as they are.
      if (entry.contains("audit") && entry.at("audit") != audit_digest())
        throw std::runtime_error("it was written by an audit of another config");
      result.entries.push_back({entry.at("key").get<std::string>(), entry.at("observation").get<ProcessObservation>()});
      result.entries.back().observation.process = json_integer<int>(entry.at("process"));
    } catch (const std::exception& error) {
      // A torn disk or a hand edit loses one cell run, not the audit: it runs again and its new entry
      // replaces this file (entries are named by cell and process).
      result.warnings.push_back(
          fmt::format("{}: skipped, its cell runs again: {}", file.path().string(), error.what()));
    }
  }
  return result;
}

}  // namespace repro_audit
