// The environment as labelled fields: a fingerprint's facts as every printer shows them and the
// platform compares them (report/text_format.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/escape.h"
#include "report/text_format.h"

namespace repro_audit {
using nlohmann::json;
namespace {

// A fingerprint's value as one line: it comes from another host's report, and every printer shows it.
std::string text_of(const json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return terminal_text(value.get<std::string>());
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

const json& field(const json& object, const char* name) {
  static const json absent;
  if (!object.is_object()) return absent;
  auto it = object.find(name);
  return it == object.end() ? absent : *it;
}

// CUDA encodes 1000 * major + 10 * minor: 13000 is 13.0, 12040 is 12.4.
std::string cuda_version(const json& value) {
  if (!value.is_number_integer()) return text_of(value);
  const auto v = value.get<std::int64_t>();
  if (v <= 0) return "none";
  return fmt::format("{}.{}", v / 1000, v % 1000 / 10);
}

// cuDNN 9 encodes 10000 * major + 100 * minor + patch (92400 is 9.24.0); cuDNN 8 used 1000 * major.
std::string cudnn_version(const json& value) {
  if (!value.is_number_integer()) return text_of(value);
  const auto v = value.get<std::int64_t>();
  if (v >= 90000) return fmt::format("{}.{}.{}", v / 10000, v % 10000 / 100, v % 100);
  return fmt::format("{}.{}.{}", v / 1000, v % 1000 / 100, v % 100);
}

std::string yes_no(const json& value) {
  if (!value.is_boolean()) return text_of(value);
  return value.get<bool>() ? "yes" : "no";
}

std::string on_off(const json& value) {
  if (!value.is_boolean()) return text_of(value);
  return value.get<bool>() ? "on" : "off";
}

// GiB with one decimal: the marketing size ("80GB") is in the name already.
std::string gibibytes(const json& value) {
  if (!value.is_number()) return text_of(value);
  return fmt::format("{:.1f} GiB", value.get<double>() / (1024.0 * 1024.0 * 1024.0));
}

// "NVIDIA H100 80GB HBM3 (132 SMs, cc 9.0)" per device; "none" for a recorded empty list.
std::string gpus(const json& cuda) {
  std::vector<std::string> names;
  const auto& devices = field(cuda, "devices");
  if (!devices.is_array()) return "";
  if (devices.empty()) return "none";
  for (const auto& device : devices) {
    std::vector<std::string> details;
    if (const auto& sm_count = field(device, "sm_count"); !sm_count.is_null())
      details.push_back(fmt::format("{} SMs", text_of(sm_count)));
    if (const auto& capability = field(device, "compute_capability"); !capability.is_null())
      details.push_back("cc " + text_of(capability));
    auto name = text_of(field(device, "name"));
    if (!details.empty()) name += fmt::format(" ({})", fmt::join(details, ", "));
    names.push_back(name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// One value per device, "?" where a device lacks the key; "" when none has it (not recorded, e.g.
// ECC without NVML).
std::string device_values(const json& cuda, const char* key, std::string (*text)(const json&)) {
  const auto& devices = field(cuda, "devices");
  if (!devices.is_array()) return "";
  std::vector<std::string> values;
  bool recorded = false;
  for (const auto& device : devices) {
    const auto& value = field(device, key);
    recorded = recorded || !value.is_null();
    values.push_back(value.is_null() ? "?" : text(value));
  }
  return recorded ? fmt::format("{}", fmt::join(values, ", ")) : "";
}

// "AuthenticAMD family 25 model 17 stepping 1": what tells two CPUs of one model name apart.
std::string cpu_id(const json& environment) {
  std::vector<std::string> parts;
  if (const auto& vendor = field(environment, "cpu_vendor"); !vendor.is_null()) parts.push_back(text_of(vendor));
  for (const auto& [word, key] :
       {std::pair{"family", "cpu_family"}, {"model", "cpu_model"}, {"stepping", "cpu_stepping"}})
    if (const auto& value = field(environment, key); !value.is_null())
      parts.push_back(fmt::format("{} {}", word, text_of(value)));
  return fmt::format("{}", fmt::join(parts, " "));
}

EnvironmentField scalar_field(std::string label, std::string value) {
  EnvironmentField result;
  result.label = std::move(label);
  result.value = std::move(value);
  return result;
}

// A list compared as a set: its order carries no meaning (flags, capabilities).
EnvironmentField set_field(const char* label, std::vector<std::string> members, const char* separator) {
  EnvironmentField result;
  result.label = label;
  result.is_set = true;
  result.value = members.empty() ? "none" : fmt::format("{}", fmt::join(members, separator));
  result.members = std::move(members);
  return result;
}

EnvironmentField list_field(const char* label, const json& list) {
  if (!list.is_array()) return scalar_field(label, text_of(list));
  std::vector<std::string> members;
  for (const auto& item : list) members.push_back(text_of(item));
  return set_field(label, std::move(members), " ");
}

}  // namespace

std::vector<EnvironmentField> environment_fields(const json& environment) {
  const auto& cuda = field(environment, "cuda");
  auto text = [&](const char* key) { return text_of(field(environment, key)); };
  std::vector<EnvironmentField> fields = {
      scalar_field("torch", text("torch")),
      scalar_field("torch git", text("torch_git")),
      scalar_field("torch CUDA build", yes_no(field(environment, "torch_cuda_build"))),
      scalar_field("Python", text("python")),  // py cells' interpreter and the torch it imports
      scalar_field("Python torch", text("python_torch")),
      scalar_field("Python torch path", text("python_torch_path")),
      scalar_field("Python xxhash", text("python_xxhash")),
      scalar_field("test switches", text("test_switches")),
      scalar_field("CUDA runtime", cuda_version(field(cuda, "runtime"))),
      scalar_field("CUDA compiled runtime", cuda_version(field(cuda, "compiled_runtime"))),
      scalar_field("CUDA driver", cuda_version(field(cuda, "driver"))),
      scalar_field("CUDA available", yes_no(field(cuda, "available"))),
      scalar_field("CUDA unavailable", text_of(field(cuda, "reason"))),
      scalar_field("cuDNN", cudnn_version(field(cuda, "cudnn"))),
      scalar_field("cuBLAS", text_of(field(cuda, "cublas"))),
      scalar_field("NCCL", text_of(field(cuda, "nccl"))),
      scalar_field("GPU", gpus(cuda)),
      scalar_field("GPU memory", device_values(cuda, "memory_bytes", gibibytes)),
      scalar_field("GPU ECC", device_values(cuda, "ecc", on_off)),
      scalar_field("GPU MIG", device_values(cuda, "mig", on_off)),
      scalar_field("NVML", text_of(field(cuda, "nvml"))),
      scalar_field("NVML unavailable", text_of(field(cuda, "nvml_unavailable"))),
      scalar_field("CPU", text("cpu")),
      scalar_field("CPU id", cpu_id(environment)),
      list_field("CPU flags", field(environment, "cpu_flags")),
      scalar_field("machine", text("machine")),
      scalar_field("ATen capability", text("aten_cpu_capability")),
      list_field("ATen capabilities", field(environment, "aten_cpu_capabilities")),
      scalar_field("BLAS", text("blas")),
      scalar_field("MKL", text("mkl")),
      scalar_field("oneDNN", text("onednn")),
      scalar_field("OpenMP", text("openmp")),
      scalar_field("threads", text("threads")),
      scalar_field("interop threads", text("interop_threads")),
      scalar_field("logical CPUs", text("logical_cpus")),
  };
  const auto& variables = field(environment, "numerics_environment");
  if (variables.is_object())
    for (const auto& [name, value] : variables.items())
      fields.push_back(scalar_field(std::string(kVariableLabelPrefix) + terminal_text(name), text_of(value)));
  fields.push_back(scalar_field("OS", text("os")));
  fields.push_back(scalar_field("tool", text("tool_version")));
  fields.push_back(scalar_field("fingerprint", text("fingerprint")));
  // Where each fact came from (`sources`) is no fact about the machine: `repro-audit env --text` shows it.
  return fields;
}

}  // namespace repro_audit
