#include "runners/input_export.h"

#include <c10/util/Exception.h>
#include <torch/serialize.h>

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>

#include "apply/settings_apply.h"
#include "common/atomic_file.h"
#include "common/user_error.h"
#include "models/model_checks.h"
#include "models/model_inputs.h"
#include "models/model_runner.h"
#include "probe/probe.h"
#include "protocol/worker_protocol.h"
#include "recording/origin_capture.h"
#include "runners/cell_runner.h"

namespace repro_audit {
namespace {

std::string export_error_text(const std::exception& error) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&error);
  return c10_error ? c10_error->what_without_backtrace() : error.what();
}

// Tensors as a tuple, in order (repro.py names them): torch.load reads it with weights_only; a typed
// dict would need an allow-listed type tag.
// A file that cannot be written (a full disk, a read-only folder) is the environment's failure, not the
// cell's: it travels in the answer as "write_error" and ends the export (repro/export.cc).
struct WriteFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void save_tensors(const std::vector<at::Tensor>& tensors, const std::filesystem::path& path) {
  std::vector<c10::IValue> values(tensors.begin(), tensors.end());
  const auto bytes = torch::pickle_save(c10::ivalue::Tuple::create(std::move(values)));
  try {
    std::filesystem::create_directories(path.parent_path());
    write_file_atomically(path.string(), std::string(bytes.data(), bytes.size()));
  } catch (const std::filesystem::filesystem_error& error) {
    throw WriteFailure(fmt::format("{}: {}", error.path1().string(), error.code().message()));
  } catch (const UserError& error) {
    throw WriteFailure(error.what());
  }
}

nlohmann::json described(const std::string& name, const at::Tensor& tensor) {
  return {{"name", name}, {"dtype", c10::toString(tensor.scalar_type())}, {"sizes", tensor.sizes().vec()}};
}

}  // namespace

nlohmann::json export_model_cell(const Cell& cell, InputScheme scheme, const std::string& directory,
                                 std::int64_t origin_start) {
  nlohmann::json answer = {{"key", cell.key}};
  // A py cell's callable makes its own inputs when its script runs: nothing to save here.
  if (is_python_model(*cell.model)) {
    answer["inputs"] = nlohmann::json::array();
    return answer;
  }
  const auto seed = std::stoull(cell.settings.at("seed"));
  VariantInfo variant;
  variant.name = cell.variant;
  try {
    apply_cell_settings(cell.settings);
    // What the file is, by its archive (the one rule the worker runs it by): the script loads it so.
    answer["package"] = model_format(cell.model->path) == ModelFormat::aoti_package;
    ProbeContext context(at::Device(at::kCPU), seed, variant, nullptr, scheme);
    const auto inputs = load_model_inputs(*cell.model, context);
    std::vector<at::Tensor> tensors;
    answer["inputs"] = nlohmann::json::array();
    answer["named"] = nlohmann::json::array();
    const auto add = [&](const std::string& name, const c10::IValue& value) {
      if (!value.isTensor()) throw std::invalid_argument("an input that is not a tensor: " + name);
      tensors.push_back(value.toTensor().detach().to(at::kCPU));
      answer["inputs"].push_back(described(name, tensors.back()));
    };
    for (std::size_t i = 0; i < inputs.positional.size(); ++i) add(fmt::format("input{}", i), inputs.positional[i]);
    for (const auto& [name, value] : inputs.named) {
      add(name, value);
      answer["named"].push_back(name);
    }
    if (!directory.empty()) save_tensors(tensors, std::filesystem::path(directory) / "inputs.pt");
    answer["input_digest"] = context.input_digest();
    if (origin_start < 0 || directory.empty()) return answer;
    ProbeContext run_context(at::Device(at::kCPU), seed, variant, nullptr, scheme);
    const auto prepared = prepare_model(*cell.model, run_context);
    OriginCapture capture(origin_start);
    at::manual_seed(seed);
    prepared.run();
    const auto op = capture.captured();
    if (!op) {
      answer["origin_error"] = fmt::format("the run began fewer than {} ops", origin_start + 1);
    } else if (!op->unreproducible.empty()) {
      answer["origin_error"] = fmt::format("{}: {}", op->name, op->unreproducible);
    } else {
      save_tensors(op->tensors, std::filesystem::path(directory) / "origin" / "inputs.pt");
      nlohmann::json described_tensors = nlohmann::json::array();
      for (std::size_t i = 0; i < op->tensors.size(); ++i)
        described_tensors.push_back(described(fmt::format("T[{}]", i), op->tensors[i]));
      answer["origin"] = {
          {"name", op->name}, {"overload", op->overload}, {"arguments", op->arguments}, {"tensors", described_tensors}};
    }
  } catch (const WriteFailure& error) {
    answer["write_error"] = error.what();
  } catch (const std::exception& error) {
    answer["error"] = export_error_text(error);
  }
  return answer;
}

nlohmann::json export_probe_cell(const Cell& cell, InputScheme scheme, const std::string& directory) {
  nlohmann::json answer = {{"key", cell.key}};
  const auto* probe = find_registered_probe(cell.probe);
  const auto* variant = probe ? probe->info.find_variant(cell.variant) : nullptr;
  if (!variant) {
    answer["error"] = "this build has no probe variant " + cell.probe + "/" + cell.variant;
    return answer;
  }
  // Made on the CPU, as every probe makes them before moving them: the same inputs for every device, in
  // the shapes the probe takes on the cell's device (a probe may give CUDA more rows to race on).
  ProbeContext context(at::Device(at::kCPU), std::stoull(cell.settings.at("seed")), *variant, nullptr, scheme);
  try {
    context.shapes_as_on(at::Device(cell.device));
    apply_cell_settings(cell.settings);
    const OnlyInputs only_inputs;
    probe->prepare(context);
  } catch (const std::exception& error) {
    answer["error"] = export_error_text(error);
    return answer;
  }
  std::vector<at::Tensor> tensors;
  answer["inputs"] = nlohmann::json::array();
  for (const auto& [name, tensor] : context.named_inputs()) {
    tensors.push_back(tensor.to(at::kCPU));
    answer["inputs"].push_back(described(name, tensors.back()));
  }
  try {
    if (!directory.empty()) save_tensors(tensors, std::filesystem::path(directory) / "inputs.pt");
  } catch (const WriteFailure& error) {
    answer["write_error"] = error.what();
    return answer;
  }
  answer["input_digest"] = context.input_digest();
  return answer;
}

}  // namespace repro_audit
