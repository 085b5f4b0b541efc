// A variant's sensitivity check is measured once per audit: in the first batch holding the variant, and
// taken from there by the variant's cells in other batches (another thread count, another process setting).
#include "audit/shared_sensitivity.h"

#include <gtest/gtest.h>

#include "protocol/worker_protocol.h"
#include "supervisor/supervisor.h"

namespace repro_audit {
namespace {

Cell cell(const std::string& key, const std::string& variant, const std::string& seed = "0") {
  Cell made;
  made.key = key;
  made.probe = "sum";
  made.variant = variant;
  made.settings = {{"seed", seed}};
  return made;
}

TEST(SharedSensitivity, OnlyTheFirstBatchOfAVariantAndSeedMeasuresIt) {
  const std::vector<Batch> batches = {
      {{{"threads", "1"}}, {cell("sum/f32|t1", "f32"), cell("sum/f32|t1,strict", "f32"), cell("sum/f64|t1", "f64")}},
      {{{"threads", "2"}}, {cell("sum/f32", "f32"), cell("sum/f64", "f64"), cell("sum/f32|seed=7", "f32", "7")}},
  };
  EXPECT_EQ(sensitivity_measured_elsewhere(batches), (std::set<std::string>{"sum/f32", "sum/f64"}));
  // The workers are told which of their cells not to measure.
  SupervisorOptions options;
  options.sensitivity_elsewhere = sensitivity_measured_elsewhere(batches);
  EXPECT_TRUE(batch_request(batches[0], batches[0].cells, 0, options).sensitivity_elsewhere.empty());
  options.processes = 2;
  EXPECT_EQ(batch_request(batches[0], batches[0].cells, 0, options).sensitivity_process, 1);
  options.processes = 1;
  EXPECT_EQ(batch_request(batches[0], batches[0].cells, 0, options).sensitivity_process, 0);
  const auto request = batch_request(batches[1], batches[1].cells, 0, options);
  EXPECT_EQ(request.sensitivity_elsewhere, (std::vector<std::string>{"sum/f32", "sum/f64"}));
  const auto read = request_from_json(request_to_json(request));
  EXPECT_EQ(read.sensitivity_elsewhere, request.sensitivity_elsewhere);
  EXPECT_EQ(read.sensitivity_process, request.sensitivity_process);
  // An audit that measures none (selftest's parity) names no process, and the request says so.
  options.measure_sensitivity = false;
  const auto none = batch_request(batches[0], batches[0].cells, 0, options);
  EXPECT_EQ(none.sensitivity_process, -1);
  EXPECT_EQ(request_from_json(request_to_json(none)).sensitivity_process, -1);
}

TEST(SharedSensitivity, CellsOfTheVariantTakeTheMeasurementAndNothingElseChanges) {
  const std::vector<Cell> cells = {cell("a", "f32"), cell("b", "f32"), cell("c", "f64"), cell("d", "f32", "7"),
                                   cell("e", "f32")};
  Observations observations;
  ProcessObservation first, second, measured;
  second.process = 1;
  measured.process = 1;  // the second process measures (supervisor.h)
  measured.sensitivity = Sensitivity{"output", 100, 40, 3, 0.1};
  observations["a"] = {first, measured};
  observations["b"] = {first, second};
  observations["c"] = {first};  // another variant: nothing to take
  observations["d"] = {first};  // another seed, other inputs
  ProcessObservation failed;
  failed.status = ObservationStatus::crashed;
  observations["e"] = {failed};
  share_sensitivity(cells, observations);
  ASSERT_TRUE(observations["b"][0].sensitivity);
  EXPECT_EQ(observations["b"][0].sensitivity->changed, 40);
  EXPECT_FALSE(observations["b"][1].sensitivity);  // the first process's observation holds it
  EXPECT_FALSE(observations["a"][0].sensitivity);  // measured in the cell: nothing to take
  EXPECT_FALSE(observations["c"][0].sensitivity);
  EXPECT_FALSE(observations["d"][0].sensitivity);
  EXPECT_FALSE(observations["e"][0].sensitivity);
}

}  // namespace
}  // namespace repro_audit
