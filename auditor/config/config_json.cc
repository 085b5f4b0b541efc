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
    config.source = json.at("source").get<std::string>();
    config.device = json.at("device").get<std::string>();
    config.probes.clear();
    for (const auto& selection : json.at("probes"))
      config.probes.push_back(
          {selection.at("probe").get<std::string>(), selection.at("variants").get<std::vector<std::string>>()});
    const auto kind = json.value("kind", "repeat");  // absent before invariance probes: repeat only
    const auto parsed_kind = probe_kind_from_string(kind);
    if (!parsed_kind)
      throw UserError(fmt::format("{}: malformed config: kind '{}' is not one of: {}", source, kind, kProbeKindNames));
    config.kind = *parsed_kind;
    config.profiles = json.at("profiles").get<std::vector<std::string>>();
    config.axes = json.at("axes").get<std::map<std::string, std::vector<std::string>>>();
    config.full_matrix = json.at("full_matrix").get<bool>();
    config.repeats = json_integer<int>(json.at("repeats"));
    config.warmup = json_integer<int>(json.at("warmup"));
    config.processes = json_integer<int>(json.at("processes"));
    config.seed = json_integer<std::uint64_t>(json.at("seed"));
    // Absent before the scheme was recorded: those files' inputs came from ATen's generator.
    const auto scheme = json_integer_or(json, "input_scheme", to_int(kUnrecordedInputScheme));
    const auto parsed_scheme = input_scheme_from_int(scheme);
    if (!parsed_scheme)
      throw UserError(
          fmt::format("{}: malformed config: input_scheme {} is not one of: {}", source, scheme, kInputSchemeNames));
    config.input_scheme = *parsed_scheme;
    config.timeout_seconds = json.at("timeout").get<double>();
    if (json.contains("detect")) config.detect = json.at("detect").get<double>();
    const auto fail_on = json.at("fail_on").get<std::string>();
    const auto parsed_fail_on = fail_on_from_string(fail_on);
    if (!parsed_fail_on)
      throw UserError(
          fmt::format("{}: malformed config: fail_on '{}' is not one of: {}", source, fail_on, kFailOnNames));
    config.fail_on = *parsed_fail_on;
    config.models = json.value("models", std::vector<ModelSpec>{});
    return config;
  } catch (const nlohmann::json::exception& error) {
    throw UserError(fmt::format("{}: malformed config: {}", source, error.what()));
  }
}

}  // namespace repro_audit
