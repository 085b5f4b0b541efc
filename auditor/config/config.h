#pragma once
// The audit configuration: optional YAML, built-in defaults equal to an empty file.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/catalogue.h"
#include "config/input_scheme.h"
#include "config/model_spec.h"

namespace repro_audit {

// What fails an audit (exit 1): a contradiction that breaks the audit, or any failing cell too.
enum class FailOn { contradiction, any };

inline const char* to_string(FailOn fail_on) { return fail_on == FailOn::any ? "any" : "contradiction"; }
inline std::optional<FailOn> fail_on_from_string(const std::string& text) {
  if (text == "contradiction") return FailOn::contradiction;
  if (text == "any") return FailOn::any;
  return std::nullopt;
}
inline constexpr const char* kFailOnNames = "contradiction, any";  // for the error that rejects any other name

struct ProbeSelection {
  std::string probe;
  std::vector<std::string> variants;  // empty: every variant
};

struct Config {
  std::string source = "<defaults>";
  std::string device = "auto";         // auto | cpu | cuda | cuda:N
  std::vector<ProbeSelection> probes;  // empty: the default suite of `kind`
  ProbeKind kind = ProbeKind::repeat;  // which probes the default suite holds
  std::vector<std::string> profiles = {"default", "strict", "strict-warn"};
  // Crossed with every profile (profile mode) or with each other (matrix mode).
  std::map<std::string, std::vector<std::string>> axes = {{"threads", {"1", "2"}}};
  bool full_matrix = false;  // sweep the cartesian product of `axes` instead of profiles
  int repeats = 10;          // timed runs per process, after warm-up
  int warmup = 1;            // digested, not timed
  int processes = 2;         // cross-process repeats
  // --detect: the per-run divergence rate the runs were chosen to catch with 95% confidence (repeats
  // follow from it: repeats_to_detect); unset: repeats as given.
  std::optional<double> detect;
  std::uint64_t seed = 0;
  // How inputs are made from the seed; an older scheme only to reproduce an older file's inputs.
  InputScheme input_scheme = kCurrentInputScheme;
  double timeout_seconds = 0;  // per cell; 0 = the probe's own default
  FailOn fail_on = FailOn::contradiction;
  // Non-empty: a model audit (`repro-audit model`): each model x flag set is a cell; `probes` is unused.
  std::vector<ModelSpec> models;
};

// Throws UserError naming source, line and column, and the valid choices.
Config parse_config(const std::string& text, const std::string& source, const Catalogue& catalogue);
Config load_config_file(const std::string& path, const Catalogue& catalogue);

// Checks values given on the command line against the same rules as the YAML.
void validate_probe_selection(const ProbeSelection& selection, const Catalogue& catalogue, const std::string& where);
void validate_profile(const std::string& profile, const std::string& where);
void validate_axis(const std::string& name, const std::vector<std::string>& values, const std::string& where);
void validate_device(const std::string& device, const std::string& where);
// Every rule of the YAML, for a config assembled elsewhere: command-line overrides, a journal header.
void validate_config(const Config& config, const Catalogue& catalogue, const std::string& where);
std::string too_few_runs(const Config& config);

// --detect's range: below it the runs would be too many, above it any audit catches the divergence.
inline constexpr double kMinDetectRate = 0.0001;
inline constexpr double kMaxDetectRate = 0.5;
// The runs of a cell (every process's, warm-ups included) that catch a divergence shown by each run
// with probability `rate` with 95% confidence: the fewest n whose bound on the per-run divergence rate
// after n identical runs, 1 - 0.05^(1/(n-1)), is at most `rate`.
int runs_to_detect(double rate);
// The repeats per process that make at least runs_to_detect(rate) runs over `processes`, `warmup` each.
int repeats_to_detect(double rate, int processes, int warmup);

}  // namespace repro_audit
