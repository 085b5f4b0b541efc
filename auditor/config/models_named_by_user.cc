#include "config/models_named_by_user.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "common/user_error.h"
#include "config/model_config.h"

namespace repro_audit {
namespace {

// "make" of "train.py:make" or "package.train:make".
std::string callable_name(const std::string& callable) { return callable.substr(callable.rfind(':') + 1); }

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// The first of `cell_keys` that is a cell of `model` ("py.step-make/call@cpu|..."); "" when none is.
std::string first_cell(const std::vector<std::string>& cell_keys, const ModelSpec& model) {
  const auto prefix = model_probe_name(model) + "/";
  for (const auto& key : cell_keys)
    if (key.rfind(prefix, 0) == 0) return key;
  return "";
}

// The index in `given` that stands for `model`; given.size() when none does.
std::size_t match_of(const ModelSpec& model, const std::vector<std::string>& given) {
  for (std::size_t i = 0; i < given.size(); ++i) {
    if (is_python_model(model)
            ? callable_name(given[i]) == callable_name(model.callable)
            : file_name(given[i]) == file_name(model.path) || model_name_from_path(given[i]) == model.name)
      return i;
  }
  return given.size();
}

void name_python(ModelSpec& model, const std::string& key, const std::string& source, const CodeNamedByUser& named,
                 std::vector<bool>& used) {
  const auto name = callable_name(model.callable);
  if (named.python.empty() || named.callables.empty())
    throw UserError(fmt::format(
        "{}: the py cell {} needs --python PYTHON and --callable FILE.py:{} (or MODULE:{}) to be re-run; {} "
        "never runs the interpreter ({}) or the code ({}) that a report names",
        source, key, name, name, named.command, model.python, model.callable));
  const auto match = match_of(model, named.callables);
  if (match == named.callables.size())
    throw UserError(fmt::format("--callable {}: the report's py cell {} runs the callable '{}' ({}), not {}",
                                fmt::join(named.callables, ", "), key, name, model.callable,
                                named.callables.size() == 1 ? "'" + callable_name(named.callables[0]) + "'" : "these"));
  used[match] = true;
  model.callable = named.callables[match];
  model.path.clear();
  model.python = named.python;
  model.compile_cache.clear();
  check_model(model, "", "--callable " + named.callables[match]);
}

// The --inputs FILE of the same file name as the report's inputs file; "" when the model has none.
std::string name_inputs(const ModelSpec& model, const std::string& key, const std::string& source,
                        const CodeNamedByUser& named, std::vector<bool>& used) {
  if (model.inputs_file.empty()) return "";
  const auto name = file_name(model.inputs_file);
  const auto match = std::find_if(named.input_files.begin(), named.input_files.end(),
                                  [&](const std::string& given) { return file_name(given) == name; });
  if (match == named.input_files.end())
    throw UserError(
        fmt::format("{}: the model cell {} needs --inputs FILE naming its inputs (the file {} in the report); {} never "
                    "reads an inputs file that a report names (libtorch's unpickler reads it)",
                    source, key, model.inputs_file, named.command));
  used[static_cast<std::size_t>(match - named.input_files.begin())] = true;
  return *match;
}

void name_file(ModelSpec& model, const std::string& key, const std::string& source, const CodeNamedByUser& named,
               std::vector<bool>& used, std::vector<bool>& inputs_used) {
  const auto match = match_of(model, named.model_files);
  if (match == named.model_files.size())
    throw UserError(fmt::format(
        "{}: the model cell {} needs --model FILE naming its model ({}, the file {} in the report); {} never "
        "loads a model file that a report names (loading an AOTInductor package runs its code)",
        source, key, model.name, model.path, named.command));
  used[match] = true;
  model.path = named.model_files[match];
  auto where = "--model " + named.model_files[match];
  if (const auto inputs = name_inputs(model, key, source, named, inputs_used); !inputs.empty()) {
    model.inputs_file = inputs;
    where += " --inputs " + inputs;
  }
  check_model(model, "", where);
}

}  // namespace

std::vector<ModelSpec> models_named_by_user(std::vector<ModelSpec> models, const std::vector<std::string>& cell_keys,
                                            const std::string& source, const CodeNamedByUser& named) {
  std::vector<bool> callables_used(named.callables.size(), false), files_used(named.model_files.size(), false),
      inputs_used(named.input_files.size(), false);
  for (auto& model : models) {
    const auto key = first_cell(cell_keys, model);
    if (key.empty()) continue;
    if (!is_python_model(model))
      name_file(model, key, source, named, files_used, inputs_used);
    else if (named.runs_python)
      name_python(model, key, source, named, callables_used);
  }
  for (std::size_t i = 0; i < named.callables.size(); ++i)
    if (!callables_used[i])
      throw UserError(fmt::format("--callable {}: no py cell of {} runs a callable named '{}'", named.callables[i],
                                  source, callable_name(named.callables[i])));
  for (std::size_t i = 0; i < named.model_files.size(); ++i)
    if (!files_used[i])
      throw UserError(fmt::format("--model {}: no model cell of {} has a model of that file name or name",
                                  named.model_files[i], source));
  for (std::size_t i = 0; i < named.input_files.size(); ++i)
    if (!inputs_used[i])
      throw UserError(fmt::format("--inputs {}: no model cell of {} reads an inputs file of that file name",
                                  named.input_files[i], source));
  return models;
}

}  // namespace repro_audit
