// Every registered probe, on the CPU: runs, digests, and its verdict under strict.
#include <gtest/gtest.h>

#include "../core/h200_audit.h"
#include "test_tools.h"

#include "apply/settings_apply.h"
#include "config/settings.h"
#include "probe/probe.h"
#include "recording/digest_pipeline.h"
#include "verdict/verdict.h"
#include "worker/worker.h"

#include <map>
#include <string>

namespace repro_audit {
namespace {

struct ProbeVariant {
  std::string probe;
  std::string variant;
};

// The probes of the default suite, each with its variants.
std::vector<std::string> default_suite_probes() {
  std::vector<std::string> result;
  for (const auto& probe : registered_catalogue())
    if (probe.in_default_suite) result.push_back(probe.name);
  return result;
}

class EveryProbe : public ::testing::TestWithParam<std::string> {};

// The CPU's copier, keeping the dtype of each output of every run it copies for digesting.
class DtypeRecordingCopier : public ImmediateCopier {
 public:
  std::unique_ptr<HostCopy> copy(const NamedTensors& outputs) override {
    for (const auto& [name, tensor] : outputs) dtypes.emplace_back(name, tensor.scalar_type());
    return ImmediateCopier::copy(outputs);
  }
  std::vector<std::pair<std::string, at::ScalarType>> dtypes;
};

// The typed dtype a variant declares is the one its floating-point outputs have.
void expect_the_typed_dtype(const VariantInfo& variant,
                            const std::vector<std::pair<std::string, at::ScalarType>>& outputs) {
  int floating = 0;
  for (const auto& [name, dtype] : outputs)
    if (at::isFloatingType(dtype)) {
      ++floating;
      EXPECT_EQ(dtype, scalar_type_of(*variant.dtype)) << name;
    }
  EXPECT_GT(floating, 0);
}

// The outputs of one run of the variant under the default flags: for a variant whose op raises under strict.
std::vector<std::pair<std::string, at::ScalarType>> outputs_under_the_default_flags(const ProbeVariant& probe_variant) {
  std::vector<std::pair<std::string, at::ScalarType>> outputs;
  const auto* definition = find_registered_probe(probe_variant.probe);
  if (definition == nullptr) return outputs;  // no floating output: expect_the_typed_dtype fails
  apply_cell_settings(make_flag_set({}, "cpu"));
  ProbeContext context(at::kCPU, 0, *definition->info.find_variant(probe_variant.variant));
  for (const auto& [name, tensor] : definition->prepare(context)()) outputs.emplace_back(name, tensor.scalar_type());
  return outputs;
}

// Its dtype and its verdict under strict, at 2 threads, of one variant.
void check_variant(const ProbeVariant& probe_variant) {
  const auto& [probe, variant] = probe_variant;
  const auto catalogue = registered_catalogue();
  const auto* info = find_probe(catalogue, probe);
  Cell cell{"",
            probe,
            variant,
            "cpu",
            "strict threads=2",
            make_flag_set({{"deterministic_algorithms", "on"}, {"threads", "2"}}, "cpu"),
            ""};
  cell.key = cell_key(probe, variant, "cpu", cell.settings);
  const auto* variant_info = info->find_variant(variant);
  ASSERT_TRUE(variant_info->dtype) << "every variant of the default suite declares its dtype";
  const bool on_cpu =
      std::find(variant_info->devices.begin(), variant_info->devices.end(), "cpu") != variant_info->devices.end();
  apply_process_settings({{"threads", "2"}});
  cell.invariance = info->invariance;
  WorkerRequest request;
  // An invariance probe runs dozens of batches per run: the warm-up and one more run are enough here.
  request.repeats = info->invariance == Invariance::none ? 3 : 1;
  // The outputs' dtypes are those of the runs digested here; a variant whose op raises under strict
  // has none, and runs once more under the default flags for them.
  DtypeRecordingCopier copier;
  const auto observation = testing::run_untraced(cell, request, &copier);
  if (!on_cpu) {
    EXPECT_EQ(observation.status, ObservationStatus::unsupported) << observation.message;
    return;
  }
  {
    SCOPED_TRACE("the outputs' dtype");
    expect_the_typed_dtype(*variant_info,
                           copier.dtypes.empty() ? outputs_under_the_default_flags(probe_variant) : copier.dtypes);
  }
  ASSERT_TRUE(observation.status == ObservationStatus::ok || observation.status == ObservationStatus::exception)
      << observation.message;
  const auto verdict = judge(cell, {observation});
  if (observation.status == ObservationStatus::ok) {
    if (observation.stopped_early)  // a racy control's runs end at its first divergence
      EXPECT_LT(observation.runs.size(), static_cast<std::size_t>(1 + request.repeats));
    else
      EXPECT_EQ(observation.runs.size(), static_cast<std::size_t>(1 + request.repeats));
    EXPECT_EQ(observation.runs[0].digest.size(), 32u);
    EXPECT_FALSE(observation.runs[0].outputs.empty());
  }
  const auto contradiction = find_contradiction(info->documented_on(variant, "cpu"), cell.settings, verdict);
  EXPECT_FALSE(contradiction && contradiction->breaks_audit)
      << cell.key << ": " << to_string(verdict.kind) << ": " << contradiction->text << " " << verdict.message;
}

// One test per probe, its variants in turn: each test is a process of its own, which loads libtorch,
// and for most variants that costs more than the checks.
TEST_P(EveryProbe, EveryVariantHasItsTypedDtypeAndAVerdictOnTheCpuThatMatchesItsDocumentationUnderStrict) {
  const auto catalogue = registered_catalogue();
  const auto* info = find_probe(catalogue, GetParam());
  ASSERT_NE(info, nullptr);
  for (const auto& variant : info->variants) {
    SCOPED_TRACE(GetParam() + "/" + variant.name);
    check_variant({GetParam(), variant.name});
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, EveryProbe, ::testing::ValuesIn(default_suite_probes()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (auto& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(Controls, RacyIsCaughtAndOrderedIsClean) {
  apply_process_settings({{"threads", "2"}});
  WorkerRequest request;
  request.repeats = 10;
  for (const auto* name : {"control.racy_accumulate", "control.ordered_accumulate"}) {
    Cell cell{"", name, "f32", "cpu", "", make_flag_set({{"deterministic_algorithms", "on"}}, "cpu"), ""};
    cell.key = cell_key(name, "f32", "cpu", cell.settings);
    const auto verdict = judge(cell, {testing::run_untraced(cell, request), testing::run_untraced(cell, request)});
    EXPECT_EQ(verdict.kind, std::string(name) == "control.racy_accumulate" ? VerdictKind::nondeterministic
                                                                           : VerdictKind::deterministic)
        << name;
  }
}

// The outputs of one CPU run of a variant, by name.
std::map<std::string, at::Tensor> run_once(const std::string& probe, const std::string& variant) {
  const auto* definition = find_registered_probe(probe);
  ProbeContext context(at::kCPU, 0, *definition->info.find_variant(variant));
  std::map<std::string, at::Tensor> outputs;
  for (const auto& [name, tensor] : definition->prepare(context)()) outputs[name] = tensor;
  return outputs;
}

// Each attention variant runs the backend it names, only while it runs: flash and math give other bits for
// the same inputs (were the selection lost, both would run the default, flash), and every backend is enabled
// again afterwards, as sdpa_kernel leaves them.
TEST(AttentionProbe, EachVariantRunsItsOwnBackendAndRestoresTheFlags) {
  apply_cell_settings(make_flag_set({}, "cpu"));
  const auto flash = run_once("sdpa_backward", "flash-f32");
  const auto math = run_once("sdpa_backward", "math-f32");
  const auto& context = at::globalContext();
  EXPECT_TRUE(context.userEnabledFlashSDP() && context.userEnabledMathSDP() && context.userEnabledMemEfficientSDP() &&
              context.userEnabledCuDNNSDP());
  for (const auto* name : {"output", "grad_query", "grad_key", "grad_value"}) {
    ASSERT_TRUE(flash.count(name) && math.count(name)) << name;
    // The same attention, summed in other orders: within a thousandth of the largest magnitude.
    const double difference = (flash.at(name) - math.at(name)).abs().max().item<double>();
    const double scale = math.at(name).abs().max().item<double>();
    EXPECT_LE(difference, 1e-3 * scale) << name << ": not the same attention";
  }
  EXPECT_FALSE(at::equal(flash.at("grad_query"), math.at("grad_query"))) << "both ran one backend";
}

// The packed RNN variants run on sequences of unequal lengths: the batch shrinks along the steps, and the
// packed input's rows are the lengths' sum; the gradient of the flat weights covers every weight.
TEST(RnnProbe, PackedVariantsShrinkTheBatchAndTheWeightGradientCoversEveryWeight) {
  apply_cell_settings(make_flag_set({}, "cpu"));
  const auto* definition = find_registered_probe("rnn");
  ProbeContext context(at::kCPU, 0, *definition->info.find_variant("lstm-packed-f32"));
  const auto outputs = definition->prepare(context)();
  at::Tensor batch_sizes, weights;
  for (const auto& [name, tensor] : context.named_inputs()) {
    if (name == "batch_sizes") batch_sizes = tensor;
    if (name == "weights") weights = tensor;
  }
  ASSERT_TRUE(batch_sizes.defined() && weights.defined());
  EXPECT_EQ(batch_sizes[0].item<std::int64_t>(), 16);
  EXPECT_LT(batch_sizes[-1].item<std::int64_t>(), 16) << "every sequence as long as the longest";
  EXPECT_EQ(outputs[0].second.size(0), batch_sizes.sum().item<std::int64_t>());
  EXPECT_EQ(outputs[0].second.size(1), 2 * 64) << "two directions";
  // 2 layers x 2 directions of 4 x 64 gates: w_ih (32 inputs, then 128), w_hh (64), two biases.
  EXPECT_EQ(weights.numel(), 2 * (256 * 32 + 256 * 64 + 512) + 2 * (256 * 128 + 256 * 64 + 512));
  EXPECT_EQ(outputs[3].first, "grad_weights");
  EXPECT_EQ(outputs[3].second.sizes(), weights.sizes());
  EXPECT_GT(outputs[3].second.ne(0).sum().item<std::int64_t>(), weights.numel() * 9 / 10);
}

// Variant names are cell keys and stay as they were; the typed dtype must agree with the name's suffix.
TEST(Registration, EveryTypedDtypeAgreesWithItsVariantName) {
  for (const auto& probe : registered_catalogue())
    for (const auto& variant : probe.variants)
      if (variant.dtype) {
        const std::string suffix = to_string(*variant.dtype);
        EXPECT_TRUE(variant.name == suffix || variant.name.ends_with("-" + suffix))
            << probe.name << "/" << variant.name;
      }
}

TEST(Registration, TheBuilderRejectsAnIncompleteProbeNamingIt) {
  const auto message_of = [](const ProbeBuilder& builder) {
    try {
      builder.build();
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  const auto prepare = [](ProbeContext&) -> RunFunction { return [] { return Outputs{}; }; };
  EXPECT_EQ(message_of(ProbeBuilder("p").prepare(prepare)), "probe 'p': no variant; add one with .variant(...)");
  const auto python_message =
      "probe 'p': declare its Python form with .python(...), or why it has none with .no_python(...), not both";
  EXPECT_EQ(message_of(ProbeBuilder("p").variant(Variant(DType::f32)).prepare(prepare)), python_message);
  EXPECT_EQ(
      message_of(ProbeBuilder("p").variant(Variant(DType::f32)).prepare(prepare).python("return {}").no_python("r")),
      python_message);
  EXPECT_EQ(message_of(ProbeBuilder("p").variant(Variant(DType::f32))),
            "probe 'p': no prepare function; add one with .prepare(...)");
  EXPECT_EQ(
      message_of(ProbeBuilder("p").variant(Variant(DType::f32)).variant(Variant("f32", "again")).prepare(prepare)),
      "probe 'p': variant 'f32' is declared twice");
  const auto built = ProbeBuilder("p")
                         .describe("d")
                         .variant(Variant(DType::bf16))
                         .variant(Variant("cudnn-f32", "x").dtype(DType::f32).parameter("path", "cudnn").cuda_only("r"))
                         .documented({{"cuda", Documented::raises_under_strict}})
                         .timeout(5)
                         .control_expects(VerdictKind::error)
                         .on_request_only()
                         .prepare(prepare)
                         .python("return {}")
                         .python_path("note", "True")
                         .build();
  EXPECT_EQ(built.info.variants[0].name, "bf16");
  EXPECT_EQ(built.info.variants[0].description, "bfloat16");
  EXPECT_EQ(built.info.variants[0].devices, (std::vector<std::string>{"cpu", "cuda"}));
  EXPECT_EQ(built.info.variants[1].devices, std::vector<std::string>{"cuda"});
  EXPECT_EQ(built.info.variants[1].unsupported_reason, "r");
  EXPECT_EQ(built.info.variants[1].parameters.at("path"), "cudnn");
  EXPECT_EQ(built.info.documented_on("bf16", "cuda"), Documented::raises_under_strict);
  EXPECT_EQ(built.info.timeout_seconds, 5);
  EXPECT_EQ(built.info.control_expects, VerdictKind::error);
  EXPECT_FALSE(built.info.in_default_suite);
  EXPECT_EQ(built.info.python.code, "return {}");
  ASSERT_EQ(built.info.python.paths.size(), 1u);
  EXPECT_EQ(built.info.python.paths[0].check, "True");
}

TEST(ProbeContext, GivesTheVariantsTypedParametersAndNamesWhatIsMissing) {
  ProbeContext typed(at::kCPU, 0, Variant("max-f64", "").dtype(DType::f64).parameter("mode", "max").info());
  EXPECT_EQ(typed.dtype(), at::kDouble);
  EXPECT_EQ(typed.parameter("mode"), "max");
  try {
    typed.parameter("dims");
    ADD_FAILURE() << "an absent parameter was given";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "variant 'max-f64' has no parameter 'dims'; its parameters: mode");
  }
  ProbeContext untyped(at::kCPU, 0, Variant("default", "").info());
  try {
    untyped.dtype();
    ADD_FAILURE() << "a variant without a dtype gave one";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "variant 'default' declares no dtype; declare one with Variant::dtype() or Variant(DType::...)");
  }
}

// A probe that asks for a dtype its variant does not declare fails its cell with that message.
const bool no_dtype_registered =
    register_probe(ProbeBuilder("test.no_dtype")
                       .variant(Variant("default", ""))
                       .on_request_only()
                       .no_python("a test probe")
                       .prepare([](ProbeContext& context) {
                         const auto input = context.randn({4}, context.dtype());
                         return RunFunction([input] { return Outputs{{"output", input}}; });
                       }));

TEST(ProbeContext, AVariantWithoutADtypeFailsItsCellWithAClearError) {
  const auto cell = testing::make_cell("test.no_dtype", "default", {});
  const auto observation = testing::run_untraced(cell, WorkerRequest{});
  EXPECT_EQ(observation.status, ObservationStatus::exception);
  EXPECT_NE(observation.message.find("variant 'default' declares no dtype"), std::string::npos) << observation.message;
}

TEST(ProbeContext, InputsDependOnlyOnTheSeed) {
  const auto f32 = Variant(DType::f32).info();
  ProbeContext a(at::kCPU, 7, f32), b(at::kCPU, 7, f32), c(at::kCPU, 8, f32);
  const auto x = a.randn({100});
  EXPECT_TRUE(at::equal(x, b.randn({100})));
  EXPECT_FALSE(at::equal(x, c.randn({100})));
}

// On CUDA one dtype per backend and mask stands for sdpa_backward's others in the default suite. The fourth
// H200 audit ran all 36 variants by default: wherever a dtype of a backend and mask raced, the one kept
// raced too, and it ran wherever any of them ran. The others say how to run them.
TEST(DefaultSuite, SdpasCudaVariantsStandForTheDtypesTheyLeaveOut) {
  const auto* probe = find_registered_probe("sdpa_backward");
  ASSERT_NE(probe, nullptr);
  const auto family = [](const std::string& variant) { return variant.substr(0, variant.rfind('-')); };
  std::map<std::string, std::string> kept;  // "flash-causal" -> "flash-causal-bf16"
  for (const auto& variant : probe->info.variants) {
    if (variant.in_default_suite_on("cuda"))
      EXPECT_TRUE(kept.emplace(family(variant.name), variant.name).second) << variant.name;
    else
      EXPECT_NE(variant.default_suite_reason.find("--probe sdpa_backward"), std::string::npos) << variant.name;
    EXPECT_FALSE(variant.in_default_suite_on("cpu")) << variant.name;
  }
  EXPECT_EQ(kept.size(), 12u);
  const auto report = testing::fixture_json("h200-torch-2.11.0-default-audit-2026-11-28-lease4.json.gz");
  std::map<std::string, std::map<std::string, std::string>> verdicts;  // family -> variant -> verdict
  for (const auto& cell : report.at("cells"))
    if (cell.at("probe") == "sdpa_backward" && cell.at("label") == "default") {
      const auto variant = cell.at("variant").get<std::string>();
      verdicts[family(variant)][variant] = cell.at("verdict").get<std::string>();
    }
  ASSERT_EQ(verdicts.size(), 12u);
  int raced = 0;
  for (const auto& [name, by_variant] : verdicts) {
    ASSERT_TRUE(kept.count(name)) << name;
    const auto& own = by_variant.at(kept.at(name));
    bool any_raced = false, any_ran = false;
    for (const auto& [_, verdict] : by_variant) {
      any_raced = any_raced || verdict == "nondeterministic";
      any_ran = any_ran || verdict != "unsupported";
    }
    if (any_raced) EXPECT_EQ(own, "nondeterministic") << name;
    if (any_ran) EXPECT_NE(own, "unsupported") << name;
    raced += own == "nondeterministic";
  }
  EXPECT_EQ(raced, 8);  // flash (no mask, causal), efficient and cuDNN (each mask); math is the ordered reference
}

}  // namespace
}  // namespace repro_audit
