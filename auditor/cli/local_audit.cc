#include "cli/local_audit.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "cli/interruption.h"
#include "cli/terminal.h"
#include "cli/torch_side.h"
#include "fingerprint/kept_cuda_facts.h"
#include "probe/probe_catalogue.h"
#include "python_runner/python_worker.h"
#include "supervisor/cpu_capacity.h"
#include "worker/device.h"
#include "worker/entry_points.h"
#include "worker/environment.h"

namespace repro_audit {

AuditOptions local_audit_options() {
  AuditOptions options;
  options.resolve_device = resolve_device;
  options.cores = usable_cores();
  options.documentation = registered_documentation();
  options.interpreter = [](const std::string& python) {
    return InterpreterStart{python_runner_command(python), python_runner_environment()};
  };
  // The front end's workers are repro-audit-torch's (cli/torch_side.h): said before anything starts. The
  // CUDA facts its first worker reads, kept where no driver loads, spare the next audit that worker.
  // repro-audit-cpu running a command in repro-audit-torch's place does the same: its CUDA facts are
  // repro-audit-torch's, kept (cli/torch_side.h command_fingerprint).
  if (!torch_side_linked() || running_as_cpu_side()) {
    options.torch_program = torch_program();
    options.kept_cuda_facts = [](const std::string& program) { return kept_cuda_facts(program, environ); };
  }
  options.environment = command_fingerprint;
  return options;
}

AuditOptions command_line_audit_options(const std::string& journal, const std::string& resume) {
  AuditOptions options = local_audit_options();
  options.journal = resume.empty() ? journal : resume;
  options.resume = !resume.empty();
  options.stop_requested = stop_requested;
  options.on_start = [](const std::string& folder) { print_message("journal: " + folder); };
  options.on_warning = [](const std::string& warning) { print_message("warning: " + warning); };
  return options;
}

}  // namespace repro_audit
