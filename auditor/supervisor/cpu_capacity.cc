#include "supervisor/cpu_capacity.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

// Cores from a quota and period in microseconds; 0 for none (v2 "max", v1 -1) or nonsense.
int quota_cores(const std::string& quota, const std::string& period) {
  try {
    const double q = std::stod(quota), p = std::stod(period);
    if (q <= 0 || p <= 0) return 0;
    return std::max(1, static_cast<int>(std::ceil(q / p)));
  } catch (const std::exception&) {
    return 0;  // "max", an empty or missing file
  }
}

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// The folder of a cgroup and of each of its ancestors, innermost first, under a hierarchy's mount.
std::vector<fs::path> along(const fs::path& mount, const std::string& cgroup) {
  std::vector<fs::path> folders;
  fs::path relative = fs::path(cgroup).relative_path();
  while (true) {
    folders.push_back(mount / relative);
    if (relative.empty()) break;
    relative = relative.parent_path();
  }
  return folders;
}

int smallest(int limit, int found) { return found > 0 && (limit == 0 || found < limit) ? found : limit; }

}  // namespace

int cgroup_cpu_limit(const std::string& root) {
  const fs::path base = fs::path(root) / "sys/fs/cgroup";
  std::ifstream membership(fs::path(root) / "proc/self/cgroup");
  int limit = 0;
  std::string line;
  while (std::getline(membership, line)) {  // "id:controllers:path"
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string cgroup = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {  // v2, the unified hierarchy
      for (const auto& folder : along(base, cgroup)) {
        std::istringstream max(first_line(folder / "cpu.max"));
        std::string quota, period;
        max >> quota >> period;
        limit = smallest(limit, quota_cores(quota, period));
      }
      continue;
    }
    std::vector<std::string> names;
    std::istringstream list(controllers);
    for (std::string name; std::getline(list, name, ',');) names.push_back(name);
    if (std::find(names.begin(), names.end(), "cpu") == names.end()) continue;
    // v1: the cpu controller is mounted under its own name, or with cpuacct under the joined one.
    for (const auto& mount : {base / controllers, base / "cpu"}) {
      if (!fs::is_directory(mount)) continue;
      for (const auto& folder : along(mount, cgroup))
        limit = smallest(
            limit, quota_cores(first_line(folder / "cpu.cfs_quota_us"), first_line(folder / "cpu.cfs_period_us")));
      break;
    }
  }
  return limit;
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cores = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                            : static_cast<int>(std::thread::hardware_concurrency());
  cores = std::max(1, cores);
  const int quota = cgroup_cpu_limit();
  return quota > 0 ? std::min(cores, quota) : cores;
}

}  // namespace repro_audit
