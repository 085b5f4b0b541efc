#pragma once
// The standalone Python reproduction of one cell (`repro-audit repro`): repro.py, which needs only
// Python torch (and the xxhash package for digests comparable with the report's), and its README.md.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/catalogue.h"
#include "report/report.h"

namespace repro_audit {

struct ReproInput {
  std::string name;
  std::string dtype;  // ATen's name: "Float", "Long"
  std::vector<std::int64_t> sizes;
};

struct ReproCell {
  const CellReport* cell = nullptr;
  const ProbeInfo* probe = nullptr;
  const VariantInfo* variant = nullptr;
  std::vector<ReproInput> inputs;  // what inputs.pt holds, in the probe's order
  std::string input_digest;        // of the inputs made for the export
  int warmup = 1;
  std::string torch_version;  // the report's
};

// The Python lines that put torch in the state of `settings`: environment variables (before torch is
// imported) and the calls after it. Every setting of setting_specs() has a spelling (a test checks).
struct PythonSettings {
  std::vector<std::string> environment;  // os.environ lines
  std::vector<std::string> calls;        // torch calls
  std::string seed = "0";
};
PythonSettings python_settings(const FlagSet& settings, bool on_cuda);
bool has_python_spelling(const std::string& setting);

// The digests the report holds for the cell, distinct, in the order first seen.
std::vector<std::string> distinct_run_digests(const CellReport& cell);

// What a script is made of; python_script, model_script and origin_script fill it in.
struct ScriptParts {
  std::string subject;                // "repro-audit cell <key>"
  std::vector<std::string> about;     // the docstring's lines
  const FlagSet* settings = nullptr;  // the cell's
  std::string device;
  std::vector<std::string> environment;  // more os.environ lines, before torch starts
  std::vector<std::string> inputs;       // the names of inputs.pt's tensors, in order
  std::vector<std::string> globals;      // module-level lines
  std::vector<std::string> setup;        // lines of apply_settings() after the settings
  std::string signature;                 // op()'s parameters
  std::string op_doc;
  std::string body;  // op()'s body, any common indentation
  bool invariance = false;
  nlohmann::json expected;  // {"verdict", "digests", "message"}
  int runs = 10;
  int processes = 1;
  int warmup = 1;
  std::string torch_version;
};
std::string render_script(const ScriptParts& parts);

// A probe cell's script.
std::string python_script(const ReproCell& repro);

// A model cell's run: forward, or the training run with its SGD steps (`named`: inputs passed by name).
std::string model_script(const ReproCell& repro, const std::vector<std::string>& named);

// The op where a model cell's divergence starts, alone, on the arguments it had.
struct CapturedOrigin {
  std::string name;       // "aten::index_put_"
  std::string overload;   // "" for the default
  std::string arguments;  // over T[i]
  std::vector<ReproInput> tensors;
  std::string where;  // "#62 aten::index_put_ (update)"
};
std::string origin_script(const ReproCell& repro, const CapturedOrigin& origin);
std::string repro_readme(const ReproCell& repro, const Report& report);

// What a model cell's folder holds.
struct ModelExport {
  std::optional<CapturedOrigin> origin;  // origin/repro.py: the op where the divergence starts
  std::string origin_error;              // why there is no origin/ folder
};
std::string model_readme(const ReproCell& repro, const Report& report, const ModelExport& exported);

// A folder name for a cell key: letters, digits, '-', '_', '.', '=' kept, the rest '_'; one that would
// start with anything but a letter, digit or '_' ("", "..", a hidden name) gets a '_' in front.
std::string folder_name_of(const std::string& key);

// A Python identifier of ASCII letters, digits and '_' (an op or overload name the script spells as code).
bool is_identifier(const std::string& text);

// `text` with every byte that is not part of valid UTF-8 replaced by U+FFFD.
std::string valid_utf8(std::string_view text);

}  // namespace repro_audit
