#include "config/catalogue_json.h"

#include <fmt/format.h>

#include <stdexcept>

namespace repro_audit {
// Named, not anonymous: a batch compiles this file with others (cmake/batched_sources.cmake) whose
// anonymous helpers have the same plain names.
namespace catalogue_json_parts {

using nlohmann::json;

std::optional<DType> dtype_from_string(const std::string& text) {
  for (const auto dtype : {DType::f16, DType::bf16, DType::f32, DType::f64})
    if (text == to_string(dtype)) return dtype;
  return std::nullopt;
}

// Every value read goes through here: a missing key or another type names the field.
const json& field(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key))
    throw std::invalid_argument(fmt::format("the catalogue has no '{}' where one is expected", key));
  return object.at(key);
}

template <typename T>
T read(const json& object, const char* key) {
  try {
    return field(object, key).get<T>();
  } catch (const json::exception& error) {
    throw std::invalid_argument(fmt::format("the catalogue's '{}': {}", key, error.what()));
  }
}

template <typename Enum, typename Parse>
Enum parse_enum(const std::string& text, Parse parse, const char* what) {
  const auto value = parse(text);
  if (!value) throw std::invalid_argument(fmt::format("the catalogue names no {} '{}'", what, text));
  return *value;
}

json documented_map(const std::map<std::string, Documented>& documented) {
  json out = json::object();
  for (const auto& [device, value] : documented) out[device] = to_string(value);
  return out;
}

std::map<std::string, Documented> read_documented_map(const json& object, const char* key) {
  std::map<std::string, Documented> out;
  for (const auto& [device, value] : read<std::map<std::string, std::string>>(object, key))
    out[device] = parse_enum<Documented>(value, documented_from_string, "documented behaviour");
  return out;
}

template <typename T>
json optional_value(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

std::optional<double> read_optional_number(const json& object, const char* key) {
  const auto& value = field(object, key);
  if (value.is_null()) return std::nullopt;
  return read<double>(object, key);
}

json before_to_json(const std::vector<DocumentedBefore>& entries) {
  json out = json::array();
  for (const auto& before : entries)
    out.push_back({{"until", before.until},
                   {"device_kind", before.device_kind},
                   {"documented", to_string(before.documented)},
                   {"source", before.source}});
  return out;
}

std::vector<DocumentedBefore> read_before(const json& object) {
  std::vector<DocumentedBefore> out;
  for (const auto& entry : field(object, "documented_before"))
    out.push_back(
        {read<std::string>(entry, "until"), read<std::string>(entry, "device_kind"),
         parse_enum<Documented>(read<std::string>(entry, "documented"), documented_from_string, "documented behaviour"),
         read<std::string>(entry, "source")});
  return out;
}

json variant_to_json(const VariantInfo& variant) {
  return {{"name", variant.name},
          {"description", variant.description},
          {"devices", variant.devices},
          {"unsupported_reason", variant.unsupported_reason},
          {"documented", documented_map(variant.documented)},
          {"dtype", variant.dtype ? json(to_string(*variant.dtype)) : json(nullptr)},
          {"parameters", variant.parameters},
          {"weight", optional_value(variant.weight)},
          {"expected_cost", optional_value(variant.expected_cost)},
          {"sensitivity_floor", optional_value(variant.sensitivity_floor)},
          {"insensitive_reason", variant.insensitive_reason},
          {"default_suite_devices", variant.default_suite_devices},
          {"default_suite_reason", variant.default_suite_reason},
          {"documented_before", before_to_json(variant.documented_before)},
          {"default_suite_nowhere", variant.default_suite_nowhere}};
}

VariantInfo variant_from_json(const json& object) {
  VariantInfo variant;
  variant.name = read<std::string>(object, "name");
  variant.description = read<std::string>(object, "description");
  variant.devices = read<std::vector<std::string>>(object, "devices");
  variant.unsupported_reason = read<std::string>(object, "unsupported_reason");
  variant.documented = read_documented_map(object, "documented");
  if (!field(object, "dtype").is_null())
    variant.dtype = parse_enum<DType>(read<std::string>(object, "dtype"), dtype_from_string, "dtype");
  variant.parameters = read<std::map<std::string, std::string>>(object, "parameters");
  variant.weight = read_optional_number(object, "weight");
  variant.expected_cost = read_optional_number(object, "expected_cost");
  variant.sensitivity_floor = read_optional_number(object, "sensitivity_floor");
  variant.insensitive_reason = read<std::string>(object, "insensitive_reason");
  variant.default_suite_devices = read<std::vector<std::string>>(object, "default_suite_devices");
  variant.default_suite_reason = read<std::string>(object, "default_suite_reason");
  variant.documented_before = read_before(object);
  variant.default_suite_nowhere = read<bool>(object, "default_suite_nowhere");
  return variant;
}

json probe_to_json(const ProbeInfo& probe) {
  json variants = json::array(), paths = json::array();
  for (const auto& variant : probe.variants) variants.push_back(variant_to_json(variant));
  for (const auto& path : probe.python.paths) paths.push_back({{"note", path.note}, {"check", path.check}});
  return {{"name", probe.name},
          {"description", probe.description},
          {"variants", variants},
          {"documented", documented_map(probe.documented)},
          {"in_default_suite", probe.in_default_suite},
          {"timeout_seconds", probe.timeout_seconds},
          {"control_expects", probe.control_expects ? json(to_string(*probe.control_expects)) : json(nullptr)},
          {"invariance", to_string(probe.invariance)},
          {"collective", probe.collective},
          {"accumulation",
           {{"output", probe.accumulation.output},
            {"operand", probe.accumulation.operand},
            {"floor", probe.accumulation.floor},
            {"unchecked", probe.accumulation.unchecked}}},
          {"weight", probe.weight},
          {"python",
           {{"code", probe.python.code},
            {"none_reason", probe.python.none_reason},
            {"differs_reason", probe.python.differs_reason},
            {"cuda_differs_reason", probe.python.cuda_differs_reason},
            {"paths", paths}}},
          {"documented_before", before_to_json(probe.documented_before)}};
}

ProbeInfo probe_from_json(const json& object) {
  ProbeInfo probe;
  probe.name = read<std::string>(object, "name");
  probe.description = read<std::string>(object, "description");
  for (const auto& variant : field(object, "variants")) probe.variants.push_back(variant_from_json(variant));
  probe.documented = read_documented_map(object, "documented");
  probe.in_default_suite = read<bool>(object, "in_default_suite");
  probe.timeout_seconds = read<double>(object, "timeout_seconds");
  if (!field(object, "control_expects").is_null())
    probe.control_expects =
        parse_enum<VerdictKind>(read<std::string>(object, "control_expects"), verdict_from_string, "verdict");
  probe.invariance =
      parse_enum<Invariance>(read<std::string>(object, "invariance"), invariance_from_string, "invariance");
  probe.collective = read<bool>(object, "collective");
  const auto& accumulation = field(object, "accumulation");
  probe.accumulation = {read<std::string>(accumulation, "output"), read<std::string>(accumulation, "operand"),
                        read<double>(accumulation, "floor"), read<std::string>(accumulation, "unchecked")};
  probe.weight = read<double>(object, "weight");
  const auto& python = field(object, "python");
  probe.python.code = read<std::string>(python, "code");
  probe.python.none_reason = read<std::string>(python, "none_reason");
  probe.python.differs_reason = read<std::string>(python, "differs_reason");
  probe.python.cuda_differs_reason = read<std::string>(python, "cuda_differs_reason");
  for (const auto& path : field(python, "paths"))
    probe.python.paths.push_back({read<std::string>(path, "note"), read<std::string>(path, "check")});
  probe.documented_before = read_before(object);
  return probe;
}

}  // namespace catalogue_json_parts

nlohmann::json catalogue_to_json(const DocumentedCatalogue& documented) {
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& probe : documented.catalogue) probes.push_back(catalogue_json_parts::probe_to_json(probe));
  return {{"documentation",
           {{"torch", documented.documentation.torch},
            {"release", documented.documentation.release},
            {"newer_than_known", documented.documentation.newer_than_known}}},
          {"probes", probes}};
}

DocumentedCatalogue catalogue_from_json(const nlohmann::json& json) {
  DocumentedCatalogue out;
  const auto& documentation = catalogue_json_parts::field(json, "documentation");
  out.documentation = {catalogue_json_parts::read<std::string>(documentation, "torch"),
                       catalogue_json_parts::read<std::string>(documentation, "release"),
                       catalogue_json_parts::read<bool>(documentation, "newer_than_known")};
  const auto& probes = catalogue_json_parts::field(json, "probes");
  if (!probes.is_array()) throw std::invalid_argument("the catalogue's 'probes' is not a list");
  for (const auto& probe : probes) out.catalogue.push_back(catalogue_json_parts::probe_from_json(probe));
  return out;
}

}  // namespace repro_audit
