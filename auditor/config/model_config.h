#pragma once
// The `models:` key of a config file, and the checks every model spec gets wherever it came from.
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "config/model_spec.h"
#include "config/yaml_reader.h"

namespace repro_audit {

// A list of maps: path (required), name, inputs (a file, or a list of NAME:DTYPE[SHAPE]), train,
// steps, learning_rate, loss, per_op. Relative paths are taken from `base_folder`. Errors name the
// file, line and valid choices.
std::vector<ModelSpec> read_models(const YamlReader& reader, const YAML::Node& node, const std::string& base_folder);

// Makes paths absolute (relative to `base_folder`) and checks the files exist and the options
// agree; throws UserError starting with `where`.
void check_model(ModelSpec& model, const std::string& base_folder, const std::string& where);

}  // namespace repro_audit
