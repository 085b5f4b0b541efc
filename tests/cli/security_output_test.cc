// Hostile inputs, outputs: one host given twice is one host; a lost standard output is a failed command
// that keeps the audit's journal; links planted in a journal or among the outputs write nothing where
// they point.
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

class SecurityOutput : public CliTest {
 protected:
  std::string report(const std::string& name, const std::string& host) {
    const auto file = path(name);
    // Verdicts only: `fleet`, `show` and `compare` here read hosts and digests, not costs.
    EXPECT_EQ(run("run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 2 --processes 1 "
                  "--no-cost --quiet --json " +
                  file)
                  .exit_code,
              0);
    auto parsed = json::parse(slurp(file));
    parsed["host"] = host;
    std::ofstream(file) << parsed.dump();
    return file;
  }
};

TEST_F(SecurityOutput, TheSameReportTwiceIsOneHost) {
  const auto a = report("a.json", "node-a");
  fs::copy_file(a, path("copy.json"));
  const auto twice = run("fleet " + a + " " + a + " " + path("copy.json") + " --json " + path("fleet.json"));
  EXPECT_EQ(twice.exit_code, 1) << twice.output;
  EXPECT_NE(twice.output.find("nothing was compared: a fleet needs reports of at least two hosts (3 given, 2 left out"),
            std::string::npos)
      << twice.output;
  EXPECT_NE(twice.output.find("copy.json left out: the same run as " + a), std::string::npos) << twice.output;
  const auto fleet = json::parse(slurp(path("fleet.json")));
  EXPECT_EQ(fleet.at("hosts").size(), 1u);
  EXPECT_EQ(fleet.at("duplicates").size(), 2u);
  // Another audit of the same host on the same platform is that host again, not a second one.
  const auto again = report("again.json", "node-a");
  const auto repeated = run("fleet " + a + " " + again);
  EXPECT_EQ(repeated.exit_code, 1) << repeated.output;
  EXPECT_NE(repeated.output.find("left out: another audit of host node-a"), std::string::npos) << repeated.output;
  const auto b = report("b.json", "node-b");
  const auto two = run("fleet " + a + " " + b + " " + again);
  EXPECT_EQ(two.exit_code, 0) << two.output;
  EXPECT_NE(two.output.find("Fleet: 2 hosts"), std::string::npos) << two.output;
}

TEST_F(SecurityOutput, AFullStandardOutputFailsTheCommandAndKeepsTheJournal) {
  // Standard output to /dev/full, standard error to the test.
  const auto full = [](const std::string& command) {
    return shell("{ " + binary() + " " + command + " > /dev/full; }");
  };
  const auto audit = full(
      "run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 2 "
      "--processes 1 --journal " +
      path("journal"));
  EXPECT_EQ(audit.exit_code, 2) << audit.output;
  EXPECT_NE(audit.output.find("cannot write to standard output: No space left on device"), std::string::npos)
      << audit.output;
  EXPECT_NE(audit.output.find("the audit is kept in its journal"), std::string::npos) << audit.output;
  EXPECT_TRUE(fs::exists(path("journal"))) << "the journal went with the lost matrix";
  const auto a = report("a.json", "node-a");
  const auto b = report("b.json", "node-b");
  for (const std::string& command :
       std::vector<std::string>{"show " + a, "env", "list", "fleet " + a + " " + b, "compare " + a + " " + b}) {
    const auto result = full(command);
    EXPECT_EQ(result.exit_code, 2) << command << ": " << result.output;
    EXPECT_NE(result.output.find("cannot write to standard output"), std::string::npos) << command;
  }
}

TEST_F(SecurityOutput, AClosedPipeIsALostOutputNotASignal) {
  // The reader closes the pipe at once; the command, loading libtorch, writes its listing later.
  const auto script =
      write("pipe.sh", "set -o pipefail\n\"$1\" list --all | (exec 0<&-; sleep 1)\necho \"status=$?\"\n");
  const auto result = shell("bash " + script + " " + binary());
  EXPECT_NE(result.output.find("status=2"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("cannot write to standard output: Broken pipe"), std::string::npos) << result.output;
}

}  // namespace

namespace {

using namespace testing_cli;

const std::string kJournaledCell =
    "run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 2 --processes 1 --no-cost --quiet";

class PlantedLinks : public CliTest {
 protected:
  // A file of the user's that a link planted in a journal points at.
  fs::path precious(const std::string& name) {
    const auto file = folder_ / name;
    std::ofstream(file) << "the user's own " << name;
    ::chmod(file.c_str(), 0600);
    return file;
  }
  void expect_untouched(const fs::path& file, const std::string& name) {
    EXPECT_EQ(slurp(file), "the user's own " + name) << file;
    struct stat status {};
    ASSERT_EQ(::stat(file.c_str(), &status), 0);
    EXPECT_EQ(status.st_mode & 0777, 0600u) << file << ": its mode was changed";
  }
};

// A journal's lock that is a link (to a user's file; in a shared folder, to another user's) is refused
// by name, with a new --journal and with --resume, and the file it names is neither truncated nor
// written.
TEST_F(PlantedLinks, AJournalsLockThatIsALinkIsRefusedAndWhatItNamesIsUntouched) {
  const auto target = precious("lock-target");
  const auto fresh = folder_ / "fresh";
  fs::create_directories(fresh);
  fs::create_symlink(target, fresh / "lock");
  const auto planted = run(kJournaledCell + " --journal " + fresh.string());
  EXPECT_EQ(planted.exit_code, 2) << planted.output;
  EXPECT_NE(planted.output.find((fresh / "lock").string() + ": is a link"), std::string::npos) << planted.output;
  expect_untouched(target, "lock-target");

  const auto journal = folder_ / "journal";
  ASSERT_EQ(run(kJournaledCell + " --journal " + journal.string()).exit_code, 0);
  fs::remove(journal / "lock");
  fs::create_symlink(target, journal / "lock");
  const auto resumed = run("run --resume " + journal.string() + " --quiet");
  EXPECT_EQ(resumed.exit_code, 2) << resumed.output;
  EXPECT_NE(resumed.output.find((journal / "lock").string() + ": is a link"), std::string::npos) << resumed.output;
  expect_untouched(target, "lock-target");
  // A hard link to the user's file is no lock of the journal's own either.
  fs::remove(journal / "lock");
  fs::create_hard_link(target, journal / "lock");
  const auto hard = run("run --resume " + journal.string() + " --quiet");
  EXPECT_EQ(hard.exit_code, 2) << hard.output;
  EXPECT_NE(hard.output.find("is not a file of the journal's own"), std::string::npos) << hard.output;
  expect_untouched(target, "lock-target");
}

// A journal entry that is a link, and a header that is a dangling link, are replaced in the journal:
// the re-run's entry and the header never land at (or change the mode of) what the links name.
TEST_F(PlantedLinks, AJournalsEntriesAndHeaderAreWrittenInTheJournalNeverThroughALink) {
  const auto journal = folder_ / "journal";
  ASSERT_EQ(run(kJournaledCell + " --journal " + journal.string()).exit_code, 0);
  const auto target = precious("entry-target");
  for (const auto& entry : fs::directory_iterator(journal))
    if (entry.path().filename().string().rfind("cell-", 0) == 0) {
      fs::remove(entry.path());
      fs::create_symlink(target, entry.path());  // read as unreadable, so its cell run runs again
    }
  const auto resumed = run("run --resume " + journal.string() + " --quiet");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  expect_untouched(target, "entry-target");
  for (const auto& entry : fs::directory_iterator(journal))
    if (entry.path().filename().string().rfind("cell-", 0) == 0)
      EXPECT_FALSE(fs::is_symlink(entry.path())) << entry.path() << " was written through";

  const auto fresh = folder_ / "fresh";
  fs::create_directories(fresh);
  const auto outside = folder_ / "outside" / "header.json";
  fs::create_directories(outside.parent_path());
  fs::create_symlink(outside, fresh / "audit.json");  // dangling
  const auto begun = run(kJournaledCell + " --journal " + fresh.string());
  EXPECT_EQ(begun.exit_code, 0) << begun.output;
  EXPECT_FALSE(fs::exists(outside)) << "the header landed outside the journal\n" << begun.output;
}

// Two outputs that name one file only once a dangling link is followed (--json L --markdown T, L -> T,
// T absent) are refused before the audit: neither report is silently lost.
TEST_F(PlantedLinks, TwoOutputsThatMeetBehindADanglingLinkAreRefused) {
  const auto target = folder_ / "t.md";
  const auto link = folder_ / "l.json";
  fs::create_symlink(target, link);
  for (const auto& [first, second] : {std::pair{link, target}, std::pair{target, link}}) {
    const auto result = run(kJournaledCell + " --json " + first.string() + " --markdown " + second.string());
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_NE(result.output.find("both write"), std::string::npos) << result.output;
  }
  // Through a link to a folder, too: --json D/x.json with D -> E, and --markdown E/x.json.
  fs::create_directories(folder_ / "e");
  fs::create_directory_symlink(folder_ / "e", folder_ / "d");
  const auto folders = run(kJournaledCell + " --json " + path("d/x.json") + " --markdown " + path("e/x.json"));
  EXPECT_EQ(folders.exit_code, 2) << folders.output;
  EXPECT_NE(folders.output.find("both write"), std::string::npos) << folders.output;
}

}  // namespace
