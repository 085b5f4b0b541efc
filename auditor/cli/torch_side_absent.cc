// The front end's side of cli/torch_side.h: no libtorch. The commands that need it are handed to
// repro-audit-torch before they run (cli/cli.cc, Command::needs_torch), so nothing here is reached;
// if a command were routed wrongly, it fails loudly, never with a made-up answer.
#include <fmt/format.h>

#include <stdexcept>

#include "cli/torch_side.h"
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

Catalogue registered_catalogue() { absent("the probe catalogue"); }
DocumentationSource registered_documentation() { absent("the probes' documentation"); }
Catalogue declared_catalogue() { absent("the probe catalogue"); }
nlohmann::json environment_fingerprint() { absent("the environment fingerprint"); }
ResolvedDevice resolve_device(const std::string&) { absent("resolving a device"); }
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
