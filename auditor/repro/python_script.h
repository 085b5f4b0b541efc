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
#include "repro/python_text.h"

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
// imported) and the calls after it, spelled by each setting's row in setting_specs() (a test checks
// that every setting has a spelling).
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
// The parts every cell's script shares: its subject, settings, device, inputs, expected result, runs.
ScriptParts cell_parts(const CellReport& cell, const ReproCell& repro);

// A probe cell's script (probe_script.cc).
std::string python_script(const ReproCell& repro);

// A model cell's run: forward, or the training run with its SGD steps (`named`: inputs passed by name;
// `package`: the file is an AOTInductor package, as the worker found from its archive). model_script.cc
std::string model_script(const ReproCell& repro, const std::vector<std::string>& named, bool package);

// The op where a model cell's divergence starts, alone, on the arguments it had.
struct CapturedOrigin {
  std::string name;       // "aten::index_put_"
  std::string overload;   // "" for the default
  std::string arguments;  // over T[i]
  std::vector<ReproInput> tensors;
  std::string where;  // "#62 aten::index_put_ (update)"
};
std::string origin_script(const ReproCell& repro, const CapturedOrigin& origin);  // origin_script.cc
std::string repro_readme(const ReproCell& repro, const Report& report);

// What a model cell's folder holds.
struct ModelExport {
  std::optional<CapturedOrigin> origin;  // origin/repro.py: the op where the divergence starts
  std::string origin_error;              // why there is no origin/ folder
};
std::string model_readme(const ReproCell& repro, const Report& report, const ModelExport& exported);

}  // namespace repro_audit
