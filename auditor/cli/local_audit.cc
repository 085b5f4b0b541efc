#include "cli/local_audit.h"

#include "worker/device.h"
#include "worker/environment.h"

namespace repro_audit {

AuditOptions local_audit_options() {
  AuditOptions options;
  options.resolve_device = resolve_device;
  options.environment = environment_fingerprint;
  return options;
}

}  // namespace repro_audit
