// The Slurm recipe on a real single-node Slurm cluster: munged, slurmctld and slurmd started here in
// a temporary folder (Debian's slurm-wlm and munge, installed by `tools/install-deps test`),
// tools/cluster/slurm-audit.sbatch submitted with 3 shards of a small CPU audit, and the merged
// report held against an unsharded audit of the same config: same cells, verdicts and digests.
// When the daemons cannot start, the test fails with their logs: it never skips silently.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "report/json_io.h"
#include "test_paths.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Shell {
  int exit_code;
  std::string output;
};

Shell shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string output;
  char buffer[4096];
  while (auto n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string tail(const fs::path& path, std::size_t lines = 15) {
  const auto text = slurp(path);
  std::size_t at = text.size();
  for (std::size_t n = 0; n <= lines && at != std::string::npos && at > 0; ++n) at = text.rfind('\n', at - 1);
  return fmt::format("--- {}:\n{}", path.string(), at == std::string::npos ? text : text.substr(at + 1));
}

// A TCP port nothing listens on now.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  const int port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

std::string quoted(const fs::path& path) { return "'" + path.string() + "'"; }

// munged, slurmctld and slurmd of a one-node cluster, stopped and removed when it goes.
class SlurmCluster {
 public:
  SlurmCluster() {
    char folder[] = "/tmp/repro-audit-slurm-XXXXXX";
    if (!::mkdtemp(folder)) {
      failure_ = "cannot make a temporary folder";
      return;
    }
    root_ = folder;
    for (const char* daemon : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo"})
      if (shell(fmt::format("command -v {} || test -x /usr/sbin/{}", daemon, daemon)).exit_code != 0) {
        failure_ = fmt::format("{} is not installed: `tools/install-deps test` installs slurm-wlm and munge", daemon);
        return;
      }
    if (start_munge() && start_slurm()) wait_until_idle();
  }

  ~SlurmCluster() {
    for (const char* daemon : {"slurmd", "slurmctld"}) stop(root_ / (std::string(daemon) + ".pid"));
    if (!root_.empty()) {
      shell(fmt::format("/usr/sbin/munged --stop --socket={}", quoted(root_ / "munge" / "socket")));
      std::error_code ignored;
      fs::remove_all(root_, ignored);
    }
  }

  const std::string& failure() const { return failure_; }
  const fs::path& root() const { return root_; }
  std::string environment() const { return "SLURM_CONF=" + quoted(root_ / "slurm.conf"); }
  std::string logs() const {
    return tail(root_ / "munge" / "munged.log") + "\n" + tail(root_ / "slurmctld.log") + "\n" +
           tail(root_ / "slurmd.log");
  }

 private:
  bool start_munge() {
    const auto munge = root_ / "munge";
    fs::create_directories(munge);
    fs::permissions(root_, fs::perms::owner_all);
    fs::permissions(munge, fs::perms::owner_all);
    {
      std::ofstream key(munge / "munge.key", std::ios::binary);
      std::random_device random;
      for (int i = 0; i < 1024; ++i) key.put(static_cast<char>(random()));
    }
    fs::permissions(munge / "munge.key", fs::perms::owner_read);
    const auto started = shell(
        fmt::format("/usr/sbin/munged --force --key-file={} --socket={} --pid-file={} --log-file={} --seed-file={}",
                    quoted(munge / "munge.key"), quoted(munge / "socket"), quoted(munge / "munged.pid"),
                    quoted(munge / "munged.log"), quoted(munge / "munged.seed")));
    if (started.exit_code != 0) failure_ = "munged did not start: " + started.output + "\n" + logs();
    return started.exit_code == 0;
  }

  bool start_slurm() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    node_ = std::string(host).substr(0, std::string(host).find('.'));
    const auto* user = ::getpwuid(::geteuid());
    fs::create_directories(root_ / "state");
    fs::create_directories(root_ / "spool");
    std::ofstream conf(root_ / "slurm.conf");
    conf << fmt::format(
        "ClusterName=reproaudit\nSlurmctldHost={node}(127.0.0.1)\nSlurmctldPort={ctld}\nSlurmdPort={slurmd}\n"
        "AuthType=auth/munge\nAuthInfo=socket={root}/munge/socket\nCredType=cred/munge\n"
        "SlurmUser={user}\nSlurmdUser={user}\nStateSaveLocation={root}/state\nSlurmdSpoolDir={root}/spool\n"
        "SlurmctldPidFile={root}/slurmctld.pid\nSlurmdPidFile={root}/slurmd.pid\n"
        "SlurmctldLogFile={root}/slurmctld.log\nSlurmdLogFile={root}/slurmd.log\n"
        "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSwitchType=switch/none\nMpiDefault=none\n"
        "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nJobAcctGatherType=jobacct_gather/none\n"
        "AccountingStorageType=accounting_storage/none\nReturnToService=2\nSlurmdTimeout=60\n"
        "NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n"
        "PartitionName=audit Nodes={node} Default=YES MaxTime=INFINITE State=UP\n",
        fmt::arg("node", node_), fmt::arg("ctld", free_port()), fmt::arg("slurmd", free_port()),
        fmt::arg("root", root_.string()), fmt::arg("user", user ? user->pw_name : "root"),
        fmt::arg("cpus", std::max(1u, std::thread::hardware_concurrency())));
    conf.close();
    const auto conf_path = quoted(root_ / "slurm.conf");
    const auto controller = shell(fmt::format("/usr/sbin/slurmctld -f {} -i", conf_path));
    const auto daemon = shell(fmt::format("/usr/sbin/slurmd -f {} -N {}", conf_path, node_));
    if (controller.exit_code != 0 || daemon.exit_code != 0) {
      failure_ = fmt::format("slurmctld (exit {}): {}\nslurmd (exit {}): {}\n{}", controller.exit_code,
                             controller.output, daemon.exit_code, daemon.output, logs());
      return false;
    }
    return true;
  }

  void wait_until_idle() {
    const auto until = Clock::now() + std::chrono::seconds(60);
    std::string state;
    while (Clock::now() < until) {
      state = shell(environment() + " sinfo -h -o %T").output;
      if (state.find("idle") != std::string::npos) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    failure_ = fmt::format("the node did not become idle within 60 s (sinfo: '{}')\n{}", state, logs());
  }

  static void stop(const fs::path& pid_file) {
    std::ifstream in(pid_file);
    pid_t pid = 0;
    if (!(in >> pid) || pid <= 0) return;
    ::kill(pid, SIGTERM);
    for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (::kill(pid, 0) == 0) ::kill(pid, SIGKILL);
  }

  fs::path root_;
  std::string node_;
  std::string failure_;
};

struct Cells {
  std::vector<std::tuple<std::string, std::string, std::string>> cells;  // key, verdict, digest
};

std::vector<std::tuple<std::string, std::string, std::string>> verdicts(const Report& report) {
  std::vector<std::tuple<std::string, std::string, std::string>> result;
  for (const auto& cell : report.cells)
    result.emplace_back(cell.cell.key, to_string(cell.verdict.kind), cell.verdict.digest);
  return result;
}

TEST(Slurm, ShardedJobArrayMergesIntoTheUnshardedAudit) {
  const auto started = Clock::now();
  SlurmCluster cluster;
  ASSERT_EQ(cluster.failure(), "") << "the Slurm cluster did not start";
  const auto work = cluster.root() / "work";
  fs::create_directories(work);
  {
    std::ofstream config(work / "audit.yaml");
    config << "probes: {sum: all, scatter_add: [f32], bincount: [f32]}\nrepeats: 3\nprocesses: 2\ndevice: cpu\n";
  }
  const auto script = fs::path(test_paths::kSourceDir) / "tools" / "cluster" / "slurm-audit.sbatch";
  const auto out = work / "reports";
  const auto submitted =
      // One CPU a task (the script asks for two): two shards run at once on this node's two CPUs.
      shell(fmt::format("cd {} && {} REPRO_AUDIT={} REPRO_AUDIT_SBATCH_OPTIONS=--cpus-per-task=1 {} 3 {} --config {}",
                        quoted(work), cluster.environment(), quoted(test_paths::kBinary), quoted(script), quoted(out),
                        quoted(work / "audit.yaml")));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output << cluster.logs();
  EXPECT_NE(submitted.output.find("(3 tasks)"), std::string::npos) << submitted.output;

  // Every job has left the queue once the merge job has run.
  const auto until = Clock::now() + std::chrono::minutes(15);
  std::string queue;
  do {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    queue = shell(cluster.environment() + " squeue -h -o '%i %T %r'").output;
  } while (!queue.empty() && Clock::now() < until);
  std::string job_logs;
  for (const auto& name : {"shard-0.out", "shard-1.out", "shard-2.out", "merge.out"})
    job_logs += tail(out / "logs" / name, 8) + "\n";
  ASSERT_TRUE(queue.empty()) << "jobs still queued after 15 minutes:\n" << queue << job_logs << cluster.logs();
  ASSERT_TRUE(fs::exists(out / "merged.json")) << job_logs << cluster.logs();
  EXPECT_TRUE(fs::exists(out / "merged.html"));
  const auto sharded_seconds = std::chrono::duration<double>(Clock::now() - started).count();

  for (int task = 0; task < 3; ++task) {
    const auto shard = load_report_file((out / fmt::format("shard-{}.json", task)).string());
    ASSERT_TRUE(shard.shard) << task;
    EXPECT_EQ(shard.shard->source, "slurm");
    EXPECT_EQ(shard.shard->index, task + 1);
    EXPECT_EQ(shard.shard->count, 3);
    EXPECT_FALSE(shard.cells.empty()) << "shard " << task + 1 << " holds no cell";
  }
  const auto merged = load_report_file((out / "merged.json").string());
  ASSERT_TRUE(merged.merge);
  EXPECT_EQ(merged.merge->reports.size(), 3u);
  EXPECT_TRUE(merged.merge->missing_shards.empty());

  const auto whole_path = work / "whole.json";
  const auto unsharded =
      shell(fmt::format("cd {} && {} run --config {} --shard-from none --json {}", quoted(work),
                        quoted(test_paths::kBinary), quoted(work / "audit.yaml"), quoted(whole_path)));
  ASSERT_EQ(unsharded.exit_code, 0) << unsharded.output;
  const auto whole = load_report_file(whole_path.string());
  ASSERT_FALSE(whole.cells.empty());
  EXPECT_EQ(verdicts(merged), verdicts(whole));
  std::cout << fmt::format(
      "[ slurm    ] {} cells in 3 shards, merged: {:.1f} s from start of the cluster to the merged "
      "report; {} of the cells deterministic\n",
      merged.cells.size(), sharded_seconds, std::count_if(merged.cells.begin(), merged.cells.end(), [](const auto& c) {
        return c.verdict.kind == VerdictKind::deterministic;
      }));
}

}  // namespace
}  // namespace repro_audit
