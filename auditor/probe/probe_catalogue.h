#pragma once
// The catalogue of the probes linked into this program, for code that needs their names, variants
// and declarations but not torch (the CLI): probe.h holds the rest, with torch.
#include "config/catalogue.h"
#include "config/documentation.h"

namespace repro_audit {

// Every declaration as the documentation of the torch this program runs with has it.
Catalogue registered_catalogue();
// Which torch's documentation that is (the report records it).
DocumentationSource registered_documentation();
// The declarations as the probes make them, every release's (resolve_documentation picks one's).
Catalogue declared_catalogue();

}  // namespace repro_audit
