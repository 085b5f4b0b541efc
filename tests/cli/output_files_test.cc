// Output files on the real binary: a signal at the moment any file appears in the output folder
// leaves the complete outputs or nothing there (signal_on_create.cc makes the moment certain), and an
// output that is a link, a character device, a FIFO or /dev/stdout is written through, never replaced.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <thread>
#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

const std::string kQuickAudit =
    "run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 2 --processes 1 --no-cost --quiet";

class OutputFiles : public CliTest {
 protected:
  // A report of a real audit, as host `host` would have written it.
  std::string report(const std::string& host) {
    const auto file = path(host + ".json");
    const auto audit = run(kQuickAudit + " --json " + file);
    EXPECT_EQ(audit.exit_code, 0) << audit.output;
    auto parsed = json::parse(slurp(file));
    parsed["host"] = host;
    std::ofstream(file) << parsed.dump();
    return file;
  }

  // The folder's entries, sorted.
  std::vector<std::string> entries(const std::string& name) const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(path(name))) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  bool is_link(const std::string& name) const { return fs::is_symlink(fs::symlink_status(path(name))); }
};

struct Writer {
  std::string arguments;           // the command; OUT stands for the output folder
  std::vector<std::string> files;  // what it writes there, sorted
};

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// Every command kind that writes files: a report, several formats at once, a baseline. Each writer
// creates two files per output in OUT (the check before the work, the temporary), so signalling at
// each creation up to twice the outputs, and once after, meets every moment a file appears. Then the
// same where the filesystem has no unnamed files (O_TMPFILE fails), for the commands that start fast.
TEST_F(OutputFiles, ASignalWhenAFileAppearsLeavesTheCompleteOutputsOrNothing) {
  const auto a = report("node-a"), b = report("node-b");
  const std::vector<Writer> writers = {
      {kQuickAudit + " --json OUT/r.json --save-baseline OUT/b.yaml", {"b.yaml", "r.json"}},
      {"fleet " + a + " " + b + " --json OUT/f.json --markdown OUT/f.md --html OUT/f.html",
       {"f.html", "f.json", "f.md"}},
      {"compare " + a + " " + b + " --json OUT/c.json", {"c.json"}},
      {"baseline " + a + " -o OUT/b.yaml", {"b.yaml"}},
  };
  const auto out = path("out");
  for (const bool unnamed : {true, false})
    for (const int signal : {SIGTERM, SIGINT})
      for (const auto& writer : writers) {
        if (!unnamed && writer.arguments.starts_with("run ")) continue;
        for (std::size_t at = 1; at <= 2 * writer.files.size() + 1; ++at) {
          fs::remove_all(out);
          fs::create_directories(out);
          const auto prefix = "LD_PRELOAD=" + std::string(test_paths::kSignalOnCreate) +
                              " REPRO_AUDIT_TEST_WATCH=" + out + " REPRO_AUDIT_TEST_SIGNAL=" + std::to_string(signal) +
                              " REPRO_AUDIT_TEST_AT=" + std::to_string(at) +
                              (unnamed ? "" : " REPRO_AUDIT_TEST_NO_UNNAMED=1");
          const auto command = replace_all(writer.arguments, "OUT", out);
          const auto result = run(command, prefix);
          const auto where = command + (unnamed ? "" : " without unnamed files") + " with signal " +
                             std::to_string(signal) + " at file " + std::to_string(at);
          // The first file appears in the check, before any work: the signal ends the command there.
          if (at == 1) {
            EXPECT_NE(result.exit_code, 0) << where << ": the signal never came\n" << result.output;
          }
          const auto left = entries("out");
          if (at == 2 * writer.files.size() + 1) {
            EXPECT_EQ(left, writer.files) << where << result.output;
          }
          EXPECT_TRUE(left.empty() || left == writer.files)
              << where << " left " << ::testing::PrintToString(left) << "\n"
              << result.output;
          for (const auto& file : left) {
            const auto content = slurp(out + "/" + file);
            EXPECT_TRUE(file.ends_with(".json") ? json::accept(content) : !content.empty()) << where << ": " << file;
          }
        }
      }
}

// A link to a file, a link to a file not there yet and a chain of links: the content reaches the
// file the link names, the links stay links, for every command's output options.
TEST_F(OutputFiles, ALinkIsWrittenThroughAndStaysALink) {
  const auto a = report("node-a"), b = report("node-b");
  fs::create_directories(path("real"));
  std::ofstream(path("real/old.json")) << "old";
  fs::create_symlink(path("real/old.json"), path("to-file.json"));
  fs::create_symlink("real/new.md", path("to-nothing.md"));  // relative, to a file not there yet
  fs::create_symlink(path("to-file.json"), path("chain.json"));
  fs::create_symlink(path("real/baseline.yaml"), path("baseline.yaml"));
  // Each command, and the files its outputs reach through the links.
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
      {kQuickAudit + " --json " + path("to-file.json") + " --markdown " + path("to-nothing.md") + " --save-baseline " +
           path("baseline.yaml"),
       {"baseline.yaml", "new.md", "old.json"}},
      {"compare " + a + " " + b + " --json " + path("chain.json") + " --markdown " + path("to-nothing.md"),
       {"new.md", "old.json"}},
      {"fleet " + a + " " + b + " --json " + path("chain.json") + " --markdown " + path("to-nothing.md"),
       {"new.md", "old.json"}},
      {"baseline " + a + " -o " + path("baseline.yaml"), {"baseline.yaml", "old.json"}},
  };
  for (const auto& [command, reached] : commands) {
    fs::remove_all(path("real"));
    fs::create_directories(path("real"));
    std::ofstream(path("real/old.json")) << "old";
    const auto result = run(command);
    ASSERT_LE(result.exit_code, 1) << command << ": " << result.output;
    for (const auto* link : {"to-file.json", "to-nothing.md", "chain.json", "baseline.yaml"})
      EXPECT_TRUE(is_link(link)) << command << ": " << link << " was replaced";
    EXPECT_EQ(entries("real"), reached) << command;
    for (const auto& file : reached) {
      const auto content = slurp(path("real/" + file));
      EXPECT_TRUE(file == "old.json" && command.find("--json") == std::string::npos ? content == "old"
                  : file.ends_with(".json")                                         ? json::accept(content)
                                                                                    : !content.empty())
          << command << ": " << file << ": " << content.substr(0, 200);
    }
  }
}

// A FIFO (and a link to one) gets the content from the command; /dev/stdout, through a link of the
// test's own, is the command's standard output; a character device is written to, not replaced.
TEST_F(OutputFiles, FifosDevicesAndStandardOutputAreWrittenThrough) {
  const auto a = report("node-a"), b = report("node-b");
  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
  fs::create_symlink(path("pipe"), path("to-pipe.json"));
  for (const auto* output : {"pipe", "to-pipe.json"}) {
    std::string received;
    std::thread reader([&] { received = slurp(path("pipe")); });
    const auto result = run("compare " + a + " " + b + " --json " + path(output));
    // A command that never opened the FIFO leaves the reader waiting: a writer that opens and closes
    // it ends the wait (and fails when the reader is gone already).
    if (const int fd = ::open(path("pipe").c_str(), O_WRONLY | O_NONBLOCK); fd >= 0) ::close(fd);
    reader.join();
    EXPECT_LE(result.exit_code, 1) << output << ": " << result.output;
    EXPECT_TRUE(json::accept(received)) << output << ": " << received;
    struct stat status {};
    EXPECT_EQ(::stat(path("pipe").c_str(), &status), 0);
    EXPECT_TRUE(S_ISFIFO(status.st_mode)) << output << " replaced the FIFO";
  }
  fs::create_symlink("/dev/stdout", path("stdout.json"));
  fs::create_symlink("/dev/null", path("null.json"));
  // Standard output a file, then a pipe (run() reads the command through one).
  const auto to_file =
      shell(binary() + " baseline " + a + " -o " + path("stdout.json") + " > " + path("captured") + " 2>/dev/null");
  EXPECT_EQ(to_file.exit_code, 0) << to_file.output;
  EXPECT_NE(slurp(path("captured")).find("cells:"), std::string::npos) << slurp(path("captured"));
  const auto to_pipe = run("fleet " + a + " " + b + " --json " + path("stdout.json"));
  EXPECT_EQ(to_pipe.exit_code, 0) << to_pipe.output;
  EXPECT_NE(to_pipe.output.find("\"repro-audit.fleet/1\""), std::string::npos) << to_pipe.output;
  const auto to_null = run("compare " + a + " " + b + " --json " + path("null.json"));
  EXPECT_LE(to_null.exit_code, 1) << to_null.output;
  EXPECT_TRUE(is_link("stdout.json"));
  EXPECT_TRUE(is_link("null.json"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

// A FIFO whose reader never comes holds the command in its open(): SIGINT or SIGTERM there is an
// interruption (130), as anywhere else, not a failed write (2).
TEST_F(OutputFiles, AStopSignalWhileWaitingForAFifosReaderIsAnInterruption) {
  for (const int signal : {SIGINT, SIGTERM}) {
    const auto fifo = path("unread-" + std::to_string(signal));
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto log = path("log-" + std::to_string(signal));
    const auto pid = start_group(kQuickAudit + " --json " + fifo, log);
    const auto waiting = [&] { return slurp("/proc/" + std::to_string(pid) + "/wchan") == "wait_for_partner"; };
    ASSERT_TRUE(wait_until(waiting, pid)) << slurp(log);
    ::kill(pid, signal);
    EXPECT_EQ(wait_exit(pid), 130) << slurp(log);
    EXPECT_NE(slurp(log).find("interrupted"), std::string::npos) << slurp(log);
  }
}

// What cannot take a file's content is refused by name before any work: a folder, a socket-like
// entry, a loop of links.
TEST_F(OutputFiles, WhatCannotBeWrittenThroughIsRefusedByName) {
  fs::create_directories(path("folder"));
  fs::create_symlink(path("folder"), path("to-folder.json"));
  fs::create_symlink(path("loop-b.json"), path("loop-a.json"));
  fs::create_symlink(path("loop-a.json"), path("loop-b.json"));
  for (const auto& [output, reason] : std::vector<std::pair<std::string, std::string>>{
           {"to-folder.json", "is a folder"}, {"loop-a.json", "too many levels of links"}}) {
    const auto result = run(kQuickAudit + " --json " + path(output));
    EXPECT_EQ(result.exit_code, 2) << output << ": " << result.output;
    EXPECT_NE(result.output.find("--json " + path(output) + ": " + reason), std::string::npos) << result.output;
  }
  // A descriptor of the command's own that its shell did not open: named, not "No such file or directory".
  fs::create_symlink("/dev/fd/7", path("to-fd7.json"));
  for (const auto& output : {std::string("/dev/fd/7"), path("to-fd7.json")}) {
    const auto closed = run(kQuickAudit + " --json " + output);
    EXPECT_EQ(closed.exit_code, 2) << closed.output;
    EXPECT_NE(closed.output.find(": names the descriptor 7, which is not open in this process"), std::string::npos)
        << closed.output;
    EXPECT_EQ(closed.output.find("No such file"), std::string::npos) << closed.output;
  }
  const auto open = shell(binary() + " " + kQuickAudit + " --json /dev/fd/7 7>" + path("fd7.json"));
  EXPECT_LE(open.exit_code, 1) << open.output;
  EXPECT_TRUE(json::accept(slurp(path("fd7.json"))));
}

}  // namespace
