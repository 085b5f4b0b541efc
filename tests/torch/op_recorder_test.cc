// Per-op records (recording/op_recorder.h): digests taken once are reused only while their tensor is
// unchanged, and a later run copies only the outputs of the op where it parts from the reference run.
#include "recording/op_recorder.h"

#include <gtest/gtest.h>
#include <torch/script.h>

#include <algorithm>

#include "recording/tensor_digester.h"

namespace repro_audit {
namespace {

// y = x @ w, then w += 1 in place: every run reads another w through the same tensor.
torch::jit::Module drifting_module() {
  torch::jit::Module module("__torch__.Drifts");
  module.register_buffer("w", torch::ones({8, 8}));
  module.define(R"(
def forward(self, x):
    y = torch.mm(x, self.w)
    self.w.add_(1.0)
    return torch.relu(y * 2.0)
)");
  return module;
}

RecordedRun record(OpRecorder& recorder, torch::jit::Module& module, const at::Tensor& x, std::size_t keep_bytes = 0,
                   const RecordedRun* reference = nullptr) {
  recorder.begin_run(keep_bytes, reference);
  module.forward({x});
  return recorder.end_run();
}

const OpRecord& first_named(const RecordedRun& run, const std::string& name) {
  const auto it = std::find_if(run.ops.begin(), run.ops.end(), [&](const OpRecord& op) { return op.name == name; });
  EXPECT_NE(it, run.ops.end()) << name;
  return *it;
}

TEST(OpRecorder, AReusedDigestNeverHidesAWrite) {
  auto module = drifting_module();
  const auto x = torch::arange(64, torch::kFloat).reshape({8, 8});
  RecordedRun first, second;
  {
    OpRecorder recorder(nullptr);
    first = record(recorder, module, x);
    second = record(recorder, module, x);  // w was written in place: mm reads other bits
  }
  ASSERT_FALSE(first.ops.empty());
  EXPECT_NE(first_named(first, "aten::mm").inputs, first_named(second, "aten::mm").inputs);
  EXPECT_NE(op_sequence_digest(first.ops), op_sequence_digest(second.ops));
  // A fresh recorder (nothing cached) on the same state records exactly what the reused digests gave.
  module.attr("w").toTensor().sub_(1.0);
  OpRecorder fresh(nullptr);
  const auto again = record(fresh, module, x);
  EXPECT_EQ(op_sequence_digest(again.ops), op_sequence_digest(second.ops));
}

TEST(OpRecorder, ALaterRunCopiesOnlyTheOutputsOfTheOpWhereItPartsFromTheReference) {
  auto module = drifting_module();
  const auto x = torch::ones({8, 8});
  OpRecorder recorder(nullptr);
  const auto reference = record(recorder, module, x, 1 << 20);
  ASSERT_EQ(reference.kept.size(), reference.ops.size());
  EXPECT_GT(std::count_if(reference.kept.begin(), reference.kept.end(), [](const auto& k) { return !k.empty(); }), 2);
  module.attr("w").toTensor().sub_(1.0);  // the same state: the same records
  const auto agreeing = record(recorder, module, x, 1 << 20, &reference);
  EXPECT_EQ(op_sequence_digest(agreeing.ops), op_sequence_digest(reference.ops));
  EXPECT_TRUE(std::all_of(agreeing.kept.begin(), agreeing.kept.end(), [](const auto& k) { return k.empty(); }));
  // A reference whose relu returned other bits from the same inputs: only relu's outputs are copied.
  auto parted = reference;
  const auto relu = static_cast<std::size_t>(
      std::find_if(parted.ops.begin(), parted.ops.end(), [](const OpRecord& op) { return op.name == "aten::relu"; }) -
      parted.ops.begin());
  ASSERT_LT(relu, parted.ops.size());
  parted.ops[relu].outputs = "other bits";
  module.attr("w").toTensor().sub_(1.0);
  const auto later = record(recorder, module, x, 1 << 20, &parted);
  for (std::size_t i = 0; i < later.kept.size(); ++i) EXPECT_EQ(later.kept[i].empty(), i != relu) << later.ops[i].name;
}

bool holds_token(const RecordedRun& run) {
  return std::any_of(run.ops.begin(), run.ops.end(), [](const OpRecord& op) {
    return TensorDigester::has_token(op.inputs) || TensorDigester::has_token(op.outputs);
  });
}

// Deferred digests record what digests taken at once record: the same ops, equal where the state is
// equal, different where a write changed an input, and equal to a run that compared as it recorded.
TEST(OpRecorder, DeviceDigestsRecordWhatImmediateDigestsRecord) {
  auto module = drifting_module();
  const auto x = torch::arange(64, torch::kFloat).reshape({8, 8});
  RecordedRun plain;
  {
    OpRecorder host(nullptr);
    plain = record(host, module, x);
  }
  module.attr("w").toTensor().sub_(1.0);

  OpRecorder recorder(nullptr, make_host_tensor_digester());
  EXPECT_TRUE(recorder.digests_on_device());
  const auto first = record(recorder, module, x);
  const auto second = record(recorder, module, x);  // w was written: mm reads other bits
  module.attr("w").toTensor().sub_(2.0);
  const auto again = record(recorder, module, x);  // the first run's state, digests cached
  module.attr("w").toTensor().sub_(1.0);
  const auto compared = record(recorder, module, x, 0, &first);  // digests at once, against a reference

  ASSERT_EQ(first.ops.size(), plain.ops.size());
  for (std::size_t i = 0; i < plain.ops.size(); ++i) EXPECT_EQ(first.ops[i].name, plain.ops[i].name);
  EXPECT_FALSE(holds_token(first) || holds_token(second) || holds_token(again) || holds_token(compared));
  EXPECT_NE(op_sequence_digest(first.ops), op_sequence_digest(second.ops));
  EXPECT_EQ(op_sequence_digest(first.ops), op_sequence_digest(again.ops));
  EXPECT_EQ(op_sequence_digest(first.ops), op_sequence_digest(compared.ops));
  // Other digests than the host's canonical ones: the device's form, not a copy of it.
  EXPECT_NE(op_sequence_digest(first.ops), op_sequence_digest(plain.ops));
}

}  // namespace
}  // namespace repro_audit
