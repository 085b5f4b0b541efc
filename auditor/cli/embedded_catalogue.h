#pragma once
// The probe catalogue of the torch side, built into the front end (repro-audit): the build runs
// `repro-audit-torch catalogue-source` once that program is linked and compiles what it writes, so the
// front end knows every probe, variant and declaration of the probes beside it without loading libtorch
// (the declarations are those of the torch both were built against: probe/probe.cc).
#include "config/catalogue_json.h"

namespace repro_audit {

// The JSON of config/catalogue_json.h, in the generated source.
extern const char* const kEmbeddedCatalogue;

// Parsed once; throws std::logic_error when the built-in text is not a catalogue (a broken build).
const DocumentedCatalogue& embedded_catalogue();

}  // namespace repro_audit
