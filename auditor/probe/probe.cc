// Declaring probes: variants, the builder, the registry.
#include "probe/probe.h"

#include <torch/version.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

namespace repro_audit {
namespace {

std::vector<ProbeDefinition>& registry() {
  static std::vector<ProbeDefinition> probes;
  return probes;
}

}  // namespace

Variant::Variant(std::string name, std::string description) {
  info_.name = std::move(name);
  info_.description = std::move(description);
  info_.devices = {"cpu", "cuda"};
}

Variant::Variant(DType dtype, std::string description)
    : Variant(to_string(dtype), description.empty() ? long_name(dtype) : std::move(description)) {
  info_.dtype = dtype;
}

Variant& Variant::expects_cost(double ratio) {
  info_.expected_cost = ratio;
  return *this;
}

Variant& Variant::sensitivity_floor(double fraction) {
  info_.sensitivity_floor = fraction;
  return *this;
}

Variant& Variant::insensitive_by_design(std::string reason) {
  info_.insensitive_reason = std::move(reason);
  return *this;
}

Variant& Variant::dtype(DType dtype) {
  info_.dtype = dtype;
  return *this;
}

Variant& Variant::parameter(std::string name, std::string value) {
  info_.parameters[std::move(name)] = std::move(value);
  return *this;
}

Variant& Variant::weight(double milliseconds) {
  info_.weight = milliseconds;
  return *this;
}

Variant& Variant::documented_before(std::string until, std::string device_kind, Documented documented,
                                    std::string source) {
  info_.documented_before.push_back({std::move(until), std::move(device_kind), documented, std::move(source)});
  return *this;
}

Variant& Variant::documented(std::map<std::string, Documented> documented) {
  info_.documented = std::move(documented);
  return *this;
}

Variant& Variant::default_suite_on(std::vector<std::string> device_kinds, std::string reason) {
  info_.default_suite_devices = std::move(device_kinds);
  info_.default_suite_reason = std::move(reason);
  return *this;
}

Variant& Variant::default_suite_nowhere(std::string reason) {
  info_.default_suite_devices.clear();
  info_.default_suite_nowhere = true;
  info_.default_suite_reason = std::move(reason);
  return *this;
}

Variant& Variant::cuda_only(std::string reason) {
  info_.devices = {"cuda"};
  info_.unsupported_reason = std::move(reason);
  return *this;
}

ProbeBuilder::ProbeBuilder(std::string name) { definition_.info.name = std::move(name); }

ProbeBuilder& ProbeBuilder::describe(std::string description) {
  definition_.info.description = std::move(description);
  return *this;
}

ProbeBuilder& ProbeBuilder::variant(const Variant& variant) {
  definition_.info.variants.push_back(variant.info());
  return *this;
}

ProbeBuilder& ProbeBuilder::documented_before(std::string until, std::string device_kind, Documented documented,
                                              std::string source) {
  definition_.info.documented_before.push_back(
      {std::move(until), std::move(device_kind), documented, std::move(source)});
  return *this;
}

ProbeBuilder& ProbeBuilder::documented_as_cublas_product() {
  return documented({{"cpu", Documented::deterministic}, {"cuda", Documented::deterministic}})
      .documented_before("2.10", "cuda", Documented::cublas_workspace,
                         "torch.use_deterministic_algorithms required CUBLAS_WORKSPACE_CONFIG=:4096:8 or :16:8 for "
                         "torch.mm, mv and bmm on CUDA up to 2.9; 2.10 removed the check and the paragraph "
                         "(pytorch#161749)");
}

ProbeBuilder& ProbeBuilder::documented(std::map<std::string, Documented> documented) {
  definition_.info.documented = std::move(documented);
  return *this;
}

ProbeBuilder& ProbeBuilder::timeout(double seconds) {
  definition_.info.timeout_seconds = seconds;
  return *this;
}

ProbeBuilder& ProbeBuilder::weight(double milliseconds) {
  definition_.info.weight = milliseconds;
  return *this;
}

ProbeBuilder& ProbeBuilder::control_expects(VerdictKind verdict) {
  definition_.info.control_expects = verdict;
  return *this;
}

ProbeBuilder& ProbeBuilder::on_request_only() {
  definition_.info.in_default_suite = false;
  return *this;
}

ProbeBuilder& ProbeBuilder::invariance(Invariance invariance) {
  definition_.info.invariance = invariance;
  return *this;
}

ProbeBuilder& ProbeBuilder::collective() {
  definition_.info.collective = true;
  return *this;
}

ProbeBuilder& ProbeBuilder::accumulates(std::string output, std::string operand, double floor) {
  auto& accumulation = definition_.info.accumulation;
  accumulation.output = std::move(output);
  accumulation.operand = std::move(operand);
  accumulation.floor = floor;
  return *this;
}

ProbeBuilder& ProbeBuilder::accumulation_unchecked(std::string reason) {
  definition_.info.accumulation.unchecked = std::move(reason);
  return *this;
}

ProbeBuilder& ProbeBuilder::prepare(PrepareFunction prepare) {
  definition_.prepare = std::move(prepare);
  return *this;
}

ProbeBuilder& ProbeBuilder::python(std::string code) {
  definition_.info.python.code = std::move(code);
  return *this;
}

ProbeBuilder& ProbeBuilder::no_python(std::string reason) {
  definition_.info.python.none_reason = std::move(reason);
  return *this;
}

ProbeBuilder& ProbeBuilder::python_differs(std::string reason) {
  definition_.info.python.differs_reason = std::move(reason);
  return *this;
}

ProbeBuilder& ProbeBuilder::python_differs_on_cuda(std::string reason) {
  definition_.info.python.cuda_differs_reason = std::move(reason);
  return *this;
}

ProbeBuilder& ProbeBuilder::python_path(std::string note, std::string check) {
  definition_.info.python.paths.push_back({std::move(note), std::move(check)});
  return *this;
}

ProbeDefinition ProbeBuilder::build() const {
  const auto& info = definition_.info;
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument(fmt::format("probe '{}': {}", info.name, what));
  };
  if (info.name.empty()) fail("no name");
  if (info.variants.empty()) fail("no variant; add one with .variant(...)");
  if (!definition_.prepare) fail("no prepare function; add one with .prepare(...)");
  if (!(info.timeout_seconds > 0)) fail("the timeout must be positive");
  if (!(info.weight > 0)) fail("the weight must be positive");
  if (info.accumulation.checked() &&
      (info.accumulation.operand.empty() || !(info.accumulation.floor >= 0) || info.accumulation.floor > 1))
    fail("accumulates(...) needs an operand and a floor between 0 and 1");
  for (const auto& variant : info.variants)
    if (variant.weight && !(*variant.weight > 0))
      fail(fmt::format("variant '{}': the weight must be positive", variant.name));
  std::set<std::string> names;
  for (const auto& variant : info.variants)
    if (!names.insert(variant.name).second) fail(fmt::format("variant '{}' is declared twice", variant.name));
  if (info.python.code.empty() == info.python.none_reason.empty())
    fail("declare its Python form with .python(...), or why it has none with .no_python(...), not both");
  return definition_;
}

bool register_probe(const ProbeBuilder& probe) {
  auto definition = probe.build();
  if (find_registered_probe(definition.info.name))
    throw std::invalid_argument(fmt::format("probe '{}' is registered twice", definition.info.name));
  registry().push_back(std::move(definition));
  return true;
}

const std::vector<ProbeDefinition>& registered_probes() { return registry(); }

const ProbeDefinition* find_registered_probe(const std::string& name) {
  for (const auto& probe : registry())
    if (probe.info.name == name) return &probe;
  return nullptr;
}

Catalogue declared_catalogue() {
  Catalogue catalogue;
  for (const auto& probe : registry()) catalogue.push_back(probe.info);
  std::sort(catalogue.begin(), catalogue.end(), [](const ProbeInfo& a, const ProbeInfo& b) {
    return a.in_default_suite != b.in_default_suite ? a.in_default_suite : a.name < b.name;
  });
  return catalogue;
}

Catalogue registered_catalogue() {
  auto catalogue = declared_catalogue();
  // The torch this binary runs with: it was built against it, and a worker is this binary.
  resolve_documentation(catalogue, TORCH_VERSION);
  return catalogue;
}

DocumentationSource registered_documentation() {
  Catalogue none;
  return resolve_documentation(none, TORCH_VERSION);
}

}  // namespace repro_audit
