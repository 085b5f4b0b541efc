// A later round's worker of C++ cells and its fork server (protocol/fork_rounds.h), as real processes: the
// server says where it listens, and the process it forks for a client runs with that client's standard
// streams and environment; the client ends as that process ended, with its exit code or its signal.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "protocol/fork_rounds.h"
#include "protocol/worker_protocol.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

std::string read_all(int descriptor) {
  std::string text;
  char buffer[4096];
  for (ssize_t got; (got = ::read(descriptor, buffer, sizeof buffer)) != 0;)
    if (got > 0)
      text.append(buffer, static_cast<std::size_t>(got));
    else if (errno != EINTR)
      break;
  return text;
}

// The process forked for a client: says its environment's ROUND_END on its (the client's) stdout, then
// ends as it says: "exit N" or "signal" (SIGUSR1).
[[noreturn]] void run_round() {
  const std::string end = std::getenv("ROUND_END") ? std::getenv("ROUND_END") : "";
  const auto said = "forked " + end + "\n";
  (void)!::write(STDOUT_FILENO, said.data(), said.size());
  if (end == "signal") ::raise(SIGUSR1);
  ::_exit(end.rfind("exit ", 0) == 0 ? std::atoi(end.c_str() + 5) : 99);
}

class ForkRounds : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("repro-audit-fork-rounds-" + std::to_string(::getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
    int said[2];
    ASSERT_EQ(::pipe(said), 0);
    server_ = ::fork();
    if (server_ == 0) {
      ::dup2(said[1], STDOUT_FILENO);
      ::close(said[0]);
      ::setenv(kForkServe, "1", 1);
      ::setenv("TMPDIR", folder_.c_str(), 1);
      if (serve_forks()) run_round();
      ::_exit(98);  // serve_forks returned false: not a server
    }
    ::close(said[1]);
    std::string line;
    for (char c; ::read(said[0], &c, 1) == 1 && c != '\n';) line += c;
    ::close(said[0]);
    const auto loaded = nlohmann::json::parse(line);
    EXPECT_EQ(loaded.at("event"), "loaded");
    socket_ = loaded.value("fork_socket", "");
    EXPECT_EQ(socket_, (folder_ / kForkSocketName).string()) << line;
  }
  void TearDown() override {
    ::kill(server_, SIGKILL);
    ::waitpid(server_, nullptr, 0);
    fs::remove_all(folder_);
  }
  // A client asking for a process that ends as `end` says: its wait status, and what it printed.
  int client(const std::string& end, std::string& output) {
    int out[2];
    EXPECT_EQ(::pipe(out), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      ::close(out[0]);
      ::setenv(kForkClient, socket_.c_str(), 1);
      ::setenv("ROUND_END", end.c_str(), 1);
      ::_exit(fork_client_main());
    }
    ::close(out[1]);
    output = read_all(out[0]);
    ::close(out[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  }
  fs::path folder_;
  pid_t server_ = -1;
  std::string socket_;
};

TEST_F(ForkRounds, AClientEndsAsTheProcessForkedForItEnded) {
  std::string output;
  const int exited = client("exit 7", output);
  EXPECT_TRUE(WIFEXITED(exited) && WEXITSTATUS(exited) == 7) << exited;
  EXPECT_EQ(output, "forked exit 7\n");  // the client's stdout and environment, in the forked process
  const int signalled = client("signal", output);
  EXPECT_TRUE(WIFSIGNALED(signalled) && WTERMSIG(signalled) == SIGUSR1) << signalled;
  EXPECT_EQ(output, "forked signal\n");
  EXPECT_EQ(::waitpid(server_, nullptr, WNOHANG), 0) << "the server ended";
  // A server gone: the client says so and ends 70, a worker that failed.
  ::kill(server_, SIGKILL);
  ::waitpid(server_, nullptr, 0);
  const int orphaned = client("exit 0", output);
  EXPECT_TRUE(WIFEXITED(orphaned) && WEXITSTATUS(orphaned) == 70) << orphaned;
  EXPECT_EQ(output, "");
}

}  // namespace
}  // namespace repro_audit
