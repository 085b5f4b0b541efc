// The catalogue as JSON (config/catalogue_json.h): what the torch side writes for the front end reads
// back field for field, and text that is not such a catalogue is refused, naming what is wrong.
#include "config/catalogue_json.h"

#include <gtest/gtest.h>

#include "test_catalogue.h"

namespace repro_audit {
namespace {

// Every field away from its default, so a field the JSON left out would read back as another value.
DocumentedCatalogue every_field_set() {
  DocumentedCatalogue documented{testing::test_catalogue(), {"2.11.0+cu130", "2.11", true}};
  auto& probe = documented.catalogue.front();
  probe.in_default_suite = false;
  probe.timeout_seconds = 12.5;
  probe.control_expects = VerdictKind::nondeterministic;
  probe.invariance = Invariance::split;
  probe.collective = true;
  probe.accumulation = {"out", "values", 0.25, "inside one kernel"};
  probe.weight = 3.75;
  probe.python = {"return {'out': x}", "none", "differs", "cuda differs", {{"a path", "torch.__version__ > '2'"}}};
  probe.documented_before = {{"2.13", "cuda", Documented::raises_under_strict, "release notes"}};
  auto& variant = probe.variants.front();
  variant.description = "a variant";
  variant.documented = {{"cuda", Documented::cublas_workspace}};
  variant.dtype = DType::bf16;
  variant.parameters = {{"mode", "max"}};
  variant.weight = 0.5;
  variant.expected_cost = 1.25;
  variant.sensitivity_floor = 0.01;
  variant.insensitive_reason = "by design";
  variant.default_suite_devices = {"cuda"};
  variant.default_suite_reason = "only CUDA's users take it";
  variant.documented_before = {{"2.12", "cpu", Documented::alternative_unless_warn_only, "a note"}};
  variant.default_suite_nowhere = true;
  return documented;
}

TEST(CatalogueJson, EveryFieldReadsBackAsItWasWritten) {
  const auto written = every_field_set();
  const auto read = catalogue_from_json(nlohmann::json::parse(catalogue_to_json(written).dump()));
  EXPECT_EQ(read.catalogue, written.catalogue);
  EXPECT_EQ(read.documentation.torch, "2.11.0+cu130");
  EXPECT_EQ(read.documentation.release, "2.11");
  EXPECT_TRUE(read.documentation.newer_than_known);
  // Unset optionals stay unset.
  const auto plain = catalogue_from_json(catalogue_to_json({testing::test_catalogue(), {}}));
  EXPECT_EQ(plain.catalogue, testing::test_catalogue());
  EXPECT_FALSE(plain.catalogue.front().variants.front().dtype);
}

TEST(CatalogueJson, TextThatIsNotACatalogueIsRefusedNamingTheField) {
  const auto json = catalogue_to_json(every_field_set());
  const auto refusal = [](const nlohmann::json& text) {
    try {
      catalogue_from_json(text);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal(nlohmann::json::object()).find("'documentation'"), std::string::npos);
  auto changed = json;
  changed["probes"][0].erase("weight");
  EXPECT_NE(refusal(changed).find("'weight'"), std::string::npos);
  changed = json;
  changed["probes"][0]["variants"][0]["dtype"] = "f8";
  EXPECT_NE(refusal(changed).find("no dtype 'f8'"), std::string::npos);
  changed = json;
  changed["probes"][0]["documented"]["cpu"] = "mostly";
  EXPECT_NE(refusal(changed).find("'mostly'"), std::string::npos);
  changed = json;
  changed["probes"][0]["timeout_seconds"] = "soon";
  EXPECT_NE(refusal(changed).find("'timeout_seconds'"), std::string::npos);
  changed = json;
  changed["probes"] = "none";
  EXPECT_NE(refusal(changed).find("not a list"), std::string::npos);
}

}  // namespace
}  // namespace repro_audit
