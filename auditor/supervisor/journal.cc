#include "supervisor/journal.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "config/user_error.h"
#include "hash/digest.h"
#include "report/atomic_file.h"
#include "report/json_io.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;
constexpr const char* kHeaderFile = "audit.json";

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw UserError(fmt::format("{}: cannot read", path.string()));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& error) {
    throw UserError(fmt::format("{}: malformed journal file: {}", path.string(), error.what()));
  }
}

}  // namespace

Journal Journal::create(const std::string& folder, const nlohmann::json& header) {
  fs::create_directories(folder);
  if (fs::exists(fs::path(folder) / kHeaderFile))
    throw UserError(fmt::format("{}: already holds a journal; resume it with --resume {}", folder, folder));
  auto full = header;
  full["schema"] = kJournalSchema;
  write_file_atomically((fs::path(folder) / kHeaderFile).string(), full.dump(2) + "\n");
  return Journal(folder, full);
}

Journal Journal::open(const std::string& folder) {
  const auto header_path = fs::path(folder) / kHeaderFile;
  if (!fs::exists(header_path))
    throw UserError(fmt::format("{}: not a repro-audit journal (no {})", folder, kHeaderFile));
  auto header = read_json(header_path);
  if (!header.is_object() || header.value("schema", "") != kJournalSchema)
    throw UserError(fmt::format("{}: not a repro-audit journal (expected \"schema\": \"{}\")", header_path.string(),
                                kJournalSchema));
  return Journal(folder, std::move(header));
}

void Journal::record(const Cell& cell, const ProcessObservation& observation) const {
  const auto name = fmt::format("cell-{}.json", digest_text(cell.key + "#" + std::to_string(observation.process)));
  const nlohmann::json entry = {{"key", cell.key}, {"process", observation.process}, {"observation", observation}};
  write_file_atomically((fs::path(folder_) / name).string(), entry.dump() + "\n");
}

std::vector<JournalEntry> Journal::entries() const {
  std::vector<JournalEntry> result;
  for (const auto& file : fs::directory_iterator(folder_)) {
    const auto name = file.path().filename().string();
    if (name.rfind("cell-", 0) != 0 || file.path().extension() != ".json") continue;  // temporaries start with '.'
    const auto entry = read_json(file.path());
    try {
      result.push_back({entry.at("key").get<std::string>(), entry.at("observation").get<ProcessObservation>()});
    } catch (const nlohmann::json::exception& error) {
      throw UserError(fmt::format("{}: malformed journal entry: {}", file.path().string(), error.what()));
    }
  }
  return result;
}

}  // namespace repro_audit
