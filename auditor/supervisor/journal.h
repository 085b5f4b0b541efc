#pragma once
// The audit's journal: a folder holding the audit's header and one file per finished cell run
// (cell, process), each written atomically the moment it arrives. A killed audit resumes from it
// without repeating or losing a cell. One audit at a time: an open journal holds an exclusive lock.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "plan/plan.h"
#include "verdict/observation.h"

namespace repro_audit {

// Schema /2: every entry carries its format version and its audit's fingerprint, and only such an entry
// is used. Journals of /1 were written by versions whose entries had neither, or only the fingerprint.
inline constexpr const char* kJournalSchema = "repro-audit.journal/2";
inline constexpr const char* kJournalSchemaV1 = "repro-audit.journal/1";
inline constexpr int kJournalEntryVersion = 2;

struct JournalEntry {
  std::string key;
  ProcessObservation observation;
};

// Entries not used, counted by why; their cell runs run again.
using SetAsideEntries = std::map<std::string, int>;

struct JournalEntries {
  std::vector<JournalEntry> entries;  // at most one per (cell, process), each with its provenance checked
  SetAsideEntries set_aside;
};

// One line for every entry set aside ("" when none): how many, and why.
std::string set_aside_message(const std::string& folder, const SetAsideEntries& set_aside);

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
  // Every finished cell run whose entry can be trusted, in no particular order. An entry is set aside
  // (its cell runs again) when it is unreadable, lacks a field that says where it came from (format
  // version, audit fingerprint, cell key, process), names another cell run than its file, was written by
  // another audit, or disagrees with another entry for the same cell run (then neither is used).
  JournalEntries entries() const;
  // The digest of the header's config and device, kept in every entry: an entry of another audit is
  // set aside (its cell runs again), never merged into this one's runs.
  std::string audit_digest() const;

 private:
  Journal(std::string folder, nlohmann::json header, int lock_fd)
      : folder_(std::move(folder)), header_(std::move(header)), lock_fd_(lock_fd) {}
  std::string folder_;
  nlohmann::json header_;
  int lock_fd_ = -1;
};

}  // namespace repro_audit
