#include "protocol/observation_json.h"

#include "config/json_number.h"

namespace repro_audit {
using nlohmann::json;

void to_json(json& j, const KernelRecord& value) {
  j = {{"name", value.name}};
  if (!value.grid.empty()) j["grid"] = value.grid;
  if (!value.block.empty()) j["block"] = value.block;
}
void from_json(const json& j, KernelRecord& value) {
  value.name = j.at("name").get<std::string>();
  value.grid = j.value("grid", "");
  value.block = j.value("block", "");
}

void to_json(json& j, const RunObservation& value) {
  j = {{"digest", value.digest}, {"outputs", json::array()}, {"warmup", value.warmup}, {"time_ns", value.time_ns}};
  for (const auto& [name, digest] : value.outputs) j["outputs"].push_back({{"name", name}, {"digest", digest}});
  if (!value.kernel_digest.empty()) j["kernel_digest"] = value.kernel_digest;
}
void from_json(const json& j, RunObservation& value) {
  value.digest = j.at("digest").get<std::string>();
  value.outputs.clear();
  for (const auto& output : j.at("outputs"))
    value.outputs.emplace_back(output.at("name").get<std::string>(), output.at("digest").get<std::string>());
  value.warmup = j.value("warmup", false);
  value.time_ns = json_integer_or(j, "time_ns", std::int64_t{0});
  value.kernel_digest = j.value("kernel_digest", "");
}

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
  value.output = j.at("output").get<std::string>();
  value.run = json_integer_or(j, "run", 0);
  value.differing_elements = json_integer_or(j, "differing_elements", std::int64_t{-1});
  value.elements = json_integer_or(j, "elements", std::int64_t{0});
  value.max_abs_difference = j.value("max_abs_difference", 0.0);
  value.max_ulp_difference = j.value("max_ulp_difference", 0.0);
}

void to_json(json& j, const ProcessObservation& value) {
  j = {{"process", value.process}, {"status", to_string(value.status)}, {"runs", value.runs}};
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
  if (!value.input_digest.empty()) j["input_digest"] = value.input_digest;
}
void from_json(const json& j, ProcessObservation& value) {
  value.process = json_integer_or(j, "process", 0);
  const auto status = j.at("status").get<std::string>();
  const auto parsed = observation_status_from_string(status);
  if (!parsed)
    throw json::other_error::create(
        501, "unknown status '" + status + "'; valid statuses: " + observation_status_names(), &j);
  value.status = *parsed;
  value.message = j.value("message", "");
  value.runs = j.value("runs", std::vector<RunObservation>{});
  value.warnings = j.value("warnings", std::vector<std::string>{});
  value.divergence.reset();
  if (j.contains("divergence")) value.divergence = j.at("divergence").get<Divergence>();
  value.kernel_sequences.clear();
  for (const auto& sequence : j.value("kernel_sequences", json::array()))
    value.kernel_sequences.emplace_back(sequence.at("digest").get<std::string>(),
                                        sequence.at("kernels").get<std::vector<KernelRecord>>());
  value.trace_unavailable = j.value("trace_unavailable", "");
  value.input_digest = j.value("input_digest", "");
  value.variations = j.value("variations", std::vector<Divergence>{});
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
}
void from_json(const json& j, Cell& value) {
  value.key = j.at("key").get<std::string>();
  value.probe = j.at("probe").get<std::string>();
  value.variant = j.at("variant").get<std::string>();
  value.device = j.at("device").get<std::string>();
  value.label = j.value("label", "");
  value.settings = j.at("settings").get<FlagSet>();
  value.unsupported_reason = j.value("unsupported_reason", "");
  value.timeout_seconds = j.value("timeout_seconds", 60.0);
  value.invariance = Invariance::none;
  if (j.contains("invariance")) {
    const auto name = j.at("invariance").get<std::string>();
    const auto invariance = invariance_from_string(name);
    if (!invariance) throw json::other_error::create(501, "unknown invariance '" + name + "'", &j);
    value.invariance = *invariance;
  }
}

void to_json(json& j, const Timing& value) {
  j = {{"median_ns", value.median_ns}, {"p10_ns", value.p10_ns}, {"p90_ns", value.p90_ns}, {"samples", value.samples}};
}
void from_json(const json& j, Timing& value) {
  value.median_ns = json_integer_or(j, "median_ns", std::int64_t{0});
  value.p10_ns = json_integer_or(j, "p10_ns", std::int64_t{0});
  value.p90_ns = json_integer_or(j, "p90_ns", std::int64_t{0});
  value.samples = json_integer_or(j, "samples", 0);
}

}  // namespace repro_audit
