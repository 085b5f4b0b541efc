#pragma once
#include <string>

#include "audit/audit.h"

namespace repro_audit {

// Audit options wired to this binary's torch side: which device `auto` means here, and the
// environment fingerprint.
AuditOptions local_audit_options();

// The same for an audit started from the command line: its journal (or the one to resume), stopped
// by Ctrl-C, the journal's folder and warnings told on stderr.
AuditOptions command_line_audit_options(const std::string& journal, const std::string& resume);

}  // namespace repro_audit
