// The probes' declarations per torch release, against a real audit: the default CUDA audit an H200 ran
// with torch 2.11.0 (CUPTI data and all), judged by 2.11's documentation and by the newest.
#include <gtest/gtest.h>

#include "../core/h200_audit.h"
#include "config/catalogue_json.h"
#include "probe/probe_catalogue.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

using testing::h200_audit;

// The contradictions the audit's cells make against `torch`'s declarations, by cell key.
std::map<std::string, Contradiction> contradictions(const Report& report, const std::string& torch) {
  auto catalogue = declared_catalogue();
  resolve_documentation(catalogue, torch);
  std::map<std::string, Contradiction> found;
  for (const auto& cell : report.cells) {
    const auto* probe = find_probe(catalogue, cell.cell.probe);
    if (!probe) continue;
    if (auto contradiction =
            find_contradiction(probe->documented_on(cell.cell.variant, "cuda"), cell.cell.settings, cell.verdict))
      found.emplace(cell.cell.key, *contradiction);
  }
  return found;
}

constexpr const char* kMax3dStrict =
    "pooling/max3d-f32@cuda:0|cublas_workspace_config=:4096:8,cudnn_deterministic=true,deterministic_algorithms=on";
constexpr const char* kAdaptiveMax3dStrict =
    "pooling/adaptive_max3d-f32@cuda:0|cublas_workspace_config=:4096:8,cudnn_deterministic=true,deterministic_"
    "algorithms=on";

TEST(Documentation, MaxPool3dRaisingOnTorch211IsWhatItsDocumentationSays) {
  const auto report = h200_audit();
  ASSERT_EQ(report.environment.value("torch", ""), "2.11.0");
  ASSERT_NE(find_cell(report, kMax3dStrict), nullptr);
  EXPECT_EQ(find_cell(report, kMax3dStrict)->verdict.kind, VerdictKind::raises);

  const auto on_211 = contradictions(report, "2.11.0");
  EXPECT_EQ(on_211.count(kMax3dStrict), 0u) << on_211.at(kMax3dStrict).text;
  const auto newest = contradictions(report, kNewestDocumentedTorch);
  ASSERT_EQ(newest.count(kMax3dStrict), 1u);
  EXPECT_TRUE(newest.at(kMax3dStrict).breaks_audit);
}

// adaptive_max_pool3d's CUDA backward diverges under deterministic algorithms without raising: no
// release documents that, so it stays a failing contradiction under every release's declarations.
TEST(Documentation, TheAdaptiveMaxPool3dBugFailsUnderEveryReleasesDocumentation) {
  const auto report = h200_audit();
  for (const std::string torch : {"2.9.0", "2.11.0", "2.14.1", kNewestDocumentedTorch}) {
    const auto found = contradictions(report, torch);
    ASSERT_EQ(found.count(kAdaptiveMax3dStrict), 1u) << torch;
    EXPECT_TRUE(found.at(kAdaptiveMax3dStrict).breaks_audit) << torch;
    EXPECT_NE(found.at(kAdaptiveMax3dStrict).text.find("a PyTorch bug to report"), std::string::npos);
  }
}

// The cuBLAS workspace check: up to 2.9 matmul under strict without CUBLAS_WORKSPACE_CONFIG had to
// raise; from 2.10 it is documented deterministic. The audit ran it with the setting, so neither
// release's declaration finds a contradiction in its strict cells.
TEST(Documentation, ACublasProductIsDeclaredPerRelease) {
  auto catalogue = declared_catalogue();
  resolve_documentation(catalogue, "2.9.0");
  EXPECT_EQ(find_probe(catalogue, "matmul")->documented_on("f32", "cuda"), Documented::cublas_workspace);
  catalogue = declared_catalogue();
  resolve_documentation(catalogue, "2.10.0");
  EXPECT_EQ(find_probe(catalogue, "matmul")->documented_on("f32", "cuda"), Documented::deterministic);
  const auto report = h200_audit();
  for (const auto& [key, contradiction] : contradictions(report, "2.11.0"))
    EXPECT_EQ(key.rfind("matmul/", 0), std::string::npos) << key << ": " << contradiction.text;
}

// The front end runs audits with the catalogue this side writes as JSON at build time
// (cli/embedded_catalogue.h): every probe's declarations, of this torch and of every release, read back
// equal to what the probes declare.
TEST(Documentation, EveryProbesDeclarationsReadBackFromTheFrontEndsJson) {
  const DocumentedCatalogue registered{registered_catalogue(), registered_documentation()};
  const auto read = catalogue_from_json(nlohmann::json::parse(catalogue_to_json(registered).dump()));
  EXPECT_EQ(read.catalogue, registered.catalogue);
  EXPECT_EQ(read.documentation.text(), registered.documentation.text());
  EXPECT_GT(read.catalogue.size(), 20u);
  const auto declared = declared_catalogue();
  EXPECT_EQ(catalogue_from_json(catalogue_to_json({declared, {}})).catalogue, declared);
}

}  // namespace
}  // namespace repro_audit
