#include "config/model_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <filesystem>

#include "common/user_error.h"
#include "common/input_file.h"

namespace repro_audit {
namespace {

const std::vector<std::string> kModelKeys = {"path",          "name",          "inputs",        "train",    "steps",
                                             "learning_rate", "loss",          "per_op",        "callable", "python",
                                             "parameters",    "loader_epochs", "loader_batches"};

bool boolean(const YamlReader& reader, const YAML::Node& node, const std::string& what) {
  const auto text = reader.scalar(node, what);
  if (text == "true" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "no" || text == "off") return false;
  reader.fail(node, fmt::format("{} must be true or false, not '{}'", what, text));
}

ModelSpec read_model(const YamlReader& reader, const YAML::Node& node, const std::string& base_folder) {
  if (!node.IsMap()) reader.fail(node, fmt::format("a model must be a map of: {}", fmt::join(kModelKeys, ", ")));
  ModelSpec model;
  bool has_path = false;
  for (const auto& entry : node) {
    const auto key = reader.scalar(entry.first, "a model key");
    const auto& value = entry.second;
    if (key == "path") {
      model.path = reader.scalar(value, "path");
      has_path = true;
    } else if (key == "name") {
      model.name = reader.scalar(value, "name");
      if (model.name.empty() || model.name != model_name_from_path(model.name + ".x"))
        reader.fail(value, fmt::format("model name '{}' may hold only letters, digits, '_' and '-'", model.name));
    } else if (key == "inputs") {
      if (value.IsScalar()) {
        model.inputs_file = value.Scalar();
      } else if (value.IsSequence()) {
        for (const auto& item : value) {
          std::string error;
          auto input = parse_model_input(reader.scalar(item, "an input"), model.inputs.size(), error);
          if (!input) reader.fail(item, error);
          model.inputs.push_back(*input);
        }
      } else {
        reader.fail(value, "inputs must be a file written by torch.save, or a list of NAME:DTYPE[SHAPE]");
      }
    } else if (key == "train") {
      model.train = boolean(reader, value, "train");
    } else if (key == "steps") {
      const auto text = reader.scalar(value, "steps");
      if (text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos)
        reader.fail(value, fmt::format("steps must be a whole number from 0 to 1000, not '{}'", text));
      model.steps = std::stoi(text);
      if (model.steps > 1000) reader.fail(value, "steps must be from 0 to 1000");
    } else if (key == "learning_rate") {
      const auto text = reader.scalar(value, "learning_rate");
      try {
        std::size_t used = 0;
        model.learning_rate = std::stod(text, &used);
        if (used != text.size() || !(model.learning_rate > 0 && model.learning_rate < 1e6)) throw std::out_of_range("");
      } catch (const std::exception&) {
        reader.fail(value, fmt::format("learning_rate must be a positive number, not '{}'", text));
      }
    } else if (key == "loss") {
      const auto loss = loss_kind_from_string(reader.scalar(value, "loss"));
      if (!loss) reader.fail(value, fmt::format("loss must be one of: {}", kLossKindNames));
      model.loss = *loss;
    } else if (key == "callable") {
      model.callable = reader.scalar(value, "callable");
    } else if (key == "python") {
      model.python = reader.scalar(value, "python");
    } else if (key == "parameters") {
      model.parameters = boolean(reader, value, "parameters");
    } else if (key == "per_op") {
      model.per_op = boolean(reader, value, "per_op");
    } else if (key == "loader_epochs" || key == "loader_batches") {
      const auto text = reader.scalar(value, key);
      const int most = key == "loader_epochs" ? kMaxLoaderEpochs : kMaxLoaderBatches;
      int number = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
      if (error != std::errc() || end != text.data() + text.size() || number < 1 || number > most)
        reader.fail(value, fmt::format("{} must be a whole number from 1 to {}, not '{}'", key, most, text));
      (key == "loader_epochs" ? model.loader_epochs : model.loader_batches) = number;
    } else {
      reader.fail(entry.first, fmt::format("unknown model key '{}'; valid keys: {}", key, fmt::join(kModelKeys, ", ")));
    }
  }
  if (!has_path && model.callable.empty())
    reader.fail(node, "a model needs a path (a TorchScript file or an AOTInductor .pt2 package) or a callable");
  try {
    check_model(model, base_folder, "");
  } catch (const UserError& error) {
    reader.fail(node, error.what());
  }
  return model;
}

// "" when the path cannot be made absolute (empty, or the current folder is gone).
std::string absolute(const std::string& path, const std::string& base_folder) {
  if (path.empty()) return "";
  std::filesystem::path p(path);
  if (p.is_relative() && !base_folder.empty()) p = std::filesystem::path(base_folder) / p;
  std::error_code error;
  const auto made = std::filesystem::absolute(p, error);
  return error ? "" : made.lexically_normal().string();
}

// Why `path` is no file to load ("does not exist", "is a FIFO, not a regular file"), or "".
std::string file_problem(const std::string& path) { return path.empty() ? "does not exist" : input_file_problem(path); }

// A py cell's callable: its spelling, its file when it names one, the folder its module is found from.
void check_python_model(ModelSpec& model, const std::string& base_folder, const std::string& prefix) {
  if (const auto problem = callable_problem(model.callable); !problem.empty()) throw UserError(prefix + problem);
  const auto module = model.callable.substr(0, model.callable.rfind(':'));
  const auto attribute = model.callable.substr(model.callable.rfind(':') + 1);
  model.search_path = absolute(base_folder.empty() ? "." : base_folder, "");
  if (module.size() > 3 && module.ends_with(".py")) {
    model.path = absolute(module, base_folder);
    if (const auto problem = file_problem(model.path); !problem.empty())
      throw UserError(fmt::format("{}file '{}' {}", prefix, module, problem));
    model.search_path = std::filesystem::path(model.path).parent_path().string();
  } else {
    model.path = "";
  }
  if (model.name.empty())
    model.name = model_name_from_path(std::filesystem::path(module).stem().string() + "-" + attribute + ".x");
  if (!model.python.empty() && model.python.find('/') != std::string::npos)
    model.python = absolute(model.python, base_folder);
}

}  // namespace

std::vector<ModelSpec> read_models(const YamlReader& reader, const YAML::Node& node, const std::string& base_folder) {
  if (!node.IsSequence() || node.size() == 0) reader.fail(node, "models must be a non-empty list of models");
  std::vector<ModelSpec> models;
  for (const auto& item : node) {
    models.push_back(read_model(reader, item, base_folder));
    for (std::size_t i = 0; i + 1 < models.size(); ++i)
      if (models[i].name == models.back().name)
        reader.fail(item, fmt::format("two models are named '{}'; give each its own name:", models.back().name));
  }
  return models;
}

void check_model(ModelSpec& model, const std::string& base_folder, const std::string& where) {
  const auto prefix = where.empty() ? std::string() : where + ": ";
  if (is_python_model(model)) {
    check_python_model(model, base_folder, prefix);
    return;
  }
  if (model.path.empty())
    throw UserError(prefix + "a model needs a path (a TorchScript file or an AOTInductor package)");
  const auto given = model.path;
  model.path = absolute(model.path, base_folder);
  if (const auto problem = file_problem(model.path); !problem.empty())
    throw UserError(fmt::format("{}model file '{}' {}", prefix, given, problem));
  if (model.name.empty()) model.name = model_name_from_path(model.path);
  if (!model.inputs_file.empty()) {
    const auto given_inputs = model.inputs_file;
    model.inputs_file = absolute(model.inputs_file, base_folder);
    if (const auto problem = file_problem(model.inputs_file); !problem.empty())
      throw UserError(fmt::format("{}inputs file '{}' {}", prefix, given_inputs, problem));
    if (!model.inputs.empty()) throw UserError(prefix + "give the inputs as a file or as NAME:DTYPE[SHAPE], not both");
  }
  if (model.inputs_file.empty() && model.inputs.empty())
    throw UserError(prefix + "the model needs inputs: a file written by torch.save (--inputs FILE) or " +
                    "NAME:DTYPE[SHAPE] for each (--input x:f32[4,8])");
  if (model.steps > 0) model.train = true;  // SGD steps follow a backward pass
}

}  // namespace repro_audit
