#include "config/documentation.h"

#include <gtest/gtest.h>

#include "common/user_error.h"
#include "report/json_io.h"
#include "repro/parity.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

// One probe whose CUDA declaration changed twice, as MaxPool3d's and cumsum's did: raised up to 2.10,
// a deterministic alternative from 2.11, deterministic outright from 2.13; a variant with its own
// older declaration; the CPU never changed.
Catalogue two_versions() {
  ProbeInfo probe;
  probe.name = "pool";
  probe.documented = {{"cpu", Documented::deterministic}, {"cuda", Documented::deterministic}};
  probe.documented_before = {{"2.13", "cuda", Documented::alternative_under_strict, "moved in 2.13"},
                             {"2.11", "cuda", Documented::raises_under_strict, "moved in 2.11"}};
  VariantInfo plain{"f32", "", {"cpu", "cuda"}, ""};
  VariantInfo own{"f64", "", {"cpu", "cuda"}, ""};
  own.documented = {{"cuda", Documented::nondeterministic}};
  own.documented_before = {{"2.12", "cuda", Documented::raises_under_strict, "its own change"}};
  probe.variants = {plain, own};
  return {probe};
}

Documented on(const std::string& torch, const std::string& variant, const std::string& device = "cuda") {
  auto catalogue = two_versions();
  resolve_documentation(catalogue, torch);
  return catalogue.front().documented_on(variant, device);
}

TEST(Documentation, ReleaseNumbersCompareByTheirNumbers) {
  EXPECT_LT(compare_torch_versions("2.9", "2.11"), 0);
  EXPECT_LT(compare_torch_versions("2.11.0+cu130", "2.12"), 0);
  EXPECT_EQ(compare_torch_versions("2.13", "2.13.0"), 0);
  EXPECT_GT(compare_torch_versions("2.13.1", "2.13"), 0);
  EXPECT_GT(compare_torch_versions("3.0.0a0+git1234", "2.99"), 0);
  EXPECT_LT(compare_torch_versions("", "2.0"), 0);
}

TEST(Documentation, EachTorchGetsTheDeclarationOfItsRelease) {
  EXPECT_EQ(on("2.9.1", "f32"), Documented::raises_under_strict);
  EXPECT_EQ(on("2.10.0+cu130", "f32"), Documented::raises_under_strict);
  EXPECT_EQ(on("2.11.0+cu130", "f32"), Documented::alternative_under_strict);
  EXPECT_EQ(on("2.12.0", "f32"), Documented::alternative_under_strict);
  EXPECT_EQ(on("2.13.0", "f32"), Documented::deterministic);
  EXPECT_EQ(on("2.14.1", "f32"), Documented::deterministic);
  EXPECT_EQ(on("2.11.0", "f32", "cpu"), Documented::deterministic);
}

TEST(Documentation, AVariantsOwnHistoryOverridesTheProbes) {
  EXPECT_EQ(on("2.9.0", "f64"), Documented::raises_under_strict);
  EXPECT_EQ(on("2.11.0", "f64"), Documented::raises_under_strict);
  EXPECT_EQ(on("2.12.0", "f64"), Documented::nondeterministic);
  EXPECT_EQ(on("2.12.0", "f64", "cpu"), Documented::deterministic);
}

TEST(Documentation, TheSourceSaysWhichReleaseAndWhenTorchIsNewerThanKnown) {
  auto catalogue = two_versions();
  const auto older = resolve_documentation(catalogue, "2.11.0+cu130");
  EXPECT_EQ(older.release, "2.11");
  EXPECT_FALSE(older.newer_than_known);
  EXPECT_EQ(older.text(), "torch 2.11's documentation");

  catalogue = two_versions();
  const auto newer = resolve_documentation(catalogue, "9.1.0");
  EXPECT_EQ(newer.release, kNewestDocumentedTorch);
  EXPECT_TRUE(newer.newer_than_known);
  EXPECT_NE(newer.text().find("the newest known: torch 9.1.0 is newer"), std::string::npos) << newer.text();
  EXPECT_EQ(catalogue.front().documented_on("f32", "cuda"), Documented::deterministic);

  catalogue = two_versions();
  const auto unknown = resolve_documentation(catalogue, "");
  EXPECT_EQ(unknown.release, kNewestDocumentedTorch);
  EXPECT_NE(unknown.text().find("unknown"), std::string::npos);
  EXPECT_EQ(catalogue.front().documented_on("f32", "cuda"), Documented::deterministic);
}

// The verdict an older torch gives is no contradiction of its own documentation: raising under strict
// is what 2.10 documents, a contradiction of what 2.13 documents.
TEST(Documentation, AnOlderTorchsRaiseIsJudgedByItsOwnDocumentation) {
  Verdict raised;
  raised.kind = VerdictKind::raises;
  raised.digests_agree = true;
  const FlagSet strict = {{"deterministic_algorithms", "on"}};
  EXPECT_FALSE(find_contradiction(on("2.10.0", "f32"), strict, raised));
  EXPECT_TRUE(find_contradiction(on("2.13.0", "f32"), strict, raised));
}

// Flash and memory-efficient attention backward on CUDA: deterministic algorithms switch them to an ordered
// pass, so a divergence under strict contradicts the documentation; warn_only keeps the atomic pass and
// warns once per process, so under strict-warn a divergence, a warning or neither is what is documented.
TEST(Documentation, AnAlternativeUnlessWarnOnlyMayDivergeUnderWarnOnly) {
  Verdict diverged;
  diverged.kind = VerdictKind::nondeterministic;
  diverged.digests_agree = false;
  const FlagSet strict = {{"deterministic_algorithms", "on"}}, warn = {{"deterministic_algorithms", "warn"}};
  const auto alternative = Documented::alternative_unless_warn_only;
  EXPECT_TRUE(find_contradiction(alternative, strict, diverged));
  EXPECT_FALSE(find_contradiction(alternative, warn, diverged));
  EXPECT_FALSE(find_contradiction(alternative, {}, diverged));
  // The documented switch alone would call the same warn_only divergence a PyTorch bug.
  EXPECT_TRUE(find_contradiction(Documented::alternative_under_strict, warn, diverged));
  Verdict raised;
  raised.kind = VerdictKind::raises;
  raised.digests_agree = true;
  EXPECT_TRUE(find_contradiction(alternative, strict, raised));
  EXPECT_TRUE(may_diverge(alternative, warn));
  EXPECT_FALSE(may_diverge(alternative, strict));
  EXPECT_EQ(documented_from_string(to_string(alternative)), alternative);
}

// The report keeps which documentation it used; an older report has none and says so; a hostile one
// is malformed, not printed.
TEST(Documentation, TheReportKeepsWhichDocumentationItUsed) {
  Report report;
  report.documentation = DocumentationSource{"2.11.0+cu130", "2.11", false};
  const auto read = report_from_json(report_to_json(report), "report.json");
  ASSERT_TRUE(read.documentation);
  EXPECT_EQ(read.documentation->torch, "2.11.0+cu130");
  EXPECT_EQ(read.documentation->release, "2.11");
  EXPECT_FALSE(read.documentation->newer_than_known);

  auto older = report_to_json(Report{});
  older.erase("documentation");
  EXPECT_FALSE(report_from_json(older, "old.json").documentation);

  for (const auto& [field, value] : std::vector<std::pair<std::string, std::string>>{
           {"release", "2.11; rm -rf /"}, {"release", ""}, {"torch", "2.11\u001b[31m"}, {"torch", "a b"}}) {
    auto hostile = report_to_json(report);
    hostile["documentation"][field] = value;
    EXPECT_THROW(report_from_json(hostile, "hostile.json"), UserError) << field << "=" << value;
  }
}

// A probe's declared Python path describes the torch it was checked with: on an older torch it may not
// exist yet, which is no stale note; on that torch or a newer one a path that does not hold fails.
TEST(Documentation, APythonPathAbsentFromAnOlderTorchIsNoFailure) {
  ParityResult result;
  result.paths = {{"sum", "a newer kernel", false, true, "", false}};
  EXPECT_EQ(result.failures(), 0);
  EXPECT_EQ(result.not_run(), 0);
  EXPECT_NE(parity_text(result).find("absent"), std::string::npos);
  result.paths.front().applies = true;
  EXPECT_EQ(result.failures(), 1);
  EXPECT_NE(parity_text(result).find("STALE"), std::string::npos);
}

}  // namespace
}  // namespace repro_audit
