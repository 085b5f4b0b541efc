// The front end's side of cli/torch_side.h: no libtorch. The commands that need it are handed to
// repro-audit-torch before they run (cli/cli.cc, Command::needs_torch). What the front end's own
// commands ask of the torch side is answered here exactly as that side would: the probe catalogue
// built in (cli/embedded_catalogue.h), a device where no CUDA driver can be loaded, the fingerprint
// from repro-audit-torch itself. Anything else fails loudly, never with a made-up answer.
#include <fmt/format.h>

#include <stdexcept>

#include "cli/embedded_catalogue.h"
#include "cli/torch_side.h"
#include "common/user_error.h"
#include "models/model_checks.h"
#include "probe/probe_catalogue.h"
#include "probe/sensitivity_check.h"
#include "python_runner/python_worker.h"
#include "worker/device.h"
#include "worker/entry_points.h"
#include "worker/environment.h"

namespace repro_audit {
namespace {

[[noreturn]] void absent(const char* what) {
  throw std::logic_error(fmt::format(
      "{} needs libtorch, which the front end (repro-audit) does not load: this command should have been handed "
      "to repro-audit-torch",
      what));
}

}  // namespace

bool torch_side_linked() { return false; }

const DocumentedCatalogue& embedded_catalogue() {
  static const DocumentedCatalogue catalogue = [] {
    try {
      return catalogue_from_json(nlohmann::json::parse(kEmbeddedCatalogue));
    } catch (const std::exception& error) {
      throw std::logic_error(std::string("the probe catalogue built into this program cannot be read: ") +
                             error.what());
    }
  }();
  return catalogue;
}

Catalogue registered_catalogue() { return embedded_catalogue().catalogue; }
DocumentationSource registered_documentation() { return embedded_catalogue().documentation; }
Catalogue declared_catalogue() { absent("the probes' declarations of every release"); }

// Asked by the front end's audits only where no worker gave the fingerprint (every cell skipped, every
// worker killed): repro-audit-torch's own; where even that cannot be had, the report says why rather than
// the audit ending without one.
nlohmann::json environment_fingerprint() {
  std::string why;
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      return torch_side_fingerprint();
    } catch (const EnvironmentError& error) {
      why = error.what();
    }
  }
  return {{"unavailable", why}};
}

// As worker/device.cc answers where the CUDA runtime finds no device: the front end resolves a device
// only where no CUDA driver can be loaded (cli/torch_side.h); elsewhere the command went to the torch side.
ResolvedDevice resolve_device(const std::string& requested) {
  if (cuda_driver_loadable()) absent("resolving a device where a CUDA driver can be loaded");
  if (requested == "auto" || requested == "cpu") return {"cpu", ""};
  return {requested == "cuda" ? "cuda:0" : requested, "no CUDA device is usable on this machine (no GPU or no driver)"};
}
std::vector<VariantSensitivity> check_sensitivities(const std::vector<std::string>&, std::uint64_t, int) {
  absent("the sensitivity check");
}
void check_model_file_size(const std::string&, std::uint64_t, const std::string&, const std::string&) {
  absent("checking a model file");
}
void check_model_loads(const ModelSpec&, const std::string&, std::uint64_t) { absent("loading a model"); }
std::vector<std::string> python_runner_command(const std::string&) { absent("a py worker's command"); }
std::map<std::string, std::string> python_runner_environment() { absent("a py worker's environment"); }
std::string python_next_to_libtorch() { absent("finding the Python next to libtorch"); }
int worker_main() { absent("a worker"); }
int rank_main() { absent("a rank"); }
int export_inputs_main() { absent("exporting inputs"); }

}  // namespace repro_audit
