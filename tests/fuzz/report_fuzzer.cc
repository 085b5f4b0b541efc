// Any input to the report loader ends in a Report or a UserError, never a crash or another exception.
// The same path as load_report_file, minus the disk. A report that loads is then exported with
// `repro` (its inputs answered by a scripted exporter, as `repro-audit export-inputs` answers them)
// into a scratch folder, and nothing may be written outside that folder's output subfolder.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common/user_error.h"
#include "repro/export.h"
#include "report/json_io.h"

namespace {

namespace fs = std::filesystem;
using namespace repro_audit;

// Answers each cell of an export request the way export-inputs does: its inputs and an origin op.
class ScriptedExporter : public Worker {
 public:
  explicit ScriptedExporter(const std::string& request) {
    const auto message = nlohmann::json::parse(request);
    for (const auto& cell : message.at("request").at("cells")) {
      nlohmann::json answer = nlohmann::json::object();
      answer["key"] = cell.at("key");
      answer["inputs"] = nlohmann::json::array();
      answer["inputs"].push_back({{"name", "x"}, {"dtype", "Float"}, {"sizes", std::vector<int>{2, 3}}});
      answer["input_digest"] = std::string(32, 'a');
      answer["named"] = std::vector<std::string>{"x"};
      answer["origin"] = {{"name", "aten::index_put_"},
                          {"overload", ""},
                          {"arguments", "T[0], [T[1]], T[2], True"},
                          {"tensors", nlohmann::json::array()}};
      lines_.push_back(answer.dump());
    }
  }
  ReadStatus read_line(std::string& line, std::chrono::steady_clock::time_point) override {
    if (lines_.empty()) return ReadStatus::end_of_output;
    line = lines_.front();
    lines_.pop_front();
    return ReadStatus::line;
  }
  void terminate(std::chrono::milliseconds) override {}
  std::string wait() override { return "exit 0"; }
  int signal() const override { return 0; }
  std::string log_tail(std::size_t) const override { return ""; }

 private:
  std::deque<std::string> lines_;
};

class ScriptedLauncher : public WorkerLauncher {
 public:
  std::unique_ptr<Worker> start(const std::string& request, const std::map<std::string, std::string>&) override {
    return std::make_unique<ScriptedExporter>(request);
  }
};

// In the folder the fuzzer runs in (its build folder under CTest), emptied when it starts: libFuzzer
// ends with _Exit, so nothing could remove a folder made elsewhere.
const fs::path& scratch() {
  static const fs::path folder = [] {
    const auto path = fs::current_path() / "report-fuzz-scratch";
    fs::remove_all(path);
    fs::create_directories(path);
    return path;
  }();
  return folder;
}

void export_everything(const Report& report) {
  std::vector<const CellReport*> cells;
  for (const auto& cell : report.cells) cells.push_back(&cell);
  ScriptedLauncher launcher;
  const auto output = scratch() / "out";
  try {
    (void)export_repros(report, cells, {}, output.string(), launcher);
  } catch (const UserError&) {
  }
  for (const auto& entry : fs::recursive_directory_iterator(scratch())) {
    const auto relative = entry.path().lexically_relative(output);
    if (relative.empty() || *relative.begin() == "..") {
      std::fprintf(stderr, "written outside the export folder: %s\n", entry.path().c_str());
      std::abort();
    }
  }
  fs::remove_all(output);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto report = parse_report(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
    export_everything(report);
  } catch (const UserError&) {
  }
  return 0;
}
