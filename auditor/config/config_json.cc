#include "config/config_json.h"

#include <fmt/format.h>

#include "common/json_number.h"
#include "common/user_error.h"

namespace repro_audit {

nlohmann::json config_to_json(const Config& config) {
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& selection : config.probes)
    probes.push_back({{"probe", selection.probe}, {"variants", selection.variants}});
  nlohmann::json j = {{"source", config.source},
                      {"device", config.device},
                      {"probes", probes},
                      {"kind", to_string(config.kind)},
                      {"profiles", config.profiles},
                      {"axes", config.axes},
                      {"full_matrix", config.full_matrix},
                      {"repeats", config.repeats},
                      {"warmup", config.warmup},
                      {"processes", config.processes},
                      {"seed", config.seed},
                      {"input_scheme", to_int(config.input_scheme)},
                      {"timeout", config.timeout_seconds},
                      {"fail_on", to_string(config.fail_on)}};
  if (!config.models.empty()) j["models"] = config.models;  // absent before model audits
  if (config.detect) j["detect"] = *config.detect;          // absent without --detect
  return j;
}

Config config_from_json(const nlohmann::json& json, const std::string& source) {
  try {
    Config config;
    config.source = json_field<std::string>(json, "source");
    config.device = json_field<std::string>(json, "device");
    config.probes.clear();
    for (const auto& selection : json.at("probes"))
      config.probes.push_back(
          {json_field<std::string>(selection, "probe"), json_field<std::vector<std::string>>(selection, "variants")});
    const auto kind = json.value("kind", "repeat");  // absent before invariance probes: repeat only
    const auto parsed_kind = probe_kind_from_string(kind);
    if (!parsed_kind)
      throw UserError(fmt::format("{}: malformed config: kind '{}' is not one of: {}", source, kind, kProbeKindNames));
    config.kind = *parsed_kind;
    config.profiles = json_field<std::vector<std::string>>(json, "profiles");
    config.axes = json_field<std::map<std::string, std::vector<std::string>>>(json, "axes");
    config.full_matrix = json_field<bool>(json, "full_matrix");
    config.repeats = json_field<int>(json, "repeats");
    config.warmup = json_field<int>(json, "warmup");
    config.processes = json_field<int>(json, "processes");
    config.seed = json_field<std::uint64_t>(json, "seed");
    // Absent before the scheme was recorded: those files' inputs came from ATen's generator.
    const auto scheme = json_integer_or(json, "input_scheme", to_int(kUnrecordedInputScheme));
    const auto parsed_scheme = input_scheme_from_int(scheme);
    if (!parsed_scheme)
      throw UserError(
          fmt::format("{}: malformed config: input_scheme {} is not one of: {}", source, scheme, kInputSchemeNames));
    config.input_scheme = *parsed_scheme;
    config.timeout_seconds = json_field<double>(json, "timeout");
    if (json.contains("detect")) config.detect = json_field<double>(json, "detect");
    const auto fail_on = json_field<std::string>(json, "fail_on");
    const auto parsed_fail_on = fail_on_from_string(fail_on);
    if (!parsed_fail_on)
      throw UserError(
          fmt::format("{}: malformed config: fail_on '{}' is not one of: {}", source, fail_on, kFailOnNames));
    config.fail_on = *parsed_fail_on;
    config.models = json_field_or(json, "models", std::vector<ModelSpec>{});
    return config;
  } catch (const nlohmann::json::exception& error) {
    throw UserError(fmt::format("{}: malformed config: {}", source, error.what()));
  }
}

}  // namespace repro_audit
