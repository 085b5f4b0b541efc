#include "protocol/observation_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/json_number.h"
#include "protocol/python_observation_json.h"

namespace repro_audit {
using nlohmann::json;

std::vector<std::string> bounded_warnings(std::vector<std::string> warnings, std::size_t more) {
  // A list already cut (its last line the count) is as bounded as it gets: kept as it is.
  if (warnings.size() <= kKeptWarnings + (more == 0 ? 1 : 0)) {
    if (more > 0)
      warnings.push_back(fmt::format("{} more warning(s) not kept: a run keeps its first {}", more, kKeptWarnings));
    return warnings;
  }
  more += warnings.size() - kKeptWarnings;
  warnings.resize(kKeptWarnings);
  warnings.push_back(fmt::format("{} more warning(s) not kept: a run keeps its first {}", more, kKeptWarnings));
  return warnings;
}

void to_json(json& j, const KernelRecord& value) {
  j = {{"name", value.name}};
  if (!value.grid.empty()) j["grid"] = value.grid;
  if (!value.block.empty()) j["block"] = value.block;
}
void from_json(const json& j, KernelRecord& value) {
  value.name = json_field<std::string>(j, "name");
  value.grid = json_field_or<std::string>(j, "grid", "");
  value.block = json_field_or<std::string>(j, "block", "");
}

void to_json(json& j, const RunObservation& value) {
  j = {{"digest", value.digest}, {"outputs", json::array()}, {"warmup", value.warmup}, {"time_ns", value.time_ns}};
  for (const auto& [name, digest] : value.outputs) j["outputs"].push_back({{"name", name}, {"digest", digest}});
  if (!value.kernel_digest.empty()) j["kernel_digest"] = value.kernel_digest;
  if (!value.op_digest.empty()) j["op_digest"] = value.op_digest;
  if (value.per_op) j["per_op"] = true;
}
void from_json(const json& j, RunObservation& value) {
  value.digest = json_field<std::string>(j, "digest");
  value.outputs.clear();
  for (const auto& output : j.at("outputs"))
    value.outputs.emplace_back(json_field<std::string>(output, "name"), json_field<std::string>(output, "digest"));
  value.warmup = json_field_or(j, "warmup", false);
  value.time_ns = json_amount_or(j, "time_ns", std::int64_t{0});
  value.kernel_digest = json_field_or<std::string>(j, "kernel_digest", "");
  value.op_digest = json_field_or<std::string>(j, "op_digest", "");
  value.per_op = json_field_or(j, "per_op", false);
}

// A difference is a number, or null where it is infinite (JSON has no infinity: an infinite value
// against a finite one, or two outputs of other shapes), as every version has written it.
namespace {
double difference_or_infinity(const json& j, const char* key) {
  if (const auto it = j.find(key); it != j.end() && it->is_null()) return INFINITY;
  return json_amount_or(j, key, 0.0);
}
}  // namespace

void to_json(json& j, const Divergence& value) {
  j = {{"output", value.output}, {"run", value.run}};
  if (value.differing_elements >= 0) {
    j["differing_elements"] = value.differing_elements;
    j["elements"] = value.elements;
    j["max_abs_difference"] = value.max_abs_difference;
    j["max_ulp_difference"] = value.max_ulp_difference;
  }
}
void from_json(const json& j, Divergence& value) {
  value.output = json_field<std::string>(j, "output");
  value.run = json_integer_or(j, "run", 0);
  value.differing_elements = json_integer_or(j, "differing_elements", std::int64_t{-1});
  value.elements = json_integer_or(j, "elements", std::int64_t{0});
  value.max_abs_difference = difference_or_infinity(j, "max_abs_difference");
  value.max_ulp_difference = difference_or_infinity(j, "max_ulp_difference");
}

void to_json(json& j, const Sensitivity& value) {
  j = {{"output", value.output},
       {"elements", value.elements},
       {"changed", value.changed},
       {"orders", value.orders},
       {"floor", value.floor}};
}
void from_json(const json& j, Sensitivity& value) {
  value.output = json_field<std::string>(j, "output");
  value.elements = std::max<std::int64_t>(0, json_integer_or(j, "elements", std::int64_t{0}));
  value.changed = std::clamp<std::int64_t>(json_integer_or(j, "changed", std::int64_t{0}), 0, value.elements);
  value.orders = std::max(0, json_integer_or(j, "orders", 0));
  const double floor = j.value("floor", 0.1);
  value.floor = floor >= 0 && floor <= 1 ? floor : 0.1;
}

void to_json(json& j, const ProcessObservation& value) {
  j = {{"process", value.process}, {"status", to_string(value.status)}, {"runs", value.runs}};
  if (!value.host.empty()) j["host"] = value.host;
  if (!value.message.empty()) j["message"] = value.message;
  if (!value.warnings.empty()) j["warnings"] = value.warnings;
  if (value.divergence) j["divergence"] = *value.divergence;
  if (!value.kernel_sequences.empty()) {
    j["kernel_sequences"] = json::array();
    for (const auto& [digest, kernels] : value.kernel_sequences)
      j["kernel_sequences"].push_back({{"digest", digest}, {"kernels", kernels}});
  }
  if (!value.trace_unavailable.empty()) j["trace_unavailable"] = value.trace_unavailable;
  if (!value.variations.empty()) j["variations"] = value.variations;
  if (value.sensitivity) j["sensitivity"] = *value.sensitivity;
  if (!value.input_digest.empty()) j["input_digest"] = value.input_digest;
  if (!value.op_sequences.empty()) j["op_sequences"] = value.op_sequences;
  if (!value.per_op_unavailable.empty()) j["per_op_unavailable"] = value.per_op_unavailable;
  if (!value.output_differences.empty()) j["output_differences"] = value.output_differences;
  if (value.origin_difference) j["origin_difference"] = *value.origin_difference;
  if (!value.timing_ns.empty()) j["timing_ns"] = value.timing_ns;
  if (!value.timing_clock_mhz.empty()) j["timing_clock_mhz"] = value.timing_clock_mhz;
  if (value.timing_rounds > 1) j["timing_rounds"] = value.timing_rounds;
  if (value.stopped_early) j["stopped_early"] = true;
  if (value.budget_limited) j["budget_limited"] = true;
  if (value.untimed) j["untimed"] = true;
  if (!value.random_sources.empty()) j["random_sources"] = value.random_sources;
  if (!value.hash_seed.empty()) j["hash_seed"] = value.hash_seed;
  if (!value.hash_probe.empty()) j["hash_probe"] = value.hash_probe;
  if (value.loader) j["loader"] = *value.loader;
}
void from_json(const json& j, ProcessObservation& value) {
  value.process = json_integer_or(j, "process", 0);
  value.host = json_field_or<std::string>(j, "host", "");
  const auto status = json_field<std::string>(j, "status");
  const auto parsed = observation_status_from_string(status);
  if (!parsed)
    throw json::other_error::create(
        501, "unknown status '" + status + "'; valid statuses: " + observation_status_names(), &j);
  value.status = *parsed;
  value.message = json_field_or<std::string>(j, "message", "");
  value.runs = json_field_or(j, "runs", std::vector<RunObservation>{});
  value.warnings = bounded_warnings(json_field_or(j, "warnings", std::vector<std::string>{}));
  value.divergence.reset();
  if (j.contains("divergence")) value.divergence = json_field<Divergence>(j, "divergence");
  value.kernel_sequences.clear();
  for (const auto& sequence : j.value("kernel_sequences", json::array()))
    value.kernel_sequences.emplace_back(json_field<std::string>(sequence, "digest"),
                                        json_field<std::vector<KernelRecord>>(sequence, "kernels"));
  value.trace_unavailable = json_field_or<std::string>(j, "trace_unavailable", "");
  value.input_digest = json_field_or<std::string>(j, "input_digest", "");
  value.variations = json_field_or(j, "variations", std::vector<Divergence>{});
  value.sensitivity.reset();
  if (j.contains("sensitivity")) value.sensitivity = json_field<Sensitivity>(j, "sensitivity");
  value.op_sequences = json_field_or(j, "op_sequences", std::vector<OpSequence>{});
  value.per_op_unavailable = json_field_or<std::string>(j, "per_op_unavailable", "");
  value.output_differences = json_field_or(j, "output_differences", std::vector<Divergence>{});
  value.origin_difference.reset();
  if (j.contains("origin_difference")) value.origin_difference = json_field<Divergence>(j, "origin_difference");
  value.timing_ns = json_field_or(j, "timing_ns", std::vector<std::int64_t>{});
  for (const auto sample : value.timing_ns)
    if (sample < 0)
      throw json::out_of_range::create(406, "\"timing_ns\": must be times of 0 or more, not " + std::to_string(sample),
                                       nullptr);
  value.timing_clock_mhz = json_field_or(j, "timing_clock_mhz", std::vector<int>{});
  if (!value.timing_clock_mhz.empty() && value.timing_clock_mhz.size() != value.timing_ns.size())
    throw json::other_error::create(501, "timing_clock_mhz must have one clock per timing_ns sample", &j);
  value.timing_rounds = std::max(1, json_integer_or(j, "timing_rounds", 1));
  value.stopped_early = json_field_or(j, "stopped_early", false);
  value.budget_limited = json_field_or(j, "budget_limited", false);
  value.untimed = json_field_or(j, "untimed", false);
  value.random_sources = json_field_or(j, "random_sources", std::vector<RandomSource>{});
  if (value.random_sources.size() > kMaxRandomSources)
    throw json::out_of_range::create(
        406, "\"random_sources\": at most " + std::to_string(kMaxRandomSources) + " per process", nullptr);
  value.hash_seed = json_field_or<std::string>(j, "hash_seed", "");
  value.hash_probe = json_field_or<std::string>(j, "hash_probe", "");
  value.loader.reset();
  if (j.contains("loader")) value.loader = json_field<LoaderObservation>(j, "loader");
}

void to_json(json& j, const OpRecord& value) {
  j = {{"name", value.name}, {"start", value.start}, {"inputs", value.inputs}, {"outputs", value.outputs}};
  if (!value.module.empty()) j["module"] = value.module;
  if (value.depth > 0) j["depth"] = value.depth;
  if (!value.kernels.empty()) j["kernels"] = value.kernels;
}
void from_json(const json& j, OpRecord& value) {
  value.name = json_field<std::string>(j, "name");
  value.module = json_field_or<std::string>(j, "module", "");
  value.depth = json_integer_or(j, "depth", 0);
  value.start = json_integer_or(j, "start", std::int64_t{0});
  value.inputs = json_field_or<std::string>(j, "inputs", "");
  value.outputs = json_field_or<std::string>(j, "outputs", "");
  value.kernels = json_field_or(j, "kernels", std::vector<std::string>{});
}

void to_json(json& j, const OpSequence& value) {
  j = {{"digest", value.digest}, {"ops", value.ops}};
  if (value.truncated) j["truncated"] = true;
}
void from_json(const json& j, OpSequence& value) {
  value.digest = json_field<std::string>(j, "digest");
  value.ops = json_field<std::vector<OpRecord>>(j, "ops");
  value.truncated = json_field_or(j, "truncated", false);
}

void to_json(json& j, const Origin& value) {
  j = {{"position", value.position},
       {"ops", value.ops},
       {"op", value.op},
       {"within", value.within},
       {"module", value.module},
       {"downstream", value.downstream},
       {"downstream_ops", value.downstream_ops},
       {"compared", value.compared}};
  if (value.difference) j["difference"] = *value.difference;
  if (!value.kernels.empty()) j["kernels"] = value.kernels;
}
void from_json(const json& j, Origin& value) {
  value.position = json_integer_or(j, "position", 0);
  value.ops = json_integer_or(j, "ops", 0);
  value.op = json_field<std::string>(j, "op");
  value.within = json_field_or(j, "within", std::vector<std::string>{});
  value.module = json_field_or<std::string>(j, "module", "");
  value.downstream = json_integer_or(j, "downstream", 0);
  value.downstream_ops = json_field_or(j, "downstream_ops", std::vector<std::string>{});
  value.compared = json_field_or<std::string>(j, "compared", "");
  value.difference.reset();
  if (j.contains("difference")) value.difference = json_field<Divergence>(j, "difference");
  value.kernels = json_field_or(j, "kernels", std::vector<std::string>{});
}

void to_json(json& j, const StepGrowth& value) {
  j = {{"step", value.step},
       {"loss_difference", value.loss_difference},
       {"parameter_difference", value.parameter_difference}};
}
void from_json(const json& j, StepGrowth& value) {
  value.step = json_integer_or(j, "step", 0);
  value.loss_difference = j.value("loss_difference", 0.0);
  value.parameter_difference = j.value("parameter_difference", 0.0);
}

void to_json(json& j, const Cell& value) {
  j = {{"key", value.key},
       {"probe", value.probe},
       {"variant", value.variant},
       {"device", value.device},
       {"label", value.label},
       {"settings", value.settings},
       {"timeout_seconds", value.timeout_seconds}};
  if (!value.unsupported_reason.empty()) j["unsupported_reason"] = value.unsupported_reason;
  if (value.invariance != Invariance::none) j["invariance"] = to_string(value.invariance);
  if (value.model) j["model"] = *value.model;
  if (value.budget_seconds > 0) j["budget_seconds"] = value.budget_seconds;
}
void from_json(const json& j, Cell& value) {
  value.key = json_field<std::string>(j, "key");
  value.probe = json_field<std::string>(j, "probe");
  value.variant = json_field<std::string>(j, "variant");
  value.device = json_field<std::string>(j, "device");
  value.label = json_field_or<std::string>(j, "label", "");
  value.settings = json_field<FlagSet>(j, "settings");
  value.unsupported_reason = json_field_or<std::string>(j, "unsupported_reason", "");
  value.timeout_seconds = json_field_or(j, "timeout_seconds", 60.0);
  value.budget_seconds = json_field_or(j, "budget_seconds", 0.0);
  value.invariance = Invariance::none;
  if (j.contains("invariance")) {
    const auto name = json_field<std::string>(j, "invariance");
    const auto invariance = invariance_from_string(name);
    if (!invariance) throw json::other_error::create(501, "unknown invariance '" + name + "'", &j);
    value.invariance = *invariance;
  }
  value.model.reset();
  if (j.contains("model")) value.model = json_field<ModelSpec>(j, "model");
}

void to_json(json& j, const Timing& value) {
  j = {{"median_ns", value.median_ns}, {"p10_ns", value.p10_ns}, {"p90_ns", value.p90_ns}, {"samples", value.samples}};
  if (value.has_interval()) {
    j["ci_low_ns"] = value.ci_low_ns;
    j["ci_high_ns"] = value.ci_high_ns;
    j["target_reached"] = value.target_reached;
  }
  if (value.clock_mhz > 0) j["clock_mhz"] = value.clock_mhz;
  if (value.samples_at_other_clocks > 0) j["samples_at_other_clocks"] = value.samples_at_other_clocks;
}
void from_json(const json& j, Timing& value) {
  value.median_ns = json_amount_or(j, "median_ns", std::int64_t{0});
  value.p10_ns = json_amount_or(j, "p10_ns", std::int64_t{0});
  value.p90_ns = json_amount_or(j, "p90_ns", std::int64_t{0});
  value.samples = json_amount_or(j, "samples", 0);
  value.ci_low_ns = json_amount_or(j, "ci_low_ns", std::int64_t{0});
  value.ci_high_ns = json_amount_or(j, "ci_high_ns", std::int64_t{0});
  value.target_reached = json_field_or(j, "target_reached", false);
  value.clock_mhz = json_amount_or(j, "clock_mhz", 0);
  value.samples_at_other_clocks = json_amount_or(j, "samples_at_other_clocks", 0);
}

}  // namespace repro_audit
