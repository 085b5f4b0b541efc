#pragma once
// The probe API: a probe declares its variants and what PyTorch documents with ProbeBuilder, and
// registers a prepare function that makes its inputs with a ProbeContext (probe/probe_context.h) and
// returns the op to run; the runner owns the rest (sweeping, seeding, settings, digests, timing,
// tracing).
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config/catalogue.h"
#include "probe/probe_catalogue.h"
#include "probe/probe_context.h"

namespace repro_audit {

using PrepareFunction = std::function<RunFunction(ProbeContext&)>;

struct ProbeDefinition {
  ProbeInfo info;
  PrepareFunction prepare;
};

// One variant of a probe. Its name is part of every cell key (baselines and journals refer to it):
// never rename one. Its typed parameters reach the probe through ProbeContext.
class Variant {
 public:
  Variant(std::string name, std::string description);
  // Named after its dtype ("f32") and, unless described, described by it ("float32").
  explicit Variant(DType dtype, std::string description = "");

  Variant& dtype(DType dtype);
  Variant& parameter(std::string name, std::string value);
  // What PyTorch documents for this variant where it differs from the probe, by device kind.
  Variant& documented(std::map<std::string, Documented> documented);
  // What PyTorch documented for this variant on `device_kind` before release `until` (see ProbeBuilder's).
  Variant& documented_before(std::string until, std::string device_kind, Documented documented, std::string source);
  Variant& weight(double milliseconds);  // overrides the probe's weight
  Variant& expects_cost(double ratio);   // a timing control: strict's median over default's
  // The share of its accumulated output's elements that must change under other orders, where the
  // probe's default does not fit (a max pool's gradient reaches few elements by nature: 0, any change).
  Variant& sensitivity_floor(double fraction);
  // Its inputs cannot show a reordering by the op's own shape (pooling windows that never overlap), and
  // why: its deterministic verdicts are still reported vacuous, and `selftest` does not fail on it.
  Variant& insensitive_by_design(std::string reason);
  // Exists only on CUDA (e.g. the cuDNN path); `reason` is what other devices report.
  Variant& cuda_only(std::string reason);
  // In the default suite only on these device kinds (its path is theirs); elsewhere run when its probe
  // is named. `reason` is what `list` says of the others.
  Variant& default_suite_on(std::vector<std::string> device_kinds, std::string reason);
  // In no device's default suite: run when its probe is named.
  Variant& default_suite_nowhere(std::string reason);

  const VariantInfo& info() const { return info_; }

 private:
  VariantInfo info_;
};

// Declares a probe, e.g.
//   register_probe(ProbeBuilder("cumsum").describe("...").variant(Variant(DType::f32)).prepare(prepare));
// Plain data and a function: registering never touches torch or a device, so it runs from a static
// initialiser (probes live in an OBJECT library so the linker keeps them).
class ProbeBuilder {
 public:
  explicit ProbeBuilder(std::string name);

  ProbeBuilder& describe(std::string description);
  ProbeBuilder& variant(const Variant& variant);
  // What PyTorch documents for the op, by device kind ("cpu", "cuda"); deterministic where absent.
  ProbeBuilder& documented(std::map<std::string, Documented> documented);
  // What PyTorch documented on `device_kind` before release `until` changed it to `documented(...)`'s
  // value, and where it says so; e.g. ("2.13", "cuda", Documented::raises_under_strict, "...").
  ProbeBuilder& documented_before(std::string until, std::string device_kind, Documented documented,
                                  std::string source);
  // A cuBLAS product (mm, mv, bmm on CUDA): deterministic on every device from torch 2.10; up to 2.9
  // deterministic algorithms raised on CUDA unless CUBLAS_WORKSPACE_CONFIG was :4096:8 or :16:8.
  ProbeBuilder& documented_as_cublas_product();
  ProbeBuilder& timeout(double seconds);  // per cell and process, all runs together; default 60
  // Expected milliseconds of one run on a CPU (default 1): balances `--shard` when no timings are given.
  ProbeBuilder& weight(double milliseconds);
  // A control: `selftest` runs it and requires this verdict.
  ProbeBuilder& control_expects(VerdictKind verdict);
  // Left out of the default suite; runs only when named (fault controls, test probes).
  ProbeBuilder& on_request_only();
  // An invariance probe (probe/invariance.h): its run returns the reference first, then the same
  // logical result under each perturbation of this kind.
  ProbeBuilder& invariance(Invariance invariance);
  // A collective probe: its cells run in `ranks` cooperating processes (runners/collective_cell.h), its
  // op reads ProbeContext::group().
  ProbeBuilder& collective();
  // Its result `output` sums contributions and is linear in the input named `operand`: the sensitivity
  // check (probe/sensitivity.h) measures it; fewer than `floor` of the output's elements changing under
  // other orders makes the probe insensitive.
  ProbeBuilder& accumulates(std::string output, std::string operand, double floor = 0.1);
  // Its order of accumulation lies inside one kernel, out of the check's reach, and why.
  ProbeBuilder& accumulation_unchecked(std::string reason);
  ProbeBuilder& prepare(PrepareFunction prepare);
  // Its op in Python (catalogue.h, PythonForm): one short template beside the C++ form.
  ProbeBuilder& python(std::string code);
  // No Python form, and why (e.g. a fault control that crashes on purpose).
  ProbeBuilder& no_python(std::string reason);
  // The Python form cannot give the probe's bits, and why: parity compares its verdict only.
  ProbeBuilder& python_differs(std::string reason);
  ProbeBuilder& python_differs_on_cuda(std::string reason);
  // A path Python users take that this probe does not, with its check (catalogue.h, PythonPath).
  ProbeBuilder& python_path(std::string note, std::string check);

  // Throws std::invalid_argument naming the probe when it has no variant, a variant name twice or
  // no prepare function (from a static initialiser: the program stops at start with the message).
  ProbeDefinition build() const;

 private:
  ProbeDefinition definition_;
};

bool register_probe(const ProbeBuilder& probe);
const std::vector<ProbeDefinition>& registered_probes();
const ProbeDefinition* find_registered_probe(const std::string& name);

}  // namespace repro_audit
