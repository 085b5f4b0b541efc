// The real launcher starts `executable worker`, and a py batch's interpreter in its place: started as
// the caller's launch says, without the variable that named it, asked or ahead of its request alike.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "common/user_error.h"
#include "protocol/worker_protocol.h"
#include "supervisor/process_launcher.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class Launching : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("repro-audit-launcher-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }

  // A stand-in interpreter: a shell that says its $0 (the interpreter it was given), whether it still
  // sees the variable that named it, what the launch added, then echoes its request.
  static InterpreterStart shell_interpreter(const std::string& python) {
    return {{"/bin/sh", "-c", R"(echo "$0 ${REPRO_AUDIT_WORKER_PYTHON-unset} $ADDED"; cat)", python},
            {{"ADDED", "added"}}};
  }
  static std::string line_of(Worker& worker) {
    std::string line;
    EXPECT_EQ(worker.read_line(line, std::chrono::steady_clock::now() + 30s), Worker::ReadStatus::line);
    return line;
  }
  fs::path folder_;
};

TEST_F(Launching, APyBatchsWorkerIsItsInterpreterStartedAsTheLaunchSays) {
  ProcessLauncher launcher("/bin/echo", folder_.string(), "worker", shell_interpreter);
  const std::map<std::string, std::string> py = {{kWorkerPython, "/opt/python3"}};
  auto asked = launcher.start("request 1\n", py);
  EXPECT_EQ(line_of(*asked), "/opt/python3 unset added");
  EXPECT_EQ(line_of(*asked), "request 1");
  // Started ahead: the same interpreter, handed its request once start() asks for one.
  launcher.prestart({py}, std::chrono::steady_clock::now() + 30s, {});
  auto ahead = launcher.start("request 2\n", py);
  EXPECT_EQ(line_of(*ahead), "/opt/python3 unset added");
  EXPECT_EQ(line_of(*ahead), "request 2");
  // Any other batch (no interpreter named, or named empty) runs `executable worker`.
  for (const auto& environment : {std::map<std::string, std::string>{}, {{kWorkerPython, ""}}}) {
    auto worker = launcher.start("", environment);
    EXPECT_EQ(line_of(*worker), "worker");
  }
}

// Gone since the audit checked it: the machine's failure, named, before any cell (nothing journaled).
TEST_F(Launching, AnInterpreterThatCannotStartIsTheMachinesFailureNamingIt) {
  const auto missing = (folder_ / "no-python3").string();
  ProcessLauncher launcher("/bin/echo", folder_.string(), "worker", [](const std::string& python) {
    return InterpreterStart{{python, "-u"}, {}};
  });
  for (const bool ahead : {false, true}) {
    try {
      if (ahead)
        launcher.prestart({{{kWorkerPython, missing}}}, std::chrono::steady_clock::now() + 30s, {});
      else
        launcher.start("", {{kWorkerPython, missing}});
      ADD_FAILURE() << "a missing interpreter started";
    } catch (const EnvironmentError& error) {
      EXPECT_EQ(std::string(error.what()).find("the py cells' interpreter cannot be started: cannot start " + missing),
                0u)
          << error.what();
    }
  }
  // Any other failure to start a worker is said as it is, not blamed on the interpreter.
  ProcessLauncher nowhere("/bin/echo", (folder_ / "no-folder").string(), "worker", shell_interpreter);
  try {
    nowhere.start("", {{kWorkerPython, "/opt/python3"}});
    ADD_FAILURE() << "a worker started without its temporary folder";
  } catch (const EnvironmentError& error) {
    EXPECT_EQ(std::string(error.what()).find("interpreter"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find((folder_ / "no-folder").string()), std::string::npos) << error.what();
  }
}

// A later round's worker of py cells on the CPU (kWorkerForkRound) asks the fork server of its batch's
// environment for its process: one server, started ahead, for every such worker, told what the first
// round's cells imported (module names only); a server that cannot listen leaves the workers to load
// torch themselves. The stand-in: as a server it says where it listens and waits; as a worker it says
// the server and the imports it was given, then echoes its request.
TEST_F(Launching, ALaterRoundsPyWorkerAsksTheForkServerOfItsEnvironment) {
  const auto serving = [](const std::string& answer) {
    return [answer](const std::string& python) {
      return InterpreterStart{{"/bin/sh", "-c",
                               "if [ \"$REPRO_AUDIT_FORK_SERVE\" = 1 ]; then echo '" + answer +
                                   "' | sed \"s/PID/$$/\"; exec sleep 60; fi; echo "
                                   "\"${REPRO_AUDIT_FORK_CLIENT-none} ${REPRO_AUDIT_FORK_PRELOAD-none} "
                                   "${REPRO_AUDIT_FORK_ROUND-unset}\"; cat",
                               python},
                              {}};
    };
  };
  const std::map<std::string, std::string> py = {{kWorkerPython, "/opt/python3"}};
  auto round = py;
  round[kWorkerForkRound] = "1";
  ProcessLauncher launcher("/bin/echo", folder_.string(), "worker",
                           serving(R"({"event": "loaded", "fork_socket": "/server/PID"})"));
  launcher.prestart({round, round}, std::chrono::steady_clock::now() + 30s, {});
  auto first = launcher.start("request 1\n", round);
  const auto said = line_of(*first);
  const auto server = said.substr(0, said.find(' '));
  EXPECT_EQ(server.rfind("/server/", 0), 0u) << said;
  EXPECT_EQ(said, server + " none unset");
  EXPECT_EQ(line_of(*first), "request 1");
  launcher.note_imports(py, {"torch._dynamo", "os; rm -rf ~"});
  auto second = launcher.start("request 2\n", round);
  EXPECT_EQ(line_of(*second), server + " torch._dynamo unset") << "not the same server, or another import";
  EXPECT_EQ(line_of(*second), "request 2");
  auto own = launcher.start("request 3\n", py);
  EXPECT_EQ(line_of(*own), "none none unset");

  ProcessLauncher refused("/bin/echo", folder_.string(), "worker",
                          serving(R"({"event": "loaded", "fork_error": "AF_UNIX path too long"})"));
  auto plain = refused.start("request 4\n", round);
  EXPECT_EQ(line_of(*plain), "none none unset");
  EXPECT_EQ(line_of(*plain), "request 4");
}

}  // namespace
}  // namespace repro_audit
