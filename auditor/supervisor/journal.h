#pragma once
// The audit's journal: a folder holding the audit's header and one file per finished cell run
// (cell, process), each written atomically the moment it arrives. A killed audit resumes from it
// without repeating or losing a cell. One audit at a time: an open journal holds an exclusive lock.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "plan/plan.h"
#include "verdict/observation.h"

namespace repro_audit {

inline constexpr const char* kJournalSchema = "repro-audit.journal/1";

struct JournalEntry {
  std::string key;
  ProcessObservation observation;
};

struct JournalEntries {
  std::vector<JournalEntry> entries;
  std::vector<std::string> warnings;  // unreadable entries, skipped: their cell runs again
};

class Journal {
 public:
  // Starts a journal in `folder` (created; it must not already hold one).
  static Journal create(const std::string& folder, const nlohmann::json& header);
  // Opens an existing journal; throws UserError when the folder holds none or its header is malformed.
  static Journal open(const std::string& folder);
  // Both throw UserError when another audit holds the journal.

  Journal(Journal&& other) noexcept;
  Journal& operator=(Journal&&) = delete;
  Journal(const Journal&) = delete;
  ~Journal();

  const std::string& folder() const { return folder_; }
  const nlohmann::json& header() const { return header_; }
  // Adds a field to the header, rewritten atomically (an audit's shard, known once its plan is).
  void set_header_field(const std::string& name, const nlohmann::json& value);
  void record(const Cell& cell, const ProcessObservation& observation) const;
  // Every finished cell run, in no particular order; a corrupt entry is skipped with a warning.
  JournalEntries entries() const;
  // The digest of the header's config and device, kept in every entry: an entry of another audit is
  // skipped (its cell runs again), never merged into this one's runs.
  std::string audit_digest() const;

 private:
  Journal(std::string folder, nlohmann::json header, int lock_fd)
      : folder_(std::move(folder)), header_(std::move(header)), lock_fd_(lock_fd) {}
  std::string folder_;
  nlohmann::json header_;
  int lock_fd_ = -1;
};

}  // namespace repro_audit
