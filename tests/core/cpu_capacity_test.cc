#include "supervisor/cpu_capacity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

// A machine's /proc/self/cgroup and /sys/fs/cgroup, built in a folder of its own.
class CgroupFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("repro-audit-cgroup-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& relative, const std::string& text) const {
    const auto path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  int limit() const { return cgroup_cpu_limit(root_.string()); }

  fs::path root_;
};

TEST_F(CgroupFiles, NoCgroupFileIsNoLimit) { EXPECT_EQ(limit(), 0); }

TEST_F(CgroupFiles, UnifiedHierarchyWithoutQuotaIsNoLimit) {
  write("proc/self/cgroup", "0::/\n");
  write("sys/fs/cgroup/cpu.max", "max 100000\n");
  EXPECT_EQ(limit(), 0);
}

TEST_F(CgroupFiles, UnifiedQuotaRoundsUpToWholeCores) {
  write("proc/self/cgroup", "0::/\n");
  write("sys/fs/cgroup/cpu.max", "150000 100000\n");  // docker run --cpus 1.5
  EXPECT_EQ(limit(), 2);
}

TEST_F(CgroupFiles, UnifiedQuotaOfAnAncestorCounts) {
  // A Kubernetes pod's limit sits on the pod's cgroup; the container's own says max.
  write("proc/self/cgroup", "0::/kubepods/pod7/container3\n");
  write("sys/fs/cgroup/kubepods/pod7/container3/cpu.max", "max 100000\n");
  write("sys/fs/cgroup/kubepods/pod7/cpu.max", "400000 100000\n");
  write("sys/fs/cgroup/kubepods/cpu.max", "1600000 100000\n");
  EXPECT_EQ(limit(), 4);
}

TEST_F(CgroupFiles, QuotaUnderOneCoreIsOneCore) {
  write("proc/self/cgroup", "0::/\n");
  write("sys/fs/cgroup/cpu.max", "20000 100000\n");
  EXPECT_EQ(limit(), 1);
}

TEST_F(CgroupFiles, VersionOneQuotaOnTheJoinedMount) {
  write("proc/self/cgroup", "11:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n");
  write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "300000\n");
  write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(limit(), 3);
}

TEST_F(CgroupFiles, VersionOneUnlimitedIsNoLimit) {
  // As on a host whose cpu controller has no quota (-1) and only memory is limited.
  write("proc/self/cgroup", "4:memory:/process_api/x\n1:cpu:/\n0::/\n");
  write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(limit(), 0);
}

TEST_F(CgroupFiles, GarbageIsNoLimit) {
  write("proc/self/cgroup", "not a cgroup line\n0::/\n");
  write("sys/fs/cgroup/cpu.max", "lots\n");
  EXPECT_EQ(limit(), 0);
}

TEST(UsableCores, AtLeastOneAndNoMoreThanTheMachineHas) {
  const int cores = usable_cores();
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores, static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_CONF))));
}

}  // namespace
}  // namespace repro_audit
