#pragma once
// The default CUDA audit an H200 ran with torch 2.11.0 (CUPTI data and all), loaded as a report: the
// fixture the GPU-less tests stand on (tests/core/fixtures/h200-torch-2.11.0-default-audit.json.gz).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "report/json_io.h"
#include "test_paths.h"

namespace repro_audit::testing {

// A gzipped report of tests/core/fixtures, loaded.
inline Report gpu_audit(const std::string& fixture) {
  const auto path = std::filesystem::temp_directory_path() / ("gpu-audit-" + std::to_string(getpid()) + ".json");
  const auto command =
      std::string("gzip -dc '") + test_paths::kFixtureDir + "/" + fixture + "' > '" + path.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
  auto report = load_report_file(path.string());
  std::filesystem::remove(path);
  return report;
}

inline Report h200_audit() { return gpu_audit("h200-torch-2.11.0-default-audit.json.gz"); }

// The default CUDA audit an H100 ran with torch 2.11.0, every timing sample in it: its later timing
// rounds timed launch-bound runs in fresh workers (trace/held_stream.h).
inline Report h100_audit() {
  static const Report loaded = gpu_audit("h100-torch-2.11.0-default-audit-2026-11-27.json.gz");  // 0.7 s to load
  return loaded;
}

}  // namespace repro_audit::testing
