#pragma once
// The probe catalogue as JSON: the torch side writes its declarations so (at build time, for the front end
// that runs audits without loading libtorch: cli/embedded_catalogue.h), and reads them back whole, every
// field, or refuses text that is not such a catalogue.
#include <nlohmann/json.hpp>

#include "config/catalogue.h"
#include "config/documentation.h"

namespace repro_audit {

// The catalogue and which torch's documentation its declarations are.
struct DocumentedCatalogue {
  Catalogue catalogue;
  DocumentationSource documentation;
};

nlohmann::json catalogue_to_json(const DocumentedCatalogue& documented);
// Throws std::invalid_argument naming the field when `json` is not what catalogue_to_json writes.
DocumentedCatalogue catalogue_from_json(const nlohmann::json& json);

}  // namespace repro_audit
