// The canonical digest tells tensors apart by every property that makes them differ (view bits,
// quantization, sparse layout and parts), keeps the digest of ordinary dense tensors as it was, needs no
// dense copy of a sparse tensor, and agrees with the py runner's digest of the same tensors.
#include "hash/tensor_digest.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "hash/digest.h"
#include "protocol/worker_protocol.h"
#include "test_paths.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

at::Tensor complex_values() { return at::complex(at::arange(6.0), at::arange(6.0) + 0.5).reshape({2, 3}); }

at::Tensor matrix() {
  return at::tensor({1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 3.0, 0.0, 0.0, 4.0, 0.0, 0.0, 5.0, 0.0, 0.0, 6.0}, at::kFloat)
      .reshape({4, 4});
}

at::Tensor per_tensor(double scale, std::int64_t zero_point) {
  return at::_make_per_tensor_quantized_tensor(at::arange(8, at::kByte), scale, zero_point);
}

at::Tensor per_channel(double second_scale, std::int64_t axis = 0) {
  return at::_make_per_channel_quantized_tensor(at::arange(8, at::kChar).reshape({2, 4}),
                                                at::tensor({0.1, second_scale}, at::kDouble),
                                                at::tensor({0, 1}, at::kLong), axis);
}

// The tensors tests/cli/py/digest_properties.py's `parity` returns, by name.
std::map<std::string, at::Tensor> parity_tensors() {
  const auto value = complex_values();
  const auto dense = matrix();
  return {{"plain", at::arange(6.0, at::kFloat).reshape({2, 3})},
          {"transposed", at::arange(6.0, at::kFloat).reshape({2, 3}).t()},
          {"integers", at::arange(5, at::kLong)},
          {"conj", value.conj()},
          {"conj_transposed", value.t().conj()},
          {"neg", at::imag(value.conj())},
          {"per_tensor", per_tensor(0.1, 3)},
          {"per_channel", per_channel(0.2)},
          {"packed", at::quantize_per_tensor(at::arange(5, at::kFloat) * 0.1, 0.1, 0, at::kQUInt4x2)},
          {"coo", dense.to_sparse()},
          {"csr", dense.to_sparse_csr()},
          {"csc", dense.to_sparse_csc()},
          {"bsr", dense.to_sparse_bsr({2, 2})},
          {"bsc", dense.to_sparse_bsc({2, 2})}};
}

// Ordinary dense tensors keep today's digest, byte for byte: stored baselines keep comparing.
TEST(TensorDigest, AnOrdinaryDenseTensorKeepsItsDigest) {
  // XXH3-128 of "Float\0", rank 2, sizes 2 and 3, then 0..5 as float32: the form before any property.
  EXPECT_EQ(digest_tensor(at::arange(6.0, at::kFloat).reshape({2, 3})), "2a8089644003e90d02245ab837692583");
  for (const auto& tensor : {at::arange(12, at::kLong).reshape({3, 4}), at::ones({2, 2}, at::kDouble),
                             at::arange(6.0, at::kFloat).reshape({2, 3}).t(), complex_values()}) {
    const auto contiguous = tensor.contiguous();
    EXPECT_EQ(digest_tensor(tensor), digest_canonical(c10::toString(tensor.scalar_type()), tensor.sizes().vec(),
                                                      contiguous.data_ptr(), contiguous.nbytes()));
    EXPECT_EQ(tensor_properties(tensor), "");
  }
}

TEST(TensorDigest, TheConjugateAndNegativeBitsAreTold) {
  const auto value = complex_values();
  const std::set<std::string> distinct = {digest_tensor(value), digest_tensor(value.conj()),
                                          digest_tensor(value.conj_physical())};
  EXPECT_EQ(distinct.size(), 3u);
  EXPECT_EQ(tensor_properties(value.conj()), ";conj");
  // The same bits over the same values in other strides: one digest.
  EXPECT_EQ(digest_tensor(value.t().conj()), digest_tensor(value.t().contiguous().conj()));
  EXPECT_TRUE(canonical_tensor(value.t().conj()).is_conj());
  const auto negative = at::imag(value.conj());
  ASSERT_TRUE(negative.is_neg());
  EXPECT_EQ(tensor_properties(negative), ";neg");
  const std::set<std::string> negatives = {digest_tensor(negative), digest_tensor(at::imag(value)),
                                           digest_tensor(negative.resolve_neg())};
  EXPECT_EQ(negatives.size(), 3u);
}

TEST(TensorDigest, QuantizationSchemeAndParametersAreTold) {
  const std::set<std::string> distinct = {digest_tensor(per_tensor(0.1, 3)),      digest_tensor(per_tensor(0.2, 3)),
                                          digest_tensor(per_tensor(0.1, 4)),      digest_tensor(per_channel(0.2)),
                                          digest_tensor(per_channel(0.3)),        digest_tensor(per_channel(0.2, 1)),
                                          digest_tensor(at::arange(8, at::kByte))};
  EXPECT_EQ(distinct.size(), 7u);
  EXPECT_EQ(digest_tensor(per_tensor(0.1, 3)), digest_tensor(per_tensor(0.1, 3)));
  EXPECT_NE(tensor_properties(per_tensor(0.1, 3)).find(";qscheme=per_tensor_affine;scale="), std::string::npos);
}

TEST(TensorDigest, EverySparseLayoutIsDigestedByItsParts) {
  const auto dense = matrix();
  std::set<std::string> distinct = {digest_tensor(dense)};
  for (const auto& tensor : {dense.to_sparse(), dense.to_sparse_csr(), dense.to_sparse_csc(),
                             dense.to_sparse_bsr({2, 2}), dense.to_sparse_bsc({2, 2})})
    distinct.insert(digest_tensor(tensor));
  EXPECT_EQ(distinct.size(), 6u);
  auto changed = dense.clone();
  changed[3][3] = 7.0;
  EXPECT_NE(digest_tensor(changed.to_sparse_csr()), digest_tensor(dense.to_sparse_csr()));
  // The same entries, once marked coalesced and once not: as stored, they differ.
  const auto entries =
      at::sparse_coo_tensor(at::tensor({0L, 3L}, at::kLong).reshape({1, 2}), at::tensor({1.0f, 2.0f}), {4});
  ASSERT_FALSE(entries.is_coalesced());
  EXPECT_NE(digest_tensor(entries), digest_tensor(entries.coalesce()));
  // 2^40 elements: a dense copy would need 4 TiB.
  const auto huge = at::sparse_coo_tensor(at::tensor({0L, (1L << 40) - 1}, at::kLong).reshape({1, 2}),
                                          at::tensor({1.0f, 2.0f}), {1L << 40});
  EXPECT_EQ(digest_tensor(huge).size(), 32u);
  EXPECT_EQ(compare_tensors("out", 1, huge, huge * 2).differing_elements, huge.numel());  // not made dense
  const auto divergence = compare_tensors("out", 1, dense.to_sparse_csr(), changed.to_sparse_csr());
  EXPECT_EQ(divergence.differing_elements, 1);
}

// An infinite difference (an infinite value against a finite one, or outputs of other shapes) is
// written as null, JSON having no infinity, and read back as infinite: the worker's record of such a
// cell reaches its supervisor (a garbage float of torch.empty once lost the whole cell).
TEST(TensorDigest, AnInfiniteDifferenceReachesTheSupervisorAsInfinite) {
  const auto finite = at::tensor({1.0f, 2.0f});
  const auto infinite = at::tensor({std::numeric_limits<float>::infinity(), 2.0f});
  for (const auto& [reference, other] : {std::pair{finite, infinite}, std::pair{finite, at::zeros({3})}}) {
    ProcessObservation observation;
    observation.process = 1;
    observation.divergence = compare_tensors("out", 2, reference, other);
    ASSERT_TRUE(std::isinf(observation.divergence->max_abs_difference));
    const auto line = cell_event("p/v@cpu", observation).dump();
    EXPECT_NE(line.find("\"max_abs_difference\":null"), std::string::npos) << line;
    const auto event = parse_event(line);
    ASSERT_TRUE(event) << line;
    EXPECT_EQ(event->kind, WorkerEvent::Kind::cell);
    EXPECT_EQ(event->message, "") << line;
    ASSERT_TRUE(event->observation.divergence) << line;
    EXPECT_TRUE(std::isinf(event->observation.divergence->max_abs_difference));
    EXPECT_EQ(event->observation.divergence->differing_elements, observation.divergence->differing_elements);
  }
}

// The py runner digests the same tensors alike: the report of a py audit of `parity` names each
// output's digest, which must be the C++ one.
TEST(TensorDigest, ThePyRunnerAgreesWithTheCppDigest) {
  if (std::string(test_paths::kPython).empty()) GTEST_SKIP() << "no Python next to the libtorch in use";
  const auto folder = fs::temp_directory_path() / ("repro-audit-digest-parity-" + std::to_string(::getpid()));
  fs::create_directories(folder);
  const auto report = folder / "report.json";
  const std::string command = std::string(test_paths::kBinary) + " py " + test_paths::kSourceDir +
                              "/tests/cli/py/digest_properties.py:parity --device cpu --repeats 2 --processes 1 "
                              "--no-cost --profile default --axis threads=1 --json " +
                              report.string() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  while (auto n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  ::pclose(pipe);
  if (output.find("lacks the xxhash package") != std::string::npos) GTEST_SKIP() << output;
  std::ifstream in(report);
  ASSERT_TRUE(in) << output;
  const auto cell = nlohmann::json::parse(in).at("cells").at(0);
  fs::remove_all(folder);
  std::map<std::string, std::string> python;
  for (const auto& named : cell.at("observations").at(0).at("runs").at(0).at("outputs"))
    python[named.at("name").get<std::string>()] = named.at("digest").get<std::string>();
  const auto tensors = parity_tensors();
  ASSERT_EQ(python.size(), tensors.size()) << cell.dump();
  for (const auto& [name, tensor] : tensors)
    EXPECT_EQ(python["output." + name], digest_tensor(tensor)) << name << ": " << tensor_properties(tensor);
}

}  // namespace
}  // namespace repro_audit
