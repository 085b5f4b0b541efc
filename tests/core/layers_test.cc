// The house rules, read from the source tree: each folder includes only the folders below it (the
// README's architecture section), only the CUDA files include CUDA headers and only the gloo group
// gloo's, the rooms of the worker hold at most 15 files each, and no source file is over 400 lines with
// its header.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/pattern.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;

// What each folder may include besides itself and common/ (the README's dependency rule). Only the top
// ones, cli/ and probes/, may use the torch side's rooms in any order they need.
const std::map<std::string, std::set<std::string>> kMayInclude = {
    {"common", {}},
    {"inputs", {}},
    {"timing", {}},
    {"config", {}},
    {"fingerprint", {}},
    {"hash", {}},
    {"kind", {"config"}},
    {"plan", {"config", "kind"}},
    {"verdict", {"config", "kind", "plan", "timing"}},
    {"protocol", {"config", "plan", "timing", "verdict"}},
    {"trace", {"fingerprint", "hash"}},
    {"report", {"config", "kind", "plan", "protocol", "verdict"}},
    {"supervisor", {"config", "hash", "kind", "plan", "protocol", "timing", "verdict"}},
    {"audit", {"config", "plan", "report", "supervisor", "timing", "verdict"}},
    {"compare", {"config", "kind", "plan", "report", "verdict"}},
    {"merge", {"compare", "report"}},
    {"fleet", {"compare", "hash", "report"}},
    {"explain", {"compare", "config", "plan", "report"}},
    {"output", {"compare", "explain", "fleet", "report"}},
    {"repro", {"config", "fingerprint", "hash", "kind", "protocol", "report", "supervisor", "verdict"}},
    {"kinds", {"compare", "hash", "kind", "plan", "report", "repro", "verdict"}},
    // The torch side, lowest first.
    {"kernels", {}},
    {"probe", {"config", "hash", "inputs"}},
    {"apply", {"config"}},
    {"recording", {"hash", "trace", "verdict"}},
    {"models", {"config", "probe"}},
    {"ranks", {"hash", "probe"}},
    {"python_runner", {"protocol", "repro"}},
    {"runners",
     {"apply", "audit", "config", "hash", "kind", "models", "plan", "probe", "protocol", "ranks", "recording",
      "supervisor", "trace", "verdict"}},
    {"worker",
     {"apply", "fingerprint", "hash", "kind", "plan", "probe", "protocol", "python_runner", "ranks", "recording",
      "runners", "trace", "verdict"}},
    {"probes", {"inputs", "kernels", "probe", "ranks"}},
};

// The rooms the worker's parts live in.
const std::set<std::string> kWorkerRooms = {"worker", "probe",         "recording", "models",
                                            "ranks",  "python_runner", "runners",   "apply"};

struct SourceFile {
  fs::path path;
  std::string folder;  // auditor/<folder>, or probes, kernels
};

std::vector<SourceFile> source_files() {
  std::vector<SourceFile> files;
  const fs::path root = test_paths::kSourceDir;
  for (const auto* top : {"auditor", "probes", "kernels"})
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      if (!entry.is_regular_file()) continue;
      const auto relative = fs::relative(entry.path(), root);
      auto part = relative.begin();
      std::string folder = part->string();
      if (folder == "auditor") folder = (++part)->string();
      files.push_back({entry.path(), folder});
    }
  return files;
}

std::string text_of(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int lines_of(const fs::path& path) {
  if (!fs::exists(path)) return 0;
  const auto text = text_of(path);
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(Layers, EveryFolderIncludesOnlyTheFoldersBelowIt) {
  const repro_audit::Pattern include(R"re(#include "([a-z_]+)/[^"]+")re");
  int checked = 0;
  for (const auto& file : source_files()) {
    if (file.folder == "cli") continue;  // the top: it may use everything
    const auto allowed = kMayInclude.find(file.folder);
    ASSERT_NE(allowed, kMayInclude.end()) << "a folder the rule does not name: " << file.folder << " (" << file.path
                                          << "); add it to the README's rule and here";
    const auto text = text_of(file.path);
    for (const auto& match : include.search_all(text)) {
      const auto& used = match[1];
      if (used == file.folder || used == "common" || used == "generated") continue;
      EXPECT_TRUE(allowed->second.count(used))
          << file.path << " includes " << match[0] << ": " << file.folder << "/ may not use " << used << "/";
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);
}

// The rule itself has no cycle: every folder can be placed above everything it uses.
TEST(Layers, TheRuleHasNoCycle) {
  std::map<std::string, int> state;  // 1: being visited, 2: done
  std::function<void(const std::string&, std::vector<std::string>&)> visit = [&](const std::string& folder,
                                                                                 std::vector<std::string>& path) {
    path.push_back(folder);
    ASSERT_NE(state[folder], 1) << "a cycle: " << testing::PrintToString(path);
    if (state[folder] == 2) {
      path.pop_back();
      return;
    }
    state[folder] = 1;
    const auto found = kMayInclude.find(folder);
    if (found != kMayInclude.end())
      for (const auto& used : found->second) visit(used, path);
    state[folder] = 2;
    path.pop_back();
  };
  for (const auto& [folder, used] : kMayInclude) {
    std::vector<std::string> path;
    visit(folder, path);
  }
}

// The README: only files named *cuda*, the CUPTI tracer's two files and *.cu include CUDA headers (NCCL's
// too, and trace/cupti_activity.h, which brings cupti.h), and only ranks/gloo_group.cc includes gloo's;
// only CUDA builds compile the first, so a CUDA header anywhere else breaks the CPU-only builds.
TEST(Layers, OnlyTheCudaFilesIncludeCudaHeadersAndOnlyTheGlooGroupGloos) {
  const repro_audit::Pattern cuda_header(
      R"re(#include [<"]((cuda|cupti|nccl|cudnn|cublas|cusparse|curand|cufft|cub/|thrust/)[^>"]*|[^>"]*(/cuda/|/cudnn/|ProcessGroupNCCL|cupti_activity\.h)[^>"]*)[>"])re");
  const repro_audit::Pattern gloo_header(R"re(#include [<"]((gloo/|[^>"]*ProcessGroupGloo)[^>"]*)[>"])re");
  const std::set<std::string> cupti_tracer = {"cupti_tracer.cc", "cupti_activity.h"};
  int cuda_files = 0;
  for (const auto& file : source_files()) {
    const auto name = file.path.filename().string();
    const auto text = text_of(file.path);
    const bool may_use_cuda = name.find("cuda") != std::string::npos || file.path.extension() == ".cu" ||
                              (file.folder == "trace" && cupti_tracer.count(name));
    const auto cuda_includes = cuda_header.search_all(text);
    for (const auto& match : cuda_includes)
      EXPECT_TRUE(may_use_cuda) << file.path << " includes " << match[0]
                                << ": only *cuda* files, *.cu and the CUPTI tracer's may (the README)";
    if (!cuda_includes.empty()) ++cuda_files;
    for (const auto& match : gloo_header.search_all(text))
      EXPECT_TRUE(file.folder == "ranks" && name == "gloo_group.cc") << file.path << " includes " << match[0];
  }
  EXPECT_GE(cuda_files, 8);  // the rule read the CUDA platform's files, not nothing
}

TEST(Layers, TheWorkersRoomsHoldAtMost15FilesEach) {
  std::map<std::string, int> count;
  for (const auto& file : source_files())
    if (kWorkerRooms.count(file.folder)) ++count[file.folder];
  EXPECT_EQ(count.size(), kWorkerRooms.size());
  for (const auto& [room, files] : count) EXPECT_LE(files, 15) << "auditor/" << room;
}

TEST(Layers, NoSourceFileIsOver400LinesWithItsHeader) {
  std::set<fs::path> seen;
  for (const auto& file : source_files()) {
    auto stem = file.path;
    stem.replace_extension();
    if (!seen.insert(stem).second) continue;
    const auto ext = file.path.extension().string();
    if (ext != ".cc" && ext != ".h" && ext != ".cu" && ext != ".py") continue;
    int lines = lines_of(fs::path(stem.string() + ext));
    if (ext == ".cc" || ext == ".h" || ext == ".cu") {
      lines = lines_of(stem.string() + ".cc") + lines_of(stem.string() + ".h") + lines_of(stem.string() + ".cu");
    }
    EXPECT_LE(lines, 400) << stem << " with its header";
  }
}

}  // namespace
