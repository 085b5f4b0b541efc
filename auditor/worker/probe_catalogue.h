#pragma once
// The catalogue of the probes linked into this program, for code that needs their names, variants
// and declarations but not torch (the CLI): probe.h holds the rest, with torch.
#include "config/catalogue.h"

namespace repro_audit {

Catalogue registered_catalogue();

}  // namespace repro_audit
