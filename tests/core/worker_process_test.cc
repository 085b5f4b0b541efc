// A worker process's own temporary folder: made for it, its TMPDIR, and gone when it ends however it ends.
#include <gtest/gtest.h>
#include <signal.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "common/user_error.h"
#include "supervisor/worker_folder.h"
#include "supervisor/process_launcher.h"
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

// A filesystem mounted inside an abandoned worker folder (a bind mount of a user's folder) keeps its
// files: the sweep removes what lies on the folder's own filesystem and never crosses into the mount.
// The mount lives in a mount namespace of a child's own, so nothing outlives the test; skipped where
// no namespace or bind mount can be made (no privilege).
TEST_F(WorkerFolders, TheSweepNeverCrossesIntoAFilesystemMountedInside) {
  const auto precious = folder_ / "precious";
  fs::create_directories(precious);
  std::ofstream(precious / "data") << "kept";
  const pid_t child = ::fork();
  if (child == 0) {
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(77);
    const pid_t owner = ::fork();  // makes a worker folder and is killed: the folder is abandoned
    if (owner == 0) {
      const auto* kept = new repro_audit::WorkerFolder(folder_.string());  // never destroyed
      fs::create_directories(fs::path(kept->path()) / "cache" / "mounted");
      std::ofstream(fs::path(kept->path()) / "cache" / "own") << "made";
      ::raise(SIGKILL);
    }
    ::waitpid(owner, nullptr, 0);
    fs::path abandoned;
    for (const auto& entry : fs::directory_iterator(folder_))
      if (entry.path().filename().string().rfind("repro-audit-worker-", 0) == 0) abandoned = entry.path();
    const auto inside = abandoned / "cache" / "mounted";
    if (abandoned.empty() || ::mount(precious.c_str(), inside.c_str(), nullptr, MS_BIND, nullptr) != 0) ::_exit(77);
    const int removed = remove_abandoned_worker_folders(folder_.string());
    const bool own_gone = !fs::exists(abandoned / "cache" / "own");
    const bool kept = fs::exists(inside / "data");
    ::umount2(inside.c_str(), MNT_DETACH);
    ::_exit(removed == 0 && own_gone && kept ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) GTEST_SKIP() << "no mount namespace or bind mount here";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the sweep crossed into the mount, or left the folder's own files, or called it removed";
  EXPECT_TRUE(fs::exists(precious / "data")) << "a file behind the bind mount was removed";
}

class WorkerProcesses : public WorkerFolders {
 protected:
  // Whether `pid` still runs; a zombie (killed, its parent gone, waiting for init) does not.
  static bool runs(pid_t pid) {
    if (::kill(pid, 0) != 0) return false;
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    const std::string stat((std::istreambuf_iterator<char>(in)), {});
    const auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
  }
  static bool ends_within(pid_t pid, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (runs(pid) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
    return !runs(pid);
  }
};

// A process the worker started keeps its output open (a data loader's worker, a compile pool): the
// worker's end is its exit, found out at once rather than at the deadline, and what it started goes
// with it, whether it exited or was stopped.
TEST_F(WorkerProcesses, AWorkerEndsAtItsExitAndWhatItStartedEndsWithIt) {
  for (const bool stopped : {false, true}) {
    auto worker = start(std::string("{ sleep 777 & } ; echo $! ; ") + (stopped ? "sleep 777" : "exit 3"));
    first_line(*worker);
    const pid_t child = std::stoi(first_line(*worker));
    const auto asked = std::chrono::steady_clock::now();
    std::string line;
    if (stopped) {
      EXPECT_EQ(worker->read_line(line, asked + 300ms), Worker::ReadStatus::deadline);
      worker->terminate(50ms);
    } else {
      EXPECT_EQ(worker->read_line(line, asked + 30s), Worker::ReadStatus::end_of_output) << line;
      EXPECT_LT(std::chrono::steady_clock::now() - asked, 5s) << "waited for the end of output, not the exit";
      EXPECT_EQ(worker->wait(), "exit 3");
    }
    EXPECT_TRUE(ends_within(child, 5s)) << "the worker's child " << child << " outlived it";
    if (runs(child)) ::kill(child, SIGKILL);
  }
}

// A folder of the tool's whose owner was killed with SIGKILL: what every sweep below must still remove,
// so a sweep that left everything alone (or stopped early) fails.
fs::path abandoned_folder(const fs::path& parent) {
  int ends[2];
  EXPECT_EQ(::pipe(ends), 0);
  const pid_t owner = ::fork();
  if (owner == 0) {
    const auto* kept = new WorkerFolder(parent.string());  // never destroyed
    (void)!::write(ends[1], kept->path().data(), kept->path().size());
    ::raise(SIGKILL);
  }
  ::close(ends[1]);
  char path[4096];
  const auto n = ::read(ends[0], path, sizeof path);
  ::close(ends[0]);
  ::waitpid(owner, nullptr, 0);
  return std::string(path, n > 0 ? static_cast<std::size_t>(n) : 0);
}

// A folder of the user's named `name` in `parent`, holding a file, an hour old.
fs::path users_folder(const fs::path& parent, const std::string& name) {
  const auto folder = parent / name;
  fs::create_directories(folder);
  std::ofstream(folder / "notes.txt") << "mine";
  fs::last_write_time(folder, fs::file_time_type::clock::now() - std::chrono::hours(1));
  return folder;
}

// The sweep, in a child that is killed after 20 s: a sweep that blocks fails the test instead of hanging it.
int sweep_within_a_time_limit(const fs::path& parent) {
  const pid_t sweeper = ::fork();
  if (sweeper == 0) {
    ::alarm(20);
    ::_exit(remove_abandoned_worker_folders(parent.string()));
  }
  int status = 0;
  ::waitpid(sweeper, &status, 0);
  EXPECT_TRUE(WIFEXITED(status)) << "the sweep blocked (ended by signal " << WTERMSIG(status) << ")";
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Folders of the user's that share the prefix, or are named like the tool's but carry no owner mark of
// its own, are never the tool's to remove, however old.
// Workers started ahead that never say they loaded are waited for until the deadline, unless the
// caller gives up first (a stop, or a refusal it throws): then the waiting ends within a poll, and the
// workers end with the launcher, their folders with them.
TEST_F(WorkerFolders, WorkersStartedAheadAreNoLongerAwaitedOnceTheCallerGivesUp) {
  const std::vector<std::map<std::string, std::string>> environments(3);
  for (const bool throws : {false, true}) {
    {
      ProcessLauncher launcher("/bin/sleep", folder_.string(), "600");
      const auto started = std::chrono::steady_clock::now();
      int polls = 0;
      const auto give_up = [&] {
        ++polls;
        if (std::chrono::steady_clock::now() - started < 300ms) return false;
        if (throws) throw UserError("refused");
        return true;
      };
      if (throws)
        EXPECT_THROW(launcher.prestart(environments, started + 600s, give_up), UserError);
      else
        launcher.prestart(environments, started + 600s, give_up);
      EXPECT_LT(std::chrono::steady_clock::now() - started, 60s) << "waited for workers that never load";
      EXPECT_GE(polls, 2);
      EXPECT_EQ(left(), 3);
    }
    EXPECT_EQ(left(), 0) << "a worker started ahead outlived its launcher";
  }
}

TEST_F(WorkerFolders, AUsersFoldersWithThePrefixAreLeftAlone) {
  const std::vector<fs::path> mine = {
      users_folder(folder_, "repro-audit-worker-mynotes"),  // not the generated pattern
      users_folder(folder_, "repro-audit-worker-"),        users_folder(folder_, "repro-audit-worker-ab_12"),
      users_folder(folder_, "repro-audit-worker-abc123"),  // the pattern, without a mark
      users_folder(folder_, "repro-audit-worker-abc124"),  // the pattern, a mark of other content
      users_folder(folder_, "repro-audit-worker-abc125"),  // the pattern, the mark a folder
  };
  std::ofstream(mine[4] / ".owner") << "my own file";
  fs::create_directories(mine[5] / ".owner");
  const auto gone = abandoned_folder(folder_);
  EXPECT_EQ(sweep_within_a_time_limit(folder_), 1);
  EXPECT_FALSE(fs::exists(gone));
  for (const auto& folder : mine) EXPECT_TRUE(fs::exists(folder / "notes.txt")) << folder;
}

// An owner mark that is a FIFO, a link to a FIFO or a link to a file (another local user's trap in a
// shared /tmp) neither blocks the sweep nor gets its folder removed.
TEST_F(WorkerFolders, AFifoOrLinkAsTheOwnerMarkIsLeftAloneWithoutBlocking) {
  const auto fifo = folder_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto mark = folder_ / "mark";
  std::ofstream(mark) << "repro-audit worker folder\n";
  const auto with_fifo = users_folder(folder_, "repro-audit-worker-fifo01");
  ASSERT_EQ(::mkfifo((with_fifo / ".owner").c_str(), 0600), 0);
  const auto linked_fifo = users_folder(folder_, "repro-audit-worker-fifo02");
  fs::create_symlink(fifo, linked_fifo / ".owner");
  const auto linked_file = users_folder(folder_, "repro-audit-worker-link01");
  fs::create_symlink(mark, linked_file / ".owner");
  const auto gone = abandoned_folder(folder_);
  EXPECT_EQ(sweep_within_a_time_limit(folder_), 1);
  EXPECT_FALSE(fs::exists(gone));
  for (const auto& folder : {with_fifo, linked_fifo, linked_file})
    EXPECT_TRUE(fs::exists(folder / "notes.txt")) << folder;
}

// A folder of another user, even one the tool made for them, is theirs to sweep.
TEST_F(WorkerFolders, AnotherUsersFolderIsLeftAlone) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  const auto theirs = abandoned_folder(folder_);
  std::ofstream(theirs / "notes.txt") << "theirs";
  for (const auto& path : {theirs, theirs / ".owner", theirs / "notes.txt"})
    ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0) << path;
  EXPECT_EQ(sweep_within_a_time_limit(folder_), 0);
  EXPECT_TRUE(fs::exists(theirs / "notes.txt"));
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
