#include "config/model_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "common/json_number.h"
#include "common/pattern.h"

namespace repro_audit {

const char* to_string(LossKind loss) {
  switch (loss) {
    case LossKind::automatic:
      return "auto";
    case LossKind::sum:
      return "sum";
    case LossKind::output:
      return "output";
  }
  return "?";
}

std::optional<LossKind> loss_kind_from_string(const std::string& text) {
  for (const auto loss : {LossKind::automatic, LossKind::sum, LossKind::output})
    if (text == to_string(loss)) return loss;
  return std::nullopt;
}

std::string callable_problem(const std::string& callable) {
  // A dotted module path, or a file ending in .py, then ':' and a dotted attribute path.
  static const Pattern grammar(R"(^([A-Za-z_][A-Za-z0-9_.]*|[^:\x00-\x1f]+\.py):[A-Za-z_][A-Za-z0-9_.]*$)");
  if (callable.size() > 4096 || !grammar.matches(callable))
    return fmt::format("callable '{}' is not MODULE:CALLABLE or FILE.py:CALLABLE",
                       callable.size() > 80 ? callable.substr(0, 80) + "..." : callable);
  return "";
}

std::string model_probe_name(const ModelSpec& model) {
  return (is_python_model(model) ? kPythonProbePrefix : kModelProbePrefix) + model.name;
}

std::string model_variant(const ModelSpec& model) {
  if (is_python_model(model)) return "call";
  if (!model.train) return "forward";
  return model.steps > 0 ? fmt::format("train.sgd{}", model.steps) : "train";
}

bool is_model_probe(const std::string& probe) {
  return probe.rfind(kModelProbePrefix, 0) == 0 || probe.rfind(kPythonProbePrefix, 0) == 0;
}

std::string model_name_from_path(const std::string& path) {
  auto name = std::filesystem::path(path).stem().string();
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  return name.empty() ? "model" : name;
}

ProbeInfo model_probe_info(const ModelSpec& model) {
  ProbeInfo info;
  info.name = model_probe_name(model);
  info.description = is_python_model(model)
                         ? fmt::format("Python callable {}", model.callable)
                         : fmt::format("{} of {}", model.train ? "training step" : "forward (inference)", model.path);
  VariantInfo variant;
  variant.name = model_variant(model);
  variant.description = is_python_model(model) ? "the callable's step, run by " + model.python
                        : model.train
                            ? (model.steps > 0 ? fmt::format("forward, loss, backward, {} SGD steps", model.steps)
                                               : "forward, loss, backward")
                            : "forward";
  variant.devices = {"cpu", "cuda"};
  info.variants.push_back(variant);
  info.documented = {{"cpu", Documented::unknown}, {"cuda", Documented::unknown}};
  info.timeout_seconds = 600;
  // A user's model is unknown; with per-op digests it is seldom lighter than the heaviest probes.
  info.weight = model.train ? 200 : 50;
  return info;
}

Catalogue catalogue_with_models(Catalogue catalogue, const std::vector<ModelSpec>& models) {
  for (const auto& model : models) {
    if (find_probe(catalogue, model_probe_name(model)))
      throw std::invalid_argument(fmt::format(
          "two models are named '{}'; give each its own name (config: name:, command line: NAME=PATH)", model.name));
    catalogue.push_back(model_probe_info(model));
  }
  return catalogue;
}

std::optional<ModelInput> parse_model_input(const std::string& text, std::size_t index, std::string& error) {
  const auto fail = [&](const std::string& why) {
    error = fmt::format("input '{}' {}", text.size() > 80 ? text.substr(0, 80) + "..." : text, why);
    return std::nullopt;
  };
  const auto open = text.find('[');
  if (open == std::string::npos || text.back() != ']' || text.find('[', open + 1) != std::string::npos)
    return fail("is not NAME:DTYPE[SHAPE], e.g. x:f32[4,8]");
  const auto head = text.substr(0, open);
  const auto colon = head.find(':');
  ModelInput input;
  input.name = colon == std::string::npos ? fmt::format("input{}", index) : head.substr(0, colon);
  input.dtype = colon == std::string::npos ? head : head.substr(colon + 1);
  const bool name_ok =
      !input.name.empty() && !std::isdigit(static_cast<unsigned char>(input.name[0])) &&
      std::all_of(input.name.begin(), input.name.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
  if (!name_ok) return fail("has a name that is not a letter or '_' followed by letters, digits or '_'");
  static const std::vector<std::string> dtypes = {"f32", "f64", "f16", "bf16", "i64", "i32", "bool"};
  if (std::find(dtypes.begin(), dtypes.end(), input.dtype) == dtypes.end())
    return fail(fmt::format("has an unknown dtype '{}'; valid dtypes: {}", input.dtype, kInputDTypeNames));
  const auto dims = text.substr(open + 1, text.size() - open - 2);
  for (std::size_t start = 0; start < dims.size();) {
    const auto comma = dims.find(',', start);
    auto item = dims.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos)
      return fail("has a dimension that is not a whole number below 10^9");
    input.shape.push_back(std::stoll(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
    if (start == dims.size()) return fail("ends its shape with a comma");
  }
  return input;
}

std::optional<std::uint64_t> model_input_bytes(const ModelInput& input) {
  std::uint64_t bytes = input.dtype == "f64" || input.dtype == "i64"   ? 8
                        : input.dtype == "f32" || input.dtype == "i32" ? 4
                        : input.dtype == "bool"                        ? 1
                                                                       : 2;
  for (const auto size : input.shape)
    if (size < 0 || __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(size), &bytes)) return std::nullopt;
  return bytes;
}

std::string to_string(const ModelInput& input) {
  return fmt::format("{}:{}[{}]", input.name, input.dtype, fmt::join(input.shape, ","));
}

void to_json(nlohmann::json& j, const ModelSpec& model) {
  j = {{"name", model.name},
       {"path", model.path},
       {"train", model.train},
       {"steps", model.steps},
       {"learning_rate", model.learning_rate},
       {"loss", to_string(model.loss)},
       {"per_op", model.per_op}};
  if (!model.inputs_file.empty()) j["inputs_file"] = model.inputs_file;
  if (is_python_model(model)) {
    j["callable"] = model.callable;
    j["python"] = model.python;
    j["search_path"] = model.search_path;
    j["parameters"] = model.parameters;
    if (!model.compile_cache.empty()) j["compile_cache"] = model.compile_cache;
    // Written only off their defaults: the cells of earlier audits keep their form (and fingerprints).
    if (model.loader_epochs != kDefaultLoaderEpochs) j["loader_epochs"] = model.loader_epochs;
    if (model.loader_batches != kDefaultLoaderBatches) j["loader_batches"] = model.loader_batches;
  }
  if (!model.inputs.empty()) {
    j["inputs"] = nlohmann::json::array();
    for (const auto& input : model.inputs) j["inputs"].push_back(to_string(input));
  }
}

void from_json(const nlohmann::json& j, ModelSpec& model) {
  model.name = j.at("name").get<std::string>();
  model.path = j.at("path").get<std::string>();
  model.inputs_file = j.value("inputs_file", "");
  model.inputs.clear();
  for (const auto& text : j.value("inputs", std::vector<std::string>{})) {
    std::string error;
    auto input = parse_model_input(text, model.inputs.size(), error);
    if (!input) throw nlohmann::json::other_error::create(501, error, &j);
    model.inputs.push_back(*input);
  }
  model.train = j.value("train", false);
  model.steps = json_integer_or(j, "steps", 0);
  model.learning_rate = j.value("learning_rate", 0.01);
  const auto loss = loss_kind_from_string(j.value("loss", "auto"));
  if (!loss) throw nlohmann::json::other_error::create(501, "unknown loss; valid: " + std::string(kLossKindNames), &j);
  model.loss = *loss;
  model.per_op = j.value("per_op", true);
  model.callable = j.value("callable", "");
  model.python = j.value("python", "");
  model.search_path = j.value("search_path", "");
  model.parameters = j.value("parameters", false);
  model.compile_cache = j.value("compile_cache", "");
  model.loader_epochs = std::clamp(json_integer_or(j, "loader_epochs", kDefaultLoaderEpochs), 1, kMaxLoaderEpochs);
  model.loader_batches = std::clamp(json_integer_or(j, "loader_batches", kDefaultLoaderBatches), 1, kMaxLoaderBatches);
}

}  // namespace repro_audit
