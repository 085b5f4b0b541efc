#pragma once
// What PyTorch documents changes from release to release (MaxPool3d's CUDA backward gained a
// deterministic implementation; cumsum and kthvalue moved from one list to the other). A probe
// declares what the newest releases document and, for each change, what held before it
// (DocumentedBefore); an audit compares its cells with the declarations of the torch it runs, and
// its report says which torch's documentation that was.
#include <string>

#include "config/catalogue.h"

namespace repro_audit {

// The newest torch release whose documentation the probes' declarations were checked against. A newer
// torch is compared with these, the newest declarations, and the report says so.
inline constexpr const char* kNewestDocumentedTorch = "2.15";

// Which torch's documentation an audit compared its verdicts with.
struct DocumentationSource {
  std::string torch;              // the torch the audit ran, e.g. "2.11.0+cu130"; empty: unknown
  std::string release;            // the release whose declarations were used, e.g. "2.11"
  bool newer_than_known = false;  // torch is newer than kNewestDocumentedTorch

  // "torch 2.11's documentation", or says that a newer torch was compared with the newest declarations.
  std::string text() const;
};

// Orders release numbers by their numeric components: "2.11.0+cu130" is 2.11.0, "2.9" < "2.11", and a
// missing component counts as 0. Returns <0, 0 or >0.
int compare_torch_versions(const std::string& a, const std::string& b);

// The declarations that hold for `torch_version`: each probe's and variant's `documented`, rewritten by
// the entries of `documented_before` whose release is still ahead of it (the earliest such change
// wins: it is the one that was still to come).
DocumentationSource resolve_documentation(Catalogue& catalogue, const std::string& torch_version);

}  // namespace repro_audit
