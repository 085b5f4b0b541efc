#pragma once
#include "audit/audit.h"

namespace repro_audit {

// Audit options wired to this binary's torch side: which device `auto` means here, and the
// environment fingerprint.
AuditOptions local_audit_options();

}  // namespace repro_audit
