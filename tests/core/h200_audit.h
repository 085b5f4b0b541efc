#pragma once
// The default CUDA audit an H200 ran with torch 2.11.0 (CUPTI data and all), loaded as a report: the
// fixture the GPU-less tests stand on (tests/core/fixtures/h200-torch-2.11.0-default-audit.json.gz).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "report/json_io.h"
#include "test_paths.h"

namespace repro_audit::testing {

// A gzipped file of tests/core/fixtures, unpacked into a temporary file for `read`, then removed.
template <typename Read>
auto read_fixture(const std::string& fixture, const Read& read) {
  const auto path = std::filesystem::temp_directory_path() / ("gpu-fixture-" + std::to_string(getpid()) + ".json");
  const auto command =
      std::string("gzip -dc '") + test_paths::kFixtureDir + "/" + fixture + "' > '" + path.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
  auto read_back = read(path);
  std::filesystem::remove(path);
  return read_back;
}

// A gzipped report of tests/core/fixtures, loaded.
inline Report gpu_audit(const std::string& fixture) {
  return read_fixture(fixture, [](const std::filesystem::path& path) { return load_report_file(path.string()); });
}

// A gzipped JSON file of tests/core/fixtures as it is (fields the report model does not keep: py cells' causes,
// random sources, per-op timings).
inline nlohmann::json fixture_json(const std::string& fixture) {
  return read_fixture(fixture, [](const std::filesystem::path& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
  });
}

// A gzipped report of tests/core/fixtures, loaded on first use and kept for the test process's other tests.
inline const Report& gpu_audit_once(const std::string& fixture) {
  static std::map<std::string, Report> loaded;
  auto found = loaded.find(fixture);
  if (found == loaded.end()) found = loaded.emplace(fixture, gpu_audit(fixture)).first;
  return found->second;
}

inline Report h200_audit() { return gpu_audit("h200-torch-2.11.0-default-audit.json.gz"); }

// The default CUDA audit an H100 ran with torch 2.11.0, every timing sample in it: its later timing
// rounds timed launch-bound runs in fresh workers (trace/held_stream.h).
inline Report h100_audit() { return gpu_audit_once("h100-torch-2.11.0-default-audit-2026-11-27.json.gz"); }

}  // namespace repro_audit::testing
