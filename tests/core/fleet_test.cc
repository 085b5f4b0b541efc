// The fleet matrix on crafted reports of three platforms: two hosts of platform A, one of B (another
// CUDA driver), one of C (another GPU and torch). Which cells are portable, which split and why.
#include "fleet/fleet_matrix.h"

#include <gtest/gtest.h>

#include "fleet/fleet_printers.h"
#include "sample_reports.h"

namespace repro_audit {
namespace {

using testing::cell;
using testing::report_of;

const std::string kFleetDigestA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                  kFleetDigestB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                  kFleetDigestC = "cccccccccccccccccccccccccccccccc";

nlohmann::json gpu_environment(const std::string& gpu, int driver, const std::string& torch) {
  auto environment = testing::sample_environment();
  environment["torch"] = torch;
  environment["cuda"]["driver"] = driver;
  environment["cuda"]["available"] = true;
  environment["cuda"].erase("reason");
  environment["cuda"]["devices"] = nlohmann::json::array({{{"name", gpu}, {"capability", "8.0"}}});
  return environment;
}

// Per host: the digest of sum/f32 (portable), of matmul/f32 (split by driver), of conv/f32 (split
// by GPU model, B's driver aside), of index_add/f32 (nondeterministic on one host), of cumsum/f32
// (differs between the two hosts of one platform).
ReportFile host(const std::string& name, const nlohmann::json& environment, const std::string& matmul,
                const std::string& conv, bool racy, const std::string& cumsum, bool with_pooling = true) {
  std::vector<CellReport> cells = {
      cell("sum", "f32", "default threads=1", VerdictKind::deterministic, kFleetDigestA),
      cell("matmul", "f32", "default threads=1", VerdictKind::deterministic, matmul),
      cell("conv", "f32", "default threads=1", VerdictKind::deterministic, conv),
      racy ? cell("index_add", "f32", "default threads=1", VerdictKind::nondeterministic)
           : cell("index_add", "f32", "default threads=1", VerdictKind::deterministic, kFleetDigestA),
      cell("cumsum", "f32", "default threads=1", VerdictKind::deterministic, cumsum),
  };
  if (with_pooling) cells.push_back(cell("pooling", "max2d-f32", "default threads=1", VerdictKind::unsupported));
  auto report = report_of(cells);
  report.environment = environment;
  report.host = name;
  return {name + ".json", report};
}

std::vector<ReportFile> fleet_of_three_platforms() {
  const auto a = gpu_environment("NVIDIA A100-SXM4-80GB", 12080, "2.14.1");
  const auto b = gpu_environment("NVIDIA A100-SXM4-80GB", 13000, "2.14.1");
  const auto c = gpu_environment("NVIDIA H100 80GB HBM3", 13000, "2.15.0");
  return {host("a1", a, kFleetDigestA, kFleetDigestA, false, kFleetDigestA),
          host("a2", a, kFleetDigestA, kFleetDigestA, true, kFleetDigestB),
          host("b1", b, kFleetDigestB, kFleetDigestA, false, kFleetDigestA),
          host("c1", c, kFleetDigestB, kFleetDigestC, false, kFleetDigestA, false)};
}

const FleetCell& row(const FleetMatrix& fleet, const std::string& key) {
  for (const auto& cell : fleet.cells)
    if (cell.key == key) return cell;
  throw std::runtime_error("no row " + key);
}

TEST(Fleet, GroupsHostsByPlatform) {
  const auto fleet = build_fleet(fleet_of_three_platforms());
  ASSERT_EQ(fleet.platforms.size(), 3u);
  EXPECT_EQ(fleet.platforms[0].hosts, (std::vector<int>{0, 1}));
  EXPECT_EQ(fleet.hosts[2].platform, 1);
  EXPECT_EQ(fleet.hosts[3].platform, 2);
  EXPECT_NE(fleet.platforms[2].summary.find("H100"), std::string::npos) << fleet.platforms[2].summary;
  EXPECT_NE(fleet.platforms[2].summary.find("torch 2.15.0"), std::string::npos) << fleet.platforms[2].summary;
}

TEST(Fleet, PortableCellsAgreeOnEveryHost) {
  const auto fleet = build_fleet(fleet_of_three_platforms());
  const auto& sum = row(fleet, "sum/f32@cpu|threads=1");
  EXPECT_EQ(sum.category, FleetCategory::portable);
  EXPECT_EQ(sum.groups, 1);
  EXPECT_EQ(sum.hosts_with_cell, 4);
  EXPECT_EQ(sum.separation, "");
}

TEST(Fleet, ASplitIsExplainedByTheFieldThatDiffersExactlyWhereTheBitsDo) {
  const auto fleet = build_fleet(fleet_of_three_platforms());
  // matmul: A on the 12.8 driver, B on 13.0 (platforms B and C): the driver, exactly.
  const auto& matmul = row(fleet, "matmul/f32@cpu|threads=1");
  EXPECT_EQ(matmul.category, FleetCategory::split);
  EXPECT_EQ(matmul.field, "CUDA driver");
  EXPECT_TRUE(matmul.exact);
  EXPECT_EQ(matmul.separation, "differs exactly where CUDA driver differs");
  // conv: only the H100 differs: GPU, exactly (the driver differs where the bits do not).
  const auto& conv = row(fleet, "conv/f32@cpu|threads=1");
  EXPECT_EQ(conv.field, "GPU");
  EXPECT_TRUE(conv.exact);
  EXPECT_EQ(conv.entries[3].group, 1);
  EXPECT_EQ(conv.entries[0].group, 0);  // the majority is group A
}

// Two hosts of one platform whose inputs were made with different schemes: other inputs, other bits,
// and the scheme is what separates them.
TEST(Fleet, TheInputSchemeSeparatesHostsLikeAPlatformField) {
  const auto environment = gpu_environment("NVIDIA A100-SXM4-80GB", 13000, "2.14.1");
  auto older = host("old", environment, kFleetDigestB, kFleetDigestA, false, kFleetDigestA);
  older.report.config["input_scheme"] = 1;
  auto newer = host("new", environment, kFleetDigestA, kFleetDigestA, false, kFleetDigestA);
  newer.report.config["input_scheme"] = 2;
  const auto fleet = build_fleet({older, newer});
  EXPECT_EQ(fleet.platforms.size(), 2u);
  const auto& matmul = row(fleet, "matmul/f32@cpu|threads=1");
  EXPECT_EQ(matmul.category, FleetCategory::split);
  EXPECT_EQ(matmul.field, "input scheme");
}

TEST(Fleet, ASplitWithinOnePlatformIsNotBlamedOnAField) {
  const auto fleet = build_fleet(fleet_of_three_platforms());
  const auto& cumsum = row(fleet, "cumsum/f32@cpu|threads=1");
  EXPECT_EQ(cumsum.category, FleetCategory::split);
  EXPECT_EQ(cumsum.field, "");
  EXPECT_NE(cumsum.separation.find("a1 and a2 share a platform and differ"), std::string::npos) << cumsum.separation;
}

TEST(Fleet, AFieldThatOnlyRefinesTheSplitIsSaidSo) {
  // Three platforms, bits split {a, b} vs {c}: torch separates exactly; with torch equal everywhere
  // and GPU models a, b, c all different, the GPU only refines the split.
  auto inputs = fleet_of_three_platforms();
  inputs.pop_back();
  inputs.push_back(
      host("c1", gpu_environment("NVIDIA L4", 13000, "2.14.1"), kFleetDigestB, kFleetDigestA, false, kFleetDigestA));
  inputs[2].report.environment = gpu_environment("NVIDIA H100 80GB HBM3", 12080, "2.14.1");
  const auto fleet = build_fleet(inputs);
  const auto& matmul = row(fleet, "matmul/f32@cpu|threads=1");  // a1 a2 h100: A, L4: B
  EXPECT_EQ(matmul.field, "GPU");
  EXPECT_FALSE(matmul.exact);
  EXPECT_NE(matmul.separation.find("only where GPU differs"), std::string::npos) << matmul.separation;
}

TEST(Fleet, ASplitThatNeedsTwoFieldsIsNotBlamedOnOne) {
  // GPU and driver crossed, the bits follow neither alone: A100 on 12.8 and H100 on 13.0 agree.
  const auto a100 = "NVIDIA A100-SXM4-80GB", h100 = "NVIDIA H100 80GB HBM3";
  const auto fleet = build_fleet(
      {host("x", gpu_environment(a100, 12080, "2.14.1"), kFleetDigestA, kFleetDigestA, false, kFleetDigestA),
       host("y", gpu_environment(a100, 13000, "2.14.1"), kFleetDigestB, kFleetDigestA, false, kFleetDigestA),
       host("z", gpu_environment(h100, 12080, "2.14.1"), kFleetDigestB, kFleetDigestA, false, kFleetDigestA),
       host("w", gpu_environment(h100, 13000, "2.14.1"), kFleetDigestA, kFleetDigestA, false, kFleetDigestA)});
  ASSERT_EQ(fleet.platforms.size(), 4u);
  const auto& matmul = row(fleet, "matmul/f32@cpu|threads=1");
  EXPECT_EQ(matmul.category, FleetCategory::split);
  EXPECT_EQ(matmul.field, "");
  EXPECT_EQ(matmul.separation, "no single fingerprint field separates the groups (several differ together)");
  EXPECT_EQ(row(fleet, "conv/f32@cpu|threads=1").category, FleetCategory::portable);
}

TEST(Fleet, NondeterministicAndMissingCellsAreNeverAgreement) {
  const auto fleet = build_fleet(fleet_of_three_platforms());
  const auto& racy = row(fleet, "index_add/f32@cpu|threads=1");
  EXPECT_EQ(racy.category, FleetCategory::nondeterministic);
  EXPECT_EQ(racy.entries[1].state, "nondeterministic");
  EXPECT_EQ(racy.entries[1].group, -1);
  EXPECT_NE(racy.separation.find("a2"), std::string::npos);
  const auto& pooling = row(fleet, "pooling/max2d-f32@cpu|threads=1");
  EXPECT_EQ(pooling.category, FleetCategory::not_comparable);
  EXPECT_EQ(pooling.entries[3].state, "absent");
  EXPECT_EQ(pooling.hosts_with_cell, 3);
  const auto summary = fleet_summary(fleet);
  EXPECT_EQ(summary[0], "1 cell portable fleet-wide");
  EXPECT_EQ(summary[1], "1 split by GPU");  // as many cells as the driver: the GPU comes first
  EXPECT_EQ(summary[2], "1 split by CUDA driver");
  EXPECT_NE(std::find(summary.begin(), summary.end(), "1 split that no single fingerprint field explains"),
            summary.end());
  EXPECT_NE(std::find(summary.begin(), summary.end(), "1 nondeterministic on some host"), summary.end());
}

TEST(Fleet, AHostThatRaisesDisagreesAndTheFieldThatSeparatesItIsNamed) {
  auto inputs = fleet_of_three_platforms();
  inputs[3].report.cells[0].verdict.kind = VerdictKind::raises;  // sum raises on the H100 only
  inputs[3].report.cells[0].verdict.digest = "";
  const auto fleet = build_fleet(inputs);
  const auto& sum = row(fleet, "sum/f32@cpu|threads=1");
  EXPECT_EQ(sum.category, FleetCategory::split);
  EXPECT_EQ(sum.groups, 1);
  EXPECT_EQ(sum.entries[3].state, "raises");
  EXPECT_EQ(sum.field, "GPU");
  EXPECT_EQ(fleet_verdict_text(fleet, sum), "1 group, raises on c1: differs exactly where GPU differs");
}

TEST(Fleet, HostsThatLackOrSkipACellLeaveItPortableAndAreCounted) {
  auto inputs = fleet_of_three_platforms();
  inputs[3].report.cells.erase(inputs[3].report.cells.begin());       // c1 has no sum
  inputs[2].report.cells[0].verdict.kind = VerdictKind::unsupported;  // b1 skipped it
  const auto fleet = build_fleet(inputs);
  const auto& sum = row(fleet, "sum/f32@cpu|threads=1");
  EXPECT_EQ(sum.category, FleetCategory::portable);
  EXPECT_EQ(sum.hosts_with_cell, 3);
  EXPECT_EQ(sum.hosts_skipped, 1);
  EXPECT_EQ(fleet_verdict_text(fleet, sum), "portable: same bits on 2 hosts; 1 host lacks it, skipped on 1 host");
  const auto json = fleet_json(fleet).at("cells").at(0);
  EXPECT_EQ(json.at("hosts_without_cell"), 1);
  EXPECT_EQ(json.at("hosts_skipped"), 1);
  EXPECT_EQ(json.at("hosts").at("c1"), "absent");
  EXPECT_EQ(json.at("hosts").at("b1"), "unsupported");
}

TEST(Fleet, WarnOnlyRunsCountByTheirDigests) {
  auto inputs = fleet_of_three_platforms();
  for (auto& input : inputs) input.report.cells[0].verdict.kind = VerdictKind::warns;  // sum: digests agree
  inputs[0].report.cells[1].verdict.kind = VerdictKind::warns;                         // matmul on a1: digests disagree
  inputs[0].report.cells[1].verdict.digests_agree = false;
  const auto fleet = build_fleet(inputs);
  EXPECT_EQ(row(fleet, "sum/f32@cpu|threads=1").category, FleetCategory::portable);
  const auto& matmul = row(fleet, "matmul/f32@cpu|threads=1");
  EXPECT_EQ(matmul.category, FleetCategory::nondeterministic);
  EXPECT_EQ(matmul.entries[0].state, "nondeterministic");
}

TEST(Fleet, TheTextMatrixPutsHostsUnderTheirPlatformInAlignedColumns) {
  auto inputs = fleet_of_three_platforms();
  std::swap(inputs[1], inputs[2]);  // a1, b1, a2, c1: columns a1 a2 | b1 | c1
  const auto text = fleet_text(build_fleet(inputs));
  EXPECT_NE(text.find("\n" + std::string(33, ' ') + "P1          P2    P3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ncell" + std::string(29, ' ') + "a1    a2    b1    c1  across the fleet\n"), std::string::npos)
      << text;
  // The widest mark (here "skip": unsupported) sets a column's width.
  EXPECT_NE(text.find("|threads=1  skip  skip  skip  -   not comparable: bits from 0 hosts; 1 host lacks it, "
                      "skipped on 3 hosts\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("|threads=1      A     ND    A     A   nondeterministic: runs disagree on a2\n"),
            std::string::npos)
      << text;
}

TEST(Fleet, HostNamesFallBackToTheFileAndStayDistinct) {
  auto inputs = fleet_of_three_platforms();
  inputs[0].report.host = "";
  inputs[0].file = "/reports/gpu-node-7.json";
  inputs[2].report.host = "a2";
  const auto fleet = build_fleet(inputs);
  EXPECT_EQ(fleet.hosts[0].name, "gpu-node-7");
  EXPECT_EQ(fleet.hosts[1].name, "a2 (a2.json)");
  EXPECT_EQ(fleet.hosts[2].name, "a2 (b1.json)");
}

TEST(Fleet, OneHostComparesNothing) {
  auto inputs = fleet_of_three_platforms();
  inputs.resize(1);
  EXPECT_EQ(build_fleet(inputs).compared, 0);
  auto disjoint = fleet_of_three_platforms();
  disjoint.resize(2);
  for (auto& c : disjoint[1].report.cells) c.cell.key += "-elsewhere";
  EXPECT_EQ(build_fleet(disjoint).compared, 0);
  EXPECT_GT(build_fleet(fleet_of_three_platforms()).compared, 0);
}

TEST(Fleet, TheSameRunGivenTwiceIsOneHostAndEveryFormatSaysSo) {
  auto inputs = fleet_of_three_platforms();
  inputs.push_back(inputs[0]);  // the same file twice
  inputs.push_back(inputs[1]);
  inputs.back().file = "copy-of-a2.json";  // a copy under another name
  const auto fleet = build_fleet(inputs);
  ASSERT_EQ(fleet.hosts.size(), 4u);
  EXPECT_EQ(fleet.hosts[3].name, "c1");
  EXPECT_EQ(row(fleet, "sum/f32@cpu|threads=1").hosts_with_cell, 4);
  EXPECT_EQ(fleet.platforms[0].hosts, (std::vector<int>{0, 1}));
  ASSERT_EQ(fleet.duplicates.size(), 2u);
  EXPECT_EQ(fleet.duplicates[0].file, "a1.json");
  EXPECT_EQ(fleet.duplicates[0].same_as, "a1.json");
  EXPECT_EQ(fleet.duplicates[1].file, "copy-of-a2.json");
  EXPECT_EQ(fleet.duplicates[1].same_as, "a2.json");
  const std::string said = "copy-of-a2.json left out: the same run as a2.json (one host counts once)";
  EXPECT_NE(fleet_text(fleet).find(said), std::string::npos) << fleet_text(fleet);
  EXPECT_NE(fleet_markdown(fleet).find(said), std::string::npos) << fleet_markdown(fleet);
  EXPECT_NE(fleet_html(fleet).find(said), std::string::npos);
  const auto json = fleet_json(fleet);
  EXPECT_EQ(json.at("hosts").size(), 4u);
  EXPECT_EQ(json.at("duplicates").at(1),
            (nlohmann::json{{"file", "copy-of-a2.json"}, {"same_as", "a2.json"}, {"why", "the same run"}}));
  // Without copies the JSON is what it was: no "duplicates" field.
  EXPECT_FALSE(fleet_json(build_fleet(fleet_of_three_platforms())).contains("duplicates"));
}

TEST(Fleet, AnotherAuditOfAHostOnItsPlatformIsThatHostAgain) {
  const auto a = gpu_environment("NVIDIA A100-SXM4-80GB", 12080, "2.14.1");
  const auto b = gpu_environment("NVIDIA A100-SXM4-80GB", 13000, "2.14.1");
  auto inputs = fleet_of_three_platforms();
  auto again = host("a1", a, kFleetDigestB, kFleetDigestB, false,
                    kFleetDigestB);  // another run of a1: other bits, not another host
  again.file = "a1-tuesday.json";
  inputs.push_back(again);
  auto upgraded =
      host("a1", b, kFleetDigestB, kFleetDigestA, false, kFleetDigestA);  // a1 after a driver upgrade: another platform
  upgraded.file = "a1-upgraded.json";
  inputs.push_back(upgraded);
  auto nameless =
      host("", a, kFleetDigestA, kFleetDigestA, false, kFleetDigestC);  // no host name: nothing says it is a1
  nameless.file = "unnamed.json";
  inputs.push_back(nameless);
  const auto fleet = build_fleet(inputs);
  ASSERT_EQ(fleet.duplicates.size(), 1u);
  EXPECT_EQ(fleet.duplicates[0].file, "a1-tuesday.json");
  EXPECT_EQ(fleet.duplicates[0].same_as, "a1.json");
  EXPECT_EQ(fleet.duplicates[0].why, "another audit of host a1");
  ASSERT_EQ(fleet.hosts.size(), 6u);
  EXPECT_EQ(fleet.hosts[4].file, "a1-upgraded.json");
  EXPECT_EQ(fleet.hosts[5].name, "unnamed");
  // The left-out run's digests are nowhere in the matrix: matmul stays split by the driver alone.
  EXPECT_EQ(row(fleet, "matmul/f32@cpu|threads=1").field, "CUDA driver");
  EXPECT_NE(fleet_text(fleet).find("a1-tuesday.json left out: another audit of host a1 as a1.json"), std::string::npos)
      << fleet_text(fleet);
}

TEST(Fleet, CopiesOfOneHostCompareNothing) {
  auto inputs = fleet_of_three_platforms();
  inputs.resize(1);
  inputs.push_back(inputs[0]);
  inputs.back().file = "renamed.json";
  const auto fleet = build_fleet(inputs);
  EXPECT_EQ(fleet.hosts.size(), 1u);
  EXPECT_EQ(fleet.duplicates.size(), 1u);
  EXPECT_EQ(fleet.compared, 0);
  EXPECT_EQ(row(fleet, "sum/f32@cpu|threads=1").category, FleetCategory::not_comparable);
}

TEST(Fleet, JsonAndPagesCarryTheMatrix) {
  auto inputs = fleet_of_three_platforms();
  inputs[3].report.host = "c<1>&\"x\"";
  const auto fleet = build_fleet(inputs);
  const auto json = fleet_json(fleet);
  EXPECT_EQ(json.at("schema"), kFleetSchema);
  EXPECT_EQ(json.at("hosts").size(), 4u);
  EXPECT_EQ(json.at("platforms").size(), 3u);
  const auto& matmul = json.at("cells").at(1);
  EXPECT_EQ(matmul.at("key"), "matmul/f32@cpu|threads=1");
  EXPECT_EQ(matmul.at("category"), "split");
  EXPECT_EQ(matmul.at("field"), "CUDA driver");
  EXPECT_EQ(matmul.at("groups").at(0).at("hosts"), nlohmann::json::array({"a1", "a2"}));
  EXPECT_EQ(matmul.at("groups").at(1).at("digest"), kFleetDigestB);
  EXPECT_EQ(matmul.at("hosts").at("b1"), "B");
  EXPECT_EQ(json.at("cells").at(3).at("hosts").at("a2"), "nondeterministic");
  const auto html = fleet_html(fleet);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("c&lt;1&gt;&amp;&quot;x&quot;"), std::string::npos);
  EXPECT_NE(html.find("differs exactly where CUDA driver differs"), std::string::npos);
  const auto text = fleet_text(fleet);
  EXPECT_NE(text.find("1 cell portable fleet-wide"), std::string::npos) << text;
  const auto markdown = fleet_markdown(fleet);
  EXPECT_NE(markdown.find("matmul/f32@cpu"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("differs exactly where CUDA driver differs"), std::string::npos) << markdown;
}

}  // namespace
}  // namespace repro_audit
