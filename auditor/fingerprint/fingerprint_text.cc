#include "fingerprint/fingerprint_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/json_number.h"

namespace repro_audit {
namespace {

using nlohmann::json;

// Top-level keys in reading order, with their labels; keys not listed follow under their own name.
using Labels = std::vector<std::pair<std::string, std::string>>;

const Labels kLabels = {{"fingerprint", "fingerprint format"},
                        {"tool_version", "repro-audit"},
                        {"torch", "torch"},
                        {"torch_git", "torch git"},
                        {"torch_cuda_build", "torch CUDA build"},
                        {"python", "Python"},
                        {"python_torch", "Python torch"},
                        {"python_torch_path", "Python torch path"},
                        {"python_xxhash", "Python xxhash"},
                        {"test_switches", "test switches"},
                        {"blas", "BLAS"},
                        {"mkl", "MKL"},
                        {"onednn", "oneDNN"},
                        {"openmp", "OpenMP"},
                        {"cpu", "CPU"},
                        {"cpu_vendor", "CPU vendor"},
                        {"cpu_family", "CPU family"},
                        {"cpu_model", "CPU model"},
                        {"cpu_stepping", "CPU stepping"},
                        {"cpu_flags", "CPU flags"},
                        {"aten_cpu_capability", "ATen capability"},
                        {"aten_cpu_capabilities", "ATen capabilities runnable"},
                        {"logical_cpus", "logical CPUs"},
                        {"threads", "threads"},
                        {"interop_threads", "interop threads"},
                        {"os", "OS"},
                        {"machine", "machine"},
                        {"numerics_environment", "numerics environment"},
                        {"cuda", "CUDA"}};

const Labels kCudaLabels = {{"available", "CUDA available"},
                            {"reason", "CUDA unavailable because"},
                            {"compiled_runtime", "CUDA compiled runtime"},
                            {"runtime", "CUDA runtime"},
                            {"driver", "CUDA driver"},
                            {"cudnn", "cuDNN"},
                            {"cublas", "cuBLAS"},
                            {"nccl", "NCCL"},
                            {"nvml", "NVML driver"},
                            {"nvml_unavailable", "NVML"},
                            {"devices", "GPUs"}};

bool labelled(const Labels& labels, const std::string& key) {
  return std::any_of(labels.begin(), labels.end(), [&](const auto& known) { return known.first == key; });
}

std::string value_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  if (value.is_array()) {
    std::string text;
    for (const auto& item : value) {
      if (!text.empty()) text += ' ';
      text += value_text(item);
    }
    return text.empty() ? "(none)" : text;
  }
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string device_text(const json& device) {
  std::string text = device.value("name", "?") + ", cc " + device.value("compute_capability", "?") + ", " +
                     std::to_string(json_integer_or(device, "sm_count", 0)) + " SMs";
  if (device.contains("memory_bytes"))
    text += fmt::format(", {:.1f} GiB", device["memory_bytes"].get<double>() / (1024.0 * 1024.0 * 1024.0));
  if (device.contains("ecc")) text += device["ecc"].get<bool>() ? ", ECC on" : ", ECC off";
  if (device.contains("mig")) text += device["mig"].get<bool>() ? ", MIG on" : ", MIG off";
  return text;
}

void add_cuda_lines(const json& cuda, const json& sources, std::vector<FingerprintLine>& lines) {
  const auto source = [&](const std::string& key) { return sources.value("cuda." + key, "not recorded"); };
  for (const auto& [key, label] : kCudaLabels) {
    if (!cuda.contains(key)) continue;
    if (key == "devices") {
      for (std::size_t index = 0; index < cuda[key].size(); ++index)
        lines.push_back({"GPU " + std::to_string(index), device_text(cuda[key][index]), source(key)});
      if (cuda[key].empty()) lines.push_back({label, "(none)", source(key)});
    } else {
      const auto value = value_text(cuda[key]);
      lines.push_back({label, key == "nvml_unavailable" ? "unavailable: " + value : value, source(key)});
    }
  }
  for (const auto& [key, value] : cuda.items())
    if (!labelled(kCudaLabels, key)) lines.push_back({"cuda." + key, value_text(value), source(key)});
}

}  // namespace

std::vector<FingerprintLine> fingerprint_lines(const json& fingerprint) {
  std::vector<FingerprintLine> lines;
  if (!fingerprint.is_object()) return lines;
  const auto sources = fingerprint.value("sources", json::object());
  const auto source = [&](const std::string& key) { return sources.value(key, "not recorded"); };
  const auto add = [&](const std::string& key, const std::string& label) {
    const auto& value = fingerprint[key];
    if (key == "cuda" && value.is_object()) return add_cuda_lines(value, sources, lines);
    if (key == "numerics_environment" && value.is_object()) {
      for (const auto& [name, setting] : value.items())
        lines.push_back({"env " + name, value_text(setting), source(key)});
      if (value.empty()) lines.push_back({label, "(none set)", source(key)});
      return;
    }
    lines.push_back({label, value_text(value), source(key)});
  };
  for (const auto& [key, label] : kLabels)
    if (fingerprint.contains(key)) add(key, label);
  for (const auto& [key, value] : fingerprint.items())
    if (key != "sources" && !labelled(kLabels, key)) add(key, key);
  return lines;
}

std::string fingerprint_text(const json& fingerprint) {
  const auto lines = fingerprint_lines(fingerprint);
  std::size_t label_width = 0, value_width = 0;
  // Long values (the CPU flags) would push every source far right: they do not set the column.
  constexpr std::size_t kValueColumnLimit = 40;
  for (const auto& line : lines) {
    label_width = std::max(label_width, line.label.size());
    if (line.value.size() <= kValueColumnLimit) value_width = std::max(value_width, line.value.size());
  }
  std::string text;
  for (const auto& line : lines)
    text += fmt::format("{:<{}}  {:<{}}  {}\n", line.label, label_width, line.value, value_width, line.source);
  return text;
}

}  // namespace repro_audit
