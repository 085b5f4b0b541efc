// Which journal entries an audit may trust: every entry names its format version, its audit's
// fingerprint, its cell and process, and the file it is in; two entries for one cell run that disagree
// are both set aside. Journals of earlier versions (tests/core/fixtures/journal-*: never edit them) load.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "hash/digest.h"
#include "supervisor/journal.h"
#include "test_paths.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

ProcessObservation observation(int process, const std::string& digest = std::string(32, 'a')) {
  ProcessObservation result;
  result.process = process;
  result.status = ObservationStatus::ok;
  RunObservation run;
  run.digest = digest;
  run.time_ns = 1000;
  result.runs = {run, run};
  return result;
}

Cell cell(const std::string& key) {
  Cell result;
  result.key = key;
  return result;
}

std::string file_of(const std::string& key, int process) {
  return "cell-" + digest_text(key + "#" + std::to_string(process)) + ".json";
}

class JournalEntriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("repro-audit-journal-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }

  // A journal of this version holding cell "a" (processes 0 and 1) and cell "b" (process 0).
  void write_journal() {
    const auto journal = Journal::create(folder_.string(), {{"config", {{"repeats", 2}}}, {"device", "cpu"}});
    journal.record(cell("a"), observation(0));
    journal.record(cell("a"), observation(1));
    journal.record(cell("b"), observation(0));
  }
  json read(const std::string& file) { return json::parse(std::ifstream(folder_ / file)); }
  void write(const std::string& file, const json& entry) { std::ofstream(folder_ / file) << entry.dump(); }
  JournalEntries entries() { return Journal::open(folder_.string()).entries(); }
  // A copy of a fixture journal, which a resumed audit would lock and write into.
  void copy_fixture(const std::string& name) {
    fs::copy(fs::path(test_paths::kFixtureDir) / name, folder_, fs::copy_options::recursive);
  }

  fs::path folder_;
};

TEST_F(JournalEntriesTest, EveryEntryOfThisVersionIsUsed) {
  write_journal();
  const auto read = entries();
  EXPECT_EQ(read.entries.size(), 3u);
  EXPECT_TRUE(read.set_aside.empty());
  EXPECT_EQ(set_aside_message(folder_.string(), read.set_aside), "");
  EXPECT_EQ(JournalEntriesTest::read("audit.json").at("schema"), kJournalSchema);
}

TEST_F(JournalEntriesTest, AnEntryLackingAFieldOfItsProvenanceIsSetAside) {
  write_journal();
  for (const char* field : {"audit", "version"}) {
    auto entry = read(file_of("a", 0));
    entry.erase(field);
    write(file_of("a", 0), entry);
    const auto read_back = entries();
    EXPECT_EQ(read_back.entries.size(), 2u) << field;
    ASSERT_EQ(read_back.set_aside.size(), 1u) << field;
    EXPECT_EQ(read_back.set_aside.begin()->second, 1) << field;
    EXPECT_NE(read_back.set_aside.begin()->first.find(field == std::string("audit") ? "fingerprint" : "version"),
              std::string::npos)
        << read_back.set_aside.begin()->first;
    Journal::open(folder_.string()).record(cell("a"), observation(0));  // as a rerun would
  }
  for (const char* field : {"key", "process", "observation"}) {
    auto entry = read(file_of("b", 0));
    entry.erase(field);
    write(file_of("b", 0), entry);
    const auto read_back = entries();
    EXPECT_EQ(read_back.entries.size(), 2u) << field;
    EXPECT_EQ(read_back.set_aside.at("without their cell key, process or observation"), 1) << field;
    Journal::open(folder_.string()).record(cell("b"), observation(0));
  }
}

TEST_F(JournalEntriesTest, AnEntryOfAnotherAuditOrAnotherVersionIsSetAside) {
  write_journal();
  auto entry = read(file_of("a", 0));
  entry["audit"] = std::string(32, '0');
  write(file_of("a", 0), entry);
  entry = read(file_of("a", 1));
  entry["version"] = kJournalEntryVersion + 1;
  write(file_of("a", 1), entry);
  const auto read_back = entries();
  ASSERT_EQ(read_back.entries.size(), 1u);
  EXPECT_EQ(read_back.entries[0].key, "b");
  EXPECT_EQ(read_back.set_aside.at("written by an audit of another config"), 1);
  EXPECT_EQ(read_back.set_aside.at("of an unknown format version"), 1);
}

TEST_F(JournalEntriesTest, AnEntryThatNamesAnotherCellRunThanItsFileIsSetAside) {
  write_journal();
  // Moved to another cell run's name, and its process changed under its observation's.
  fs::rename(folder_ / file_of("b", 0), folder_ / file_of("b", 1));
  auto entry = read(file_of("a", 1));
  entry["observation"]["process"] = 0;
  write(file_of("a", 1), entry);
  const auto read_back = entries();
  ASSERT_EQ(read_back.entries.size(), 1u);
  EXPECT_EQ(read_back.entries[0].key, "a");
  EXPECT_EQ(read_back.entries[0].observation.process, 0);
  EXPECT_EQ(read_back.set_aside.at("filed under another cell run's name"), 1);
  EXPECT_EQ(read_back.set_aside.at("naming another process than their observation"), 1);
}

TEST_F(JournalEntriesTest, TwoEntriesForOneCellRunThatDisagreeAreBothSetAside) {
  write_journal();
  // The copy claims other digests for cell a, process 0; whichever is read first, neither is used.
  auto crafted = read(file_of("a", 0));
  crafted["observation"]["runs"][1]["digest"] = std::string(32, 'b');
  write("cell-crafted.json", crafted);
  auto read_back = entries();
  ASSERT_EQ(read_back.entries.size(), 2u);
  for (const auto& entry : read_back.entries) EXPECT_FALSE(entry.key == "a" && entry.observation.process == 0);
  EXPECT_EQ(read_back.set_aside.at("disagreeing with another entry for the same cell run"), 2);
  // A copy that agrees is no conflict: the entry in its own file is used, the copy set aside.
  write("cell-crafted.json", read(file_of("a", 0)));
  read_back = entries();
  EXPECT_EQ(read_back.entries.size(), 3u);
  EXPECT_EQ(read_back.set_aside.at("filed under another cell run's name"), 1);
}

TEST_F(JournalEntriesTest, WhatWasSetAsideIsSaidOnceWithItsCountAndReasons) {
  const SetAsideEntries set_aside = {{"unreadable or malformed", 2}, {"written by an audit of another config", 10}};
  EXPECT_EQ(set_aside_message("/j", set_aside),
            "/j: 12 journal entries set aside, their cell runs run again: 2 unreadable or malformed; 10 written by an "
            "audit of another config");
  EXPECT_EQ(set_aside_message("/j", {{"unreadable or malformed", 1}}),
            "/j: 1 journal entry set aside, their cell runs run again: 1 unreadable or malformed");
}

// A journal of the versions whose entries carried the audit's fingerprint but no format version.
TEST_F(JournalEntriesTest, AJournalOfTheVersionsBeforeTheFormatVersionLoads) {
  copy_fixture("journal-v1-fingerprinted");
  const auto read = entries();
  EXPECT_EQ(read.entries.size(), 4u);
  EXPECT_TRUE(read.set_aside.empty()) << set_aside_message(folder_.string(), read.set_aside);
  // There, an entry that lost its fingerprint is not taken for one of the versions that wrote none.
  for (const auto& file : fs::directory_iterator(folder_)) {
    if (file.path().filename().string().rfind("cell-", 0) != 0) continue;
    auto entry = json::parse(std::ifstream(file.path()));
    entry.erase("audit");
    std::ofstream(file.path()) << entry.dump();
    break;
  }
  const auto stripped = entries();
  EXPECT_EQ(stripped.entries.size(), 3u);
  EXPECT_EQ(stripped.set_aside.at("without their audit's fingerprint"), 1);
}

// A journal of the versions whose entries carried neither the fingerprint nor the format version.
TEST_F(JournalEntriesTest, AJournalOfTheVersionsBeforeTheFingerprintLoads) {
  copy_fixture("journal-v1-unfingerprinted");
  const auto read = entries();
  EXPECT_EQ(read.entries.size(), 4u);
  EXPECT_TRUE(read.set_aside.empty()) << set_aside_message(folder_.string(), read.set_aside);
  // Resumed by this version: its own entries are checked as such, the old ones still load.
  Journal::open(folder_.string()).record(cell("another"), observation(0));
  EXPECT_EQ(entries().entries.size(), 5u);
}

}  // namespace
}  // namespace repro_audit
