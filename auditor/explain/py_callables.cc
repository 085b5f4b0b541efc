#include "explain/py_callables.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/user_error.h"
#include "config/model_config.h"
#include "plan/cell_key.h"

namespace repro_audit {
namespace {

// "make" of "train.py:make" or "package.train:make".
std::string callable_name(const std::string& callable) { return callable.substr(callable.rfind(':') + 1); }

// The first key of a py cell of `model` in the snapshot; "" when it has none.
std::string first_cell(const Snapshot& snapshot, const ModelSpec& model) {
  const auto probe = model_probe_name(model);
  for (const auto& cell : snapshot.cells)
    if (const auto parsed = parse_cell_key(cell.key); parsed && parsed->probe == probe) return cell.key;
  return "";
}

}  // namespace

std::vector<ModelSpec> py_models_named_by_user(const Snapshot& snapshot, const std::string& python,
                                               const std::vector<std::string>& callables) {
  auto models = snapshot.models;
  std::vector<bool> used(callables.size(), false);
  for (auto& model : models) {
    if (!is_python_model(model)) continue;
    const auto key = first_cell(snapshot, model);
    if (key.empty()) continue;
    const auto name = callable_name(model.callable);
    if (python.empty() || callables.empty())
      throw UserError(fmt::format(
          "{}: the py cell {} needs --python PYTHON and --callable FILE.py:{} (or MODULE:{}) to be re-run; explain "
          "never runs the interpreter ({}) or the code ({}) that a report names",
          snapshot.source, key, name, name, model.python, model.callable));
    std::size_t match = callables.size();
    for (std::size_t i = 0; i < callables.size(); ++i)
      if (callable_name(callables[i]) == name) match = i;
    if (match == callables.size())
      throw UserError(fmt::format("--callable {}: the report's py cell {} runs the callable '{}' ({}), not {}",
                                  fmt::join(callables, ", "), key, name, model.callable,
                                  callables.size() == 1 ? "'" + callable_name(callables[0]) + "'" : "these"));
    used[match] = true;
    model.callable = callables[match];
    model.path.clear();
    model.python = python;
    model.compile_cache.clear();
    check_model(model, "", "--callable " + callables[match]);
  }
  for (std::size_t i = 0; i < callables.size(); ++i)
    if (!used[i])
      throw UserError(fmt::format("--callable {}: no py cell of {} runs a callable named '{}'", callables[i],
                                  snapshot.source, callable_name(callables[i])));
  return models;
}

}  // namespace repro_audit
