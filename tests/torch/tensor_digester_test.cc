// Per-op digests taken where a tensor lies (recording/tensor_digester.h): tokens while a run records,
// digests when it ends. Here through the host digester, the device path's logic on real tensors and a
// real TorchScript model; the CUDA kernel is checked against the same reference in the gpu tier.
#include "recording/tensor_digester.h"

#include <gtest/gtest.h>
#include <torch/script.h>

#include <algorithm>

#include "hash/tensor_digest.h"
#include "recording/op_recorder.h"

namespace repro_audit {
namespace {

TEST(TensorDigester, ATokenBecomesTheWordSumsDigestOfTheStoredValues) {
  auto digester = make_host_tensor_digester();
  const auto x = torch::arange(24, torch::kFloat).reshape({4, 6});
  const auto token = digester->enqueue(x);
  EXPECT_TRUE(TensorDigester::has_token(token));
  EXPECT_EQ(digester->substitute(token), token);  // not read back yet
  digester->resolve();
  const auto digest = digester->substitute("a " + token + " b");
  const auto expected = word_sums_digest("Float", {4, 6}, 96, word_sums(x.data_ptr(), 96));
  EXPECT_EQ(digest, "a " + expected + " b");
  // Strides do not count: a transposed view is digested as its row-major copy.
  const auto view = x.t();
  EXPECT_EQ(digester->digest_now(view), digester->digest_now(view.contiguous()));
  // One element, the shape, the dtype, the view bits: each is another digest.
  auto changed = x.clone();
  changed[3][5] = std::nextafter(23.0f, 24.0f);
  const std::vector<std::string> digests = {
      expected, digester->digest_now(changed), digester->digest_now(x.reshape({6, 4})),
      digester->digest_now(x.view(torch::kInt)), digester->digest_now(x.to(torch::kComplexFloat).conj())};
  for (std::size_t i = 0; i < digests.size(); ++i)
    for (std::size_t j = i + 1; j < digests.size(); ++j) EXPECT_NE(digests[i], digests[j]) << i << " " << j;
}

TEST(TensorDigester, ANewRunStartsFromZeroedSlots) {
  auto digester = make_host_tensor_digester();
  const auto x = torch::randn({1000});
  const auto first = digester->digest_now(x);
  digester->clear();
  EXPECT_EQ(digester->digest_now(x), first);
  for (int i = 0; i < 5000; ++i) digester->enqueue(x);  // a second chunk of slots
  digester->resolve();
  digester->clear();
  EXPECT_EQ(digester->digest_now(x), first);
}

// y = x @ w, then w += 1 in place, then relu: the drifting module of op_recorder_test.cc.
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

RecordedRun record(OpRecorder& recorder, torch::jit::Module& module, const at::Tensor& x,
                   const RecordedRun* reference = nullptr) {
  recorder.begin_run(0, reference);
  module.forward({x});
  return recorder.end_run();
}

bool holds_token(const RecordedRun& run) {
  return std::any_of(run.ops.begin(), run.ops.end(), [](const OpRecord& op) {
    return TensorDigester::has_token(op.inputs) || TensorDigester::has_token(op.outputs);
  });
}

// Deferred digests record what digests taken at once record: the same ops, equal where the state is
// equal, different where a write changed an input, and equal to a run that compared as it recorded.
TEST(TensorDigester, DeferredRunsRecordWhatImmediateDigestsRecord) {
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
  const auto compared = record(recorder, module, x, &first);  // digests at once, against a reference

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
