// Interruptions and terminals: every stop ends with the way back, a corrupt journal entry is not a
// dead end, and the output suits the terminal it goes to.
#include <pty.h>

#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

// Runs `command` (through sh) on a pseudo-terminal, as a person at a terminal would; returns what it printed.
std::string run_on_terminal(const std::string& command) {
  int controller = -1;
  const pid_t pid = forkpty(&controller, nullptr, nullptr, nullptr);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string output;
  char buffer[4096];
  while (true) {
    const auto n = read(controller, buffer, sizeof buffer);
    if (n <= 0) break;  // EIO once the child side closes
    output.append(buffer, static_cast<std::size_t>(n));
  }
  close(controller);
  waitpid(pid, nullptr, 0);
  return output;
}

bool has_non_ascii(const std::string& text) {
  for (unsigned char c : text)
    if (c >= 0x80) return true;
  return false;
}

class Terminals : public CliTest {};

TEST_F(Terminals, CtrlCOrHangupDuringARunWithOutputsEndsWithAResumeCommandRepeatingThem) {
  for (const int signal : {SIGINT, SIGHUP}) {
    const auto journal = folder_ / ("journal-" + std::to_string(signal));
    const auto out = folder_ / "out.txt";
    const pid_t pid =
        start_group("run --device cpu --probe sum --probe cumsum --repeats 3 --journal " + journal.string() +
                        " --save-baseline " + path("b.yaml") + " --json " + path("r.json") + " --fail-on any",
                    out);
    ASSERT_TRUE(wait_until([&] { return count_files(journal, "cell-") > 0; }, pid)) << slurp(out);
    kill(-pid, signal);
    EXPECT_EQ(wait_exit(pid), 130) << slurp(out);
    const auto output = slurp(out);
    EXPECT_NE(output.find("resume with: "), std::string::npos) << output;
    for (const auto& option : {"--resume " + journal.string(), "--save-baseline " + path("b.yaml"),
                               "--json " + path("r.json"), std::string("--fail-on any")})
      EXPECT_NE(output.find(option), std::string::npos) << option << "\n" << output;
    EXPECT_FALSE(fs::exists(folder_ / "b.yaml")) << "a baseline of an interrupted audit";
  }
}

TEST_F(Terminals, AnInterruptedGateResumes) {
  const auto baseline = path("b.yaml");
  // Four cells in one batch: the gate is stopped after the first reaches the journal (the others, a second
  // process and two timing rounds take it a second or more after that).
  ASSERT_EQ(run("run --device cpu --probe cumsum --profile default --profile strict --axis threads=1 "
                "--repeats 2 --save-baseline " +
                baseline)
                .exit_code,
            0);
  const auto journal = folder_ / "journal";
  const auto out = folder_ / "out.txt";
  const pid_t pid = start_group("gate --baseline " + baseline + " --config " +
                                    write("c.yaml",
                                          "device: cpu\nprobes: [cumsum]\nprofiles: [default, strict]\n"
                                          "axes: {threads: [1]}\nrepeats: 2\n") +
                                    " --journal " + journal.string() + " --junit " + path("g.xml"),
                                out);
  ASSERT_TRUE(wait_until([&] { return count_files(journal, "cell-") > 0; }, pid)) << slurp(out);
  kill(-pid, SIGINT);
  EXPECT_EQ(wait_exit(pid), 130) << slurp(out);
  const auto output = slurp(out);
  const auto hint = output.find("resume with: ");
  ASSERT_NE(hint, std::string::npos) << output;
  const auto command = output.substr(hint + 13, output.find('\n', hint) - hint - 13);
  EXPECT_NE(command.find("gate --baseline " + baseline + " --resume " + journal.string()), std::string::npos);
  // The program people run, not the torch side the front end handed the gate to.
  EXPECT_EQ(command.find(binary() + " gate"), 0u) << command;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string resumed;
  char buffer[4096];
  while (auto n = fread(buffer, 1, sizeof buffer, pipe)) resumed.append(buffer, n);
  EXPECT_EQ(WEXITSTATUS(pclose(pipe)), 0) << resumed;
  EXPECT_NE(resumed.find("cell runs were already in the journal"), std::string::npos) << resumed;
  EXPECT_TRUE(fs::exists(folder_ / "g.xml"));
}

TEST_F(Terminals, ACorruptJournalEntryIsSkippedWithAWarningAndItsCellRunsAgain) {
  const auto journal = folder_ / "journal";
  ASSERT_EQ(
      run("run --device cpu --probe sum/f32 --profile default --axis threads=1,2 --repeats 2 --no-cost --journal " +
          journal.string())
          .exit_code,
      0);
  int corrupted = 0;
  for (const auto& file : fs::directory_iterator(journal)) {
    if (file.path().filename().string().rfind("cell-", 0) != 0) continue;
    std::ofstream(file.path()) << (corrupted == 0 ? "{\"key\": " : "[1, 2, 3]");
    if (++corrupted == 2) break;
  }
  const auto resumed = run("run --resume " + journal.string() + " --no-cost --json " + path("r.json"));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("2 journal entries set aside, their cell runs run again"), std::string::npos)
      << resumed.output;
  EXPECT_NE(resumed.output.find("resumed: 2 of 4 cell runs"), std::string::npos) << resumed.output;
  EXPECT_TRUE(json::parse(slurp(folder_ / "r.json")).at("complete").get<bool>());
}

TEST_F(Terminals, ColourAndCursorCodesOnlyWhereTheTerminalTakesThem) {
  const auto audit = binary() + " run " + kSmallAudit + " --no-cost";
  const auto capable = run_on_terminal("TERM=xterm LANG=C.UTF-8 " + audit);
  EXPECT_NE(capable.find("\033["), std::string::npos) << capable;
  EXPECT_NE(capable.find("✓"), std::string::npos) << capable;
  const auto dumb = run_on_terminal("TERM=dumb LANG=C.UTF-8 " + audit);
  EXPECT_NE(dumb.find("sum/f32"), std::string::npos) << dumb;
  EXPECT_EQ(dumb.find('\033'), std::string::npos) << dumb;
  // NO_COLOR: no escape sequence at all, not even the progress line's ESC[K.
  const auto no_color = run_on_terminal("TERM=xterm NO_COLOR=1 LANG=C.UTF-8 " + audit);
  EXPECT_NE(no_color.find("sum/f32"), std::string::npos) << no_color;
  EXPECT_EQ(no_color.find('\033'), std::string::npos) << no_color;
}

TEST_F(Terminals, ANonUtf8LocaleGetsAsciiMarks) {
  for (const std::string locale : {"LANG=C", "LC_ALL=POSIX LANG=C.UTF-8", "LANG= LC_ALL= LC_CTYPE=en_US.ISO-8859-1"}) {
    const auto result = run("run " + kSmallAudit + " --no-cost", "env " + locale);
    EXPECT_EQ(result.exit_code, 0) << locale << result.output;
    EXPECT_NE(result.output.find("+ deterministic"), std::string::npos) << locale << result.output;
    EXPECT_FALSE(has_non_ascii(result.output)) << locale << result.output;
    const auto list = run("list", "env " + locale);
    EXPECT_FALSE(has_non_ascii(list.output)) << locale;
  }
  EXPECT_TRUE(has_non_ascii(run("run " + kSmallAudit + " --no-cost", "env LANG=C.UTF-8").output));
}

TEST_F(Terminals, ARelativeStateFolderIsIgnoredAsXdgSays) {
  fs::create_directories(folder_ / "cwd");
  const auto result = run("run " + kSmallAudit + " --no-cost --save-baseline " + path("b.yaml"),
                          "cd " + path("cwd") + " && XDG_STATE_HOME=relative HOME=" + folder_.string());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("journal: " + folder_.string() + "/.local/state/repro-audit/journals/"),
            std::string::npos)
      << result.output;
  EXPECT_FALSE(fs::exists(folder_ / "cwd" / "relative"));
}

TEST_F(Terminals, NothingIsLeftInTheTemporaryFolderAfterAKillAndTheNextAudit) {
  const auto tmp = folder_ / "tmp";
  fs::create_directories(tmp);
  const auto journal = folder_ / "journal";
  const auto out = folder_ / "out.txt";
  const pid_t pid = start_group("run --device cpu --probe sum --repeats 3 --journal " + journal.string(), out,
                                "TMPDIR=" + tmp.string());
  ASSERT_TRUE(wait_until([&] { return count_files(journal, "cell-") > 0; }, pid)) << slurp(out);
  kill(-pid, SIGKILL);
  wait_exit(pid);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the workers die with their supervisor
  // No log is left (they were unlinked at once); the killed workers' own folders are, and the next
  // audit in that temporary folder removes them: no lock of a living owner holds them.
  EXPECT_EQ(count_files(tmp, ""), count_files(tmp, "repro-audit-worker-"));
  EXPECT_EQ(run("run " + kSmallAudit + " --no-cost", "TMPDIR=" + tmp.string()).exit_code, 0);
  EXPECT_EQ(count_files(tmp, ""), 0);
}

// Signals whose default action ends the process without its cleanup stop an audit as SIGTERM does:
// exit 130, and no worker folder is left in the temporary folder.
TEST_F(Terminals, QuitUserAndAlarmSignalsLeaveNoWorkerFolderBehind) {
  for (const int signal : {SIGQUIT, SIGUSR1, SIGALRM}) {
    const auto tmp = folder_ / ("tmp-" + std::to_string(signal));
    fs::create_directories(tmp);
    const auto out = folder_ / ("out-" + std::to_string(signal));
    const pid_t pid = start_group("run --device cpu --probe sum --repeats 3 --journal " +
                                      (folder_ / ("journal-" + std::to_string(signal))).string(),
                                  out, "TMPDIR=" + tmp.string());
    ASSERT_TRUE(wait_until([&] { return count_files(tmp, "repro-audit-worker-") > 0; }, pid)) << slurp(out);
    kill(pid, signal);
    EXPECT_EQ(wait_exit(pid), 130) << signal << ": " << slurp(out);
    EXPECT_EQ(count_files(tmp, ""), 0) << signal << ": " << slurp(out);
  }
}

}  // namespace
