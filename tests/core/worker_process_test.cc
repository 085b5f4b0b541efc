// A worker process's own temporary folder: made for it, its TMPDIR, and gone when it ends however it ends.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "common/user_error.h"
#include "supervisor/worker_folder.h"
#include "supervisor/worker_process.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class WorkerFolders : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("repro-audit-worker-process-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }

  // A shell child that writes a file into its TMPDIR, says where, then runs `then`.
  std::unique_ptr<WorkerProcess> start(const std::string& then,
                                       const std::map<std::string, std::string>& environment = {}) {
    const std::string script = "echo made > \"$TMPDIR/cache\" && echo \"$TMPDIR\" && " + then;
    return std::make_unique<WorkerProcess>(std::vector<std::string>{"/bin/sh", "-c", script}, environment, "",
                                           folder_.string());
  }
  // The folders the children left in the temporary folder.
  int left() const { return static_cast<int>(std::distance(fs::directory_iterator(folder_), {})); }

  std::string first_line(WorkerProcess& worker) {
    std::string line;
    EXPECT_EQ(worker.read_line(line, std::chrono::steady_clock::now() + 30s), Worker::ReadStatus::line);
    return line;
  }
  fs::path folder_;
};

TEST_F(WorkerFolders, AFinishedChildsFolderIsGone) {
  auto worker = start("exit 0");
  const fs::path tmpdir = first_line(*worker);
  EXPECT_EQ(tmpdir.parent_path(), folder_);
  EXPECT_TRUE(tmpdir.filename().string().starts_with("repro-audit-worker-")) << tmpdir;
  EXPECT_TRUE(fs::exists(tmpdir / "cache"));
  EXPECT_EQ(worker->wait(), "exit 0");
  worker.reset();
  EXPECT_FALSE(fs::exists(tmpdir));
  EXPECT_EQ(left(), 0);
}

TEST_F(WorkerFolders, AKilledChildsFolderIsGoneWithWhatItsOwnChildrenMadeThere) {
  // The child starts a grandchild that keeps writing into the folder: both end with the group.
  auto worker = start("(while :; do echo more >> \"$TMPDIR/grandchild\"; sleep 0.01; done) & sleep 60");
  const fs::path tmpdir = first_line(*worker);
  EXPECT_TRUE(fs::exists(tmpdir / "cache"));
  worker->terminate(50ms);
  worker.reset();
  EXPECT_FALSE(fs::exists(tmpdir));
  EXPECT_EQ(left(), 0);
}

TEST_F(WorkerFolders, ATmpdirTheCallerNamesIsKeptAndNoFolderIsMade) {
  const auto named = folder_ / "named";
  fs::create_directories(named);
  auto worker = start("exit 0", {{"TMPDIR", named.string()}});
  EXPECT_EQ(fs::path(first_line(*worker)), named);
  worker->wait();
  worker.reset();
  EXPECT_TRUE(fs::exists(named / "cache"));
  EXPECT_EQ(left(), 1);  // only the named folder
}

// The child keeps the user's TMPDIR (or that there was none) in REPRO_AUDIT_TMPDIR: a worker names and
// uses the user's temporary folder, not its own.
TEST_F(WorkerFolders, TheChildKnowsTheUsersTmpdir) {
  const auto* before = std::getenv("TMPDIR");
  const std::string saved = before ? before : "";
  for (const std::string user : {std::string("/somewhere"), std::string()}) {
    if (user.empty())
      ::unsetenv("TMPDIR");
    else
      ::setenv("TMPDIR", user.c_str(), 1);
    auto worker = start("echo \"${REPRO_AUDIT_TMPDIR-unset}\"");
    first_line(*worker);
    EXPECT_EQ(first_line(*worker), user);
  }
  if (before)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
}

// An owner killed with SIGKILL leaves its folder; the next sweep of the temporary folder removes it and
// keeps the folders whose owners live.
TEST_F(WorkerFolders, AFolderWhoseOwnerWasKilledIsSweptAndALiveOnesIsKept) {
  const repro_audit::WorkerFolder live(folder_.string());
  const pid_t owner = ::fork();
  if (owner == 0) {
    const auto* kept = new repro_audit::WorkerFolder(folder_.string());  // never destroyed
    std::ofstream(kept->path() + "/cache") << "made";
    ::raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(owner, &status, 0), owner);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_EQ(left(), 2);
  EXPECT_EQ(remove_abandoned_worker_folders(folder_.string()), 1);
  ASSERT_EQ(left(), 1);
  EXPECT_TRUE(fs::exists(live.path()));
  EXPECT_EQ(remove_abandoned_worker_folders(folder_.string()), 0);
}

// A link named like a worker's folder (someone else's, in a shared /tmp) is not swept, nor what it names.
TEST_F(WorkerFolders, ALinkNamedLikeAWorkersFolderIsLeftAlone) {
  const auto target = folder_ / "precious";
  fs::create_directories(target);
  std::ofstream(target / "data") << "kept";
  const auto link = folder_ / "repro-audit-worker-planted";
  fs::create_directory_symlink(target, link);
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(target, old);
  EXPECT_EQ(remove_abandoned_worker_folders(folder_.string()), 0);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::exists(target / "data"));
}

TEST_F(WorkerFolders, AMissingTemporaryFolderIsAnEnvironmentErrorNamingIt) {
  const auto gone = folder_ / "gone";
  try {
    WorkerProcess worker({"/bin/true"}, {}, "", gone.string());
    FAIL() << "a worker started without a temporary folder";
  } catch (const EnvironmentError& error) {
    EXPECT_NE(std::string(error.what()).find(gone.string() + " is missing"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace repro_audit
