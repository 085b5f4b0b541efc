#pragma once
// The fingerprint as one line per fact (label, value, source) for people: `repro-audit env --text`.
// Reads the JSON, so it shows fingerprints of any version (old ones lack sources: "not recorded").
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace repro_audit {

struct FingerprintLine {
  std::string label;  // "ATen capability", "env ATEN_CPU_CAPABILITY", "GPU 0", "cuBLAS", ...
  std::string value;
  std::string source;
};

std::vector<FingerprintLine> fingerprint_lines(const nlohmann::json& fingerprint);

// The lines in three aligned columns.
std::string fingerprint_text(const nlohmann::json& fingerprint);

}  // namespace repro_audit
