#pragma once
// What the torch-free core knows of the probes: names, variants and what PyTorch documents for each.
// The torch side fills it from the probe registry; tests fill it by hand.
#include <algorithm>
#include <map>
#include <optional>
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
  unknown,                   // nothing documented: a user's model, whose ops PyTorch cannot speak for as a whole
  // Deterministic algorithms switch implementation, but warn_only keeps the default one and warns (once per
  // process: TORCH_WARN_ONCE); e.g. the flash and memory-efficient attention backward kernels on CUDA.
  alternative_unless_warn_only,
};

const char* to_string(Documented documented);
std::optional<Documented> documented_from_string(const std::string& text);

// What a cell turned out to be. Declared here, below verdict/, because the catalogue names it too:
// a control probe declares the verdict `selftest` requires of it (verdict/ depends on config/, not back).
// `invariant` and `varies` judge invariance probes: their runs agree, and the perturbed results do or
// do not equal the reference bit for bit.
enum class VerdictKind {
  deterministic,
  nondeterministic,
  warns,
  raises,
  unsupported,
  error,
  crashed,
  timeout,
  invariant,
  varies
};

const char* to_string(VerdictKind kind);
std::optional<VerdictKind> verdict_from_string(const std::string& text);
std::string verdict_names();  // "deterministic, nondeterministic, ...": every name, for an error

// What an invariance probe perturbs around its reference; `none` for a repeat-and-digest probe.
enum class Invariance { none, batch, layout, split };

const char* to_string(Invariance invariance);  // none | batch | layout | split
std::optional<Invariance> invariance_from_string(const std::string& text);
// The level an invariant verdict earns: "batch-invariant", "layout-invariant", "split-invariant".
std::string invariance_level(Invariance invariance);

// Which probes an audit without a probe list runs: repeat-and-digest, invariance, or both.
enum class ProbeKind { repeat, invariance, collective, all };

const char* to_string(ProbeKind kind);  // repeat | invariance | collective | all
std::optional<ProbeKind> probe_kind_from_string(const std::string& text);
inline constexpr const char* kProbeKindNames = "repeat, invariance, collective, all";

// The floating-point type a variant computes in; probe/probe.cc maps it to torch's.
enum class DType { f16, bf16, f32, f64 };

const char* to_string(DType dtype);  // f16 | bf16 | f32 | f64
const char* long_name(DType dtype);  // float16 | bfloat16 | float32 | float64, as torch spells them

// What PyTorch documented for an op on a device before the torch release `until` changed it; the
// declaration beside it holds from `until` on (config/documentation.h picks the one for the torch that
// runs). E.g. MaxPool3d's CUDA backward raised under deterministic algorithms before 2.13.
struct DocumentedBefore {
  std::string until;        // the release that changed it, e.g. "2.13"
  std::string device_kind;  // "cpu", "cuda"
  Documented documented;
  std::string source;  // where PyTorch says so: the documentation change or release note

  bool operator==(const DocumentedBefore&) const = default;
};

struct VariantInfo {
  std::string name;
  std::string description;
  std::vector<std::string> devices;               // device kinds it runs on: "cpu", "cuda"
  std::string unsupported_reason;                 // why it does not run on the devices it lacks
  std::map<std::string, Documented> documented;   // by device kind; overrides the probe's
  std::optional<DType> dtype;                     // typed parameters the probe reads from its context
  std::map<std::string, std::string> parameters;  // the rest, by name: e.g. mode=max
  std::optional<double> weight;                   // overrides the probe's weight
  std::optional<double> expected_cost;            // timing controls: strict's median over default's
  std::optional<double> sensitivity_floor;        // overrides the probe's AccumulationOrder::floor
  std::string insensitive_reason;                 // why its sensitivity check fails by design ("" when it should pass)
  // Device kinds whose default suite runs it (empty: every device it runs on). Elsewhere it runs only
  // when its probe is named: a path only one device's users take (Python's decomposition on CUDA).
  std::vector<std::string> default_suite_devices;
  std::string default_suite_reason;                 // why it is left out of the other devices' default suite
  std::vector<DocumentedBefore> documented_before;  // older releases' declarations, overriding the probe's

  bool default_suite_nowhere = false;  // run only when its probe is named, on every device (the reason above)

  bool operator==(const VariantInfo&) const = default;

  bool in_default_suite_on(const std::string& device_kind) const {
    if (default_suite_nowhere) return false;
    return default_suite_devices.empty() || std::find(default_suite_devices.begin(), default_suite_devices.end(),
                                                      device_kind) != default_suite_devices.end();
  }
};

// A path Python users take that this probe does not (a decomposition chosen in torch.nn.functional, a
// kernel registered from Python), and a Python expression that is true while it is so: the parity check
// (repro/parity.h) evaluates it with the pinned torch, so a note that went stale fails there.
// The notes describe the torch they were checked with (kPythonPathsCheckedWith): on an older torch a
// path may not exist yet (torch._native, a decomposition added later), which is said, not failed.
inline constexpr const char* kPythonPathsCheckedWith = "2.14";
struct PythonPath {
  std::string note;
  std::string check;

  bool operator==(const PythonPath&) const = default;
};

// The probe's op as Python spells it, for `repro-audit repro` (repro/python_script.h): the body of a
// function returning the outputs as a dict in the C++ order. In scope: torch, F (torch.nn.functional),
// device, dtype (the variant's, if it has one), each input the probe named (ProbeContext::input), on the
// device, each variant parameter as a string, and gradient(output, input, grad_output).
struct PythonForm {
  std::string code;            // empty: no Python form
  std::string none_reason;     // why there is none
  std::string differs_reason;  // why its bits can differ from the probe's: parity compares verdicts only
  // Why, on CUDA, neither its bits nor its verdict can be the probe's: parity does not compare it there.
  std::string cuda_differs_reason;
  std::vector<PythonPath> paths;

  bool operator==(const PythonForm&) const = default;
};

// Where a probe's result is a sum of contributions whose order a racing kernel, a thread count or an
// algorithm changes: the output, and the named input (ProbeContext::input) it is linear in, each
// element a contribution or a factor of one. The sensitivity check (probe/sensitivity.h) sums them in other orders and
// counts the output's elements whose bits change; fewer than `floor` of them and the probe's inputs
// could not show a reordering: a deterministic verdict of it would be vacuous.
struct AccumulationOrder {
  std::string output;  // empty: not checked
  std::string operand;
  double floor = 0.1;
  std::string unchecked;  // why an order-sensitive probe is not checked (its order is inside one kernel)

  bool checked() const { return !output.empty(); }

  bool operator==(const AccumulationOrder&) const = default;
};

struct ProbeInfo {
  std::string name;
  std::string description;
  std::vector<VariantInfo> variants;
  std::map<std::string, Documented> documented;  // by device kind: what the newest releases document
  bool in_default_suite = true;                  // fault controls are run only on request
  double timeout_seconds = 60;                   // per cell and process, all runs together
  std::optional<VerdictKind> control_expects;    // a control's required verdict in `selftest`
  Invariance invariance = Invariance::none;      // set for an invariance probe
  bool collective = false;                       // its cells run in `ranks` cooperating processes
  AccumulationOrder accumulation;
  // Expected milliseconds of one run on a CPU, to balance shards when no timings are given; a guide
  // (hosts differ by far more than these numbers do), not a promise.
  double weight = 1;
  PythonForm python;
  std::vector<DocumentedBefore> documented_before;  // what older releases documented (config/documentation.h)

  bool operator==(const ProbeInfo&) const = default;

  const VariantInfo* find_variant(const std::string& variant) const;
  // The variant's own declaration for the device, else the probe's, else deterministic.
  Documented documented_on(const std::string& variant, const std::string& device_kind) const;
  // The variant's weight, else the probe's.
  double weight_of(const std::string& variant) const;
};

using Catalogue = std::vector<ProbeInfo>;

const ProbeInfo* find_probe(const Catalogue& catalogue, const std::string& name);
bool is_of_kind(const ProbeInfo& probe, ProbeKind kind);
std::vector<std::string> probe_names(const Catalogue& catalogue);

}  // namespace repro_audit
