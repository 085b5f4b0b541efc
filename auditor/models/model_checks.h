#pragma once
// What the CLI asks of a model file before an audit starts, without torch in its headers: the
// format, the size limits, and whether the model and its inputs load (model_runner.cc).
#include <cstdint>
#include <string>

#include "config/model_spec.h"

namespace repro_audit {

enum class ModelFormat { torchscript, aoti_package };

// What the file is, from its archive entries; throws std::invalid_argument saying what it is not.
ModelFormat model_format(const std::string& path);

// Throws std::invalid_argument naming `option` when the file at `path` is larger than `limit` bytes,
// or is a zip archive whose records add up, uncompressed, to more: before anything reads them.
void check_model_file_size(const std::string& path, std::uint64_t limit, const std::string& what,
                           const std::string& option);

// Loads `model` and its inputs on `device` (a resolved device, e.g. "cpu") as a worker would; throws
// std::invalid_argument for a file that is not a model or inputs that do not fit its forward.
void check_model_loads(const ModelSpec& model, const std::string& device, std::uint64_t seed);

}  // namespace repro_audit
