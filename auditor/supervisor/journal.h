#pragma once
// The audit's journal: a folder holding the audit's header and one file per finished cell run
// (cell, process), each written atomically the moment it arrives. A killed audit resumes from it
// without repeating or losing a cell.
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

class Journal {
 public:
  // Starts a journal in `folder` (created; it must not already hold one).
  static Journal create(const std::string& folder, const nlohmann::json& header);
  // Opens an existing journal; throws UserError when the folder holds none or a file is malformed.
  static Journal open(const std::string& folder);

  const std::string& folder() const { return folder_; }
  const nlohmann::json& header() const { return header_; }
  void record(const Cell& cell, const ProcessObservation& observation) const;
  // Every finished cell run, in no particular order.
  std::vector<JournalEntry> entries() const;

 private:
  Journal(std::string folder, nlohmann::json header) : folder_(std::move(folder)), header_(std::move(header)) {}
  std::string folder_;
  nlohmann::json header_;
};

}  // namespace repro_audit
