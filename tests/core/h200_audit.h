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

inline Report h200_audit() {
  const auto path = std::filesystem::temp_directory_path() / ("h200-audit-" + std::to_string(getpid()) + ".json");
  const auto command = std::string("gzip -dc '") + test_paths::kFixtureDir +
                       "/h200-torch-2.11.0-default-audit.json.gz' > '" + path.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
  auto report = load_report_file(path.string());
  std::filesystem::remove(path);
  return report;
}

}  // namespace repro_audit::testing
