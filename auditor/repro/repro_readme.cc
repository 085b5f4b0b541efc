#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "fingerprint/fingerprint_text.h"
#include "report/escape.h"
#include "repro/python_script.h"
#include "verdict/origin.h"

namespace repro_audit {
namespace {

std::string indented(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    out += "    " + text.substr(start, end == std::string::npos ? std::string::npos : end - start) + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// A report's strings are data: plain text in Markdown, code spans for names.
std::string text_of(const std::string& text) { return markdown_text(valid_utf8(text)); }
std::string code_of(const std::string& text) { return markdown_code(valid_utf8(text), false); }

// A version as pip takes it, or a placeholder: the README's command lines are copied into shells.
std::string pip_version(const std::string& version) {
  const auto plain = version.substr(0, version.find('+'));
  const bool ok = !plain.empty() && plain.size() <= 40 && std::all_of(plain.begin(), plain.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
  });
  return ok ? plain : "VERSION";
}

// The whole README, last: a control character from a report (an escape code in a message or in the
// fingerprint's code block) shows as '?', and only line breaks stay.
std::string printable(std::string text) {
  for (auto& c : text)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) c = '?';
  return text;
}

// The head of "What the audit saw", the same for probe and model cells.
std::string audit_saw(const Verdict& verdict) {
  std::string text = "## What the audit saw\n\n";
  text += fmt::format("- verdict: **{}**{}\n", to_string(verdict.kind),
                      verdict.message.empty() ? "" : ": " + text_of(verdict.message));
  text += fmt::format("- runs: {} in {} process(es); distinct digests: {}\n", verdict.runs, verdict.processes,
                      verdict.distinct_digests);
  return text;
}

}  // namespace

std::string repro_readme(const ReproCell& repro, const Report& report) {
  const auto& cell = *repro.cell;
  const auto& verdict = cell.verdict;
  std::string text = fmt::format("# Reproducing `{}`\n\n", cell.cell.key);
  text += fmt::format("{} ({}), variant {} ({}), on {} with {}.\n\n", repro.probe->name, repro.probe->description,
                      repro.variant->name, repro.variant->description, cell.cell.device,
                      cell.cell.label.empty() ? "the default settings" : "flag set " + cell.cell.label);
  text += audit_saw(verdict);
  const auto digests = distinct_run_digests(cell);
  if (!digests.empty())
    text += fmt::format("- digests (XXH3-128 of the outputs' canonical form): {}\n",
                        fmt::join(digests.begin(), digests.begin() + std::min<std::size_t>(4, digests.size()), ", "));
  if (verdict.divergence)
    text += fmt::format("- first divergent output: {} (run {}): {} of {} elements differ, max abs {}, max ULP {}\n",
                        code_of(verdict.divergence->output), verdict.divergence->run,
                        verdict.divergence->differing_elements, verdict.divergence->elements,
                        verdict.divergence->max_abs_difference, verdict.divergence->max_ulp_difference);
  if (!cell.documented.empty()) text += fmt::format("- PyTorch documents: {}\n", text_of(cell.documented));
  if (cell.contradiction)
    text += fmt::format("- contradicts the documentation: {}\n", text_of(cell.contradiction->text));
  text += fmt::format("- audited by repro-audit {}{}\n\n", text_of(report.tool_version),
                      report.host.empty() ? "" : " on " + text_of(report.host));
  text += "## Run it\n\n";
  text += fmt::format("    python repro.py        # needs torch {0} (pip install torch=={0})\n",
                      pip_version(repro.torch_version));
  text += "    pip install xxhash     # optional: digests comparable with the ones above\n\n";
  text += "It sets the cell's environment variables and flags, loads the inputs, runs the op a warm-up and ";
  text += "R times in each of P processes (the audit's R and P; `--runs`, `--processes` change them), ";
  text += "digests every output, and prints its verdict next to the report's. Expected here:\n\n";
  text += fmt::format("    here     {}: ...\n", to_string(verdict.kind));
  text += "    verdict  agrees with the report\n\n";
  text += "It exits 0 when its verdict (and, with xxhash, its digest for a deterministic cell) agrees with ";
  text += "the report, 1 when not; `--json` prints one JSON object instead.\n\n";
  if (!repro.probe->python.differs_reason.empty())
    text += fmt::format("Not bit-identical with the audited probe: {} Compare verdicts, not digests.\n\n",
                        repro.probe->python.differs_reason);
  for (const auto& path : repro.probe->python.paths) text += fmt::format("Note: {}\n\n", path.note);
  text += "## Files\n\n- `repro.py`: the script (Python only).\n";
  text += fmt::format("- `inputs.pt`: the exact input tensors, for `torch.load` (input digest {}):\n",
                      repro.input_digest.empty() ? "not recorded" : repro.input_digest);
  for (const auto& input : repro.inputs)
    text += fmt::format("  - {}: {} [{}]\n", code_of(input.name), text_of(input.dtype), fmt::join(input.sizes, ", "));
  text += "\n## The audited machine\n\n";
  text += indented(fingerprint_text(report.environment));
  return printable(valid_utf8(text));
}

std::string model_readme(const ReproCell& repro, const Report& report, const ModelExport& exported) {
  const auto& cell = *repro.cell;
  const auto& model = *cell.cell.model;
  const auto& verdict = cell.verdict;
  std::string text = fmt::format("# Reproducing `{}`\n\n", cell.cell.key);
  text +=
      fmt::format("The model {} ({}{}), on {} with {}.\n\n", code_of(model.path), model.train ? "training" : "forward",
                  model.train ? fmt::format(", {} SGD step(s)", model.steps) : "", cell.cell.device,
                  cell.cell.label.empty() ? "the default settings" : "flag set " + cell.cell.label);
  text += audit_saw(verdict);
  if (!verdict.diverged_outputs.empty()) {
    std::vector<std::string> outputs;
    for (const auto& output : verdict.diverged_outputs) outputs.push_back(code_of(output));
    text += fmt::format("- diverged outputs: {}\n", fmt::join(outputs, ", "));
  }
  if (verdict.origin)
    text += fmt::format("- the divergence starts at {}\n", text_of(describe_origin_op(*verdict.origin)));
  text += fmt::format("- audited by repro-audit {}{}\n\n", text_of(report.tool_version),
                      report.host.empty() ? "" : " on " + text_of(report.host));
  text += "## Run it\n\n";
  text += fmt::format("    python repro.py          # the model's {}, R runs in each of P processes, as audited\n",
                      model.train ? "training run" : "forward");
  if (exported.origin)
    text += fmt::format("    python origin/repro.py   # {} alone, on the arguments it had in the audited run\n",
                        exported.origin->name);
  else
    text += fmt::format("No standalone reproduction of an op: {}.\n", text_of(exported.origin_error));
  text += fmt::format(
      "\nBoth need torch {} and the model file above; `pip install xxhash` makes digests comparable "
      "with the report's.\n\n",
      text_of(repro.torch_version));
  text += "## Files\n\n";
  text += fmt::format("- `inputs.pt`: the model's inputs, for `torch.load` (input digest {}):\n",
                      repro.input_digest.empty() ? "not recorded" : repro.input_digest);
  for (const auto& input : repro.inputs)
    text += fmt::format("  - {}: {} [{}]\n", code_of(input.name), text_of(input.dtype), fmt::join(input.sizes, ", "));
  if (exported.origin) {
    text += fmt::format("- `origin/inputs.pt`: the tensor arguments of {}, called as {}:\n", exported.origin->name,
                        code_of(exported.origin->name + "(" + exported.origin->arguments + ")"));
    for (const auto& input : exported.origin->tensors)
      text += fmt::format("  - {}: {} [{}]\n", code_of(input.name), text_of(input.dtype), fmt::join(input.sizes, ", "));
  }
  text += "\n## The audited machine\n\n";
  text += indented(fingerprint_text(report.environment));
  return printable(valid_utf8(text));
}

}  // namespace repro_audit
