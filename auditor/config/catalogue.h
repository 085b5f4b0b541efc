#pragma once
// What the torch-free core knows of the probes: names, variants and what PyTorch documents for each.
// The torch side fills it from the probe registry; tests fill it by hand.
#include <map>
#include <string>
#include <vector>

namespace repro_audit {

// What PyTorch documents for an op on one device (see torch.use_deterministic_algorithms).
enum class Documented {
  deterministic,             // same bits every run, whatever the settings
  alternative_under_strict,  // may diverge by default; deterministic algorithms switch implementation
  raises_under_strict,       // may diverge by default; deterministic algorithms make it raise
  nondeterministic,          // diverges whatever the settings (the racy control)
  cublas_workspace,          // cuBLAS: deterministic under strict with CUBLAS_WORKSPACE_CONFIG set, else raises
};

const char* to_string(Documented documented);

struct VariantInfo {
  std::string name;
  std::string description;
  std::vector<std::string> devices;              // device kinds it runs on: "cpu", "cuda"
  std::string unsupported_reason;                // why it does not run on the devices it lacks
  std::map<std::string, Documented> documented;  // by device kind; overrides the probe's
};

struct ProbeInfo {
  std::string name;
  std::string description;
  std::vector<VariantInfo> variants;
  std::map<std::string, Documented> documented;  // by device kind
  bool in_default_suite = true;                  // fault controls are run only on request
  double timeout_seconds = 60;                   // per cell and process, all runs together
  std::string control_expects;                   // a control's required verdict in `selftest`; empty otherwise

  const VariantInfo* find_variant(const std::string& variant) const;
  // The variant's own declaration for the device, else the probe's, else deterministic.
  Documented documented_on(const std::string& variant, const std::string& device_kind) const;
};

using Catalogue = std::vector<ProbeInfo>;

const ProbeInfo* find_probe(const Catalogue& catalogue, const std::string& name);
std::vector<std::string> probe_names(const Catalogue& catalogue);

}  // namespace repro_audit
