#include "kinds/model_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/text_format.h"

namespace repro_audit {
namespace {

constexpr std::size_t kOutputsShown = 8;

std::string difference_text(double difference) {
  return difference < 0 ? std::string("differs (across processes, not measured)") : fmt::format("{:g}", difference);
}

}  // namespace

std::string origin_text(const Origin& origin) {
  auto text = fmt::format("origin of divergence: {}, op {} of {}: its inputs agreed between runs, its outputs did not",
                          describe_origin_op(origin), origin.position, origin.ops);
  if (const auto& d = origin.difference; d && d->differing_elements >= 0)
    text += fmt::format("; {} of {} elements differ, max abs {:g}, max ULP {:g}", d->differing_elements, d->elements,
                        d->max_abs_difference, d->max_ulp_difference);
  text += origin.downstream == 0
              ? "; no later op diverged"
              : fmt::format("; {} later op(s) then diverged: {}{}", origin.downstream,
                            fmt::join(origin.downstream_ops, ", "),
                            origin.downstream > static_cast<int>(origin.downstream_ops.size()) ? ", ..." : "");
  if (!origin.kernels.empty()) text += fmt::format("; kernels: {}", fmt::join(origin.kernels, ", "));
  if (!origin.compared.empty()) text += fmt::format(" ({})", origin.compared);
  return text;
}

std::vector<std::string> model_details(const Verdict& verdict) {
  std::vector<std::string> lines;
  const auto& outputs = verdict.diverged_outputs;
  if (!outputs.empty()) {
    std::vector<std::string> shown(outputs.begin(), outputs.begin() + std::min(outputs.size(), kOutputsShown));
    lines.push_back(fmt::format("diverged outputs ({}): {}{}", outputs.size(), fmt::join(shown, ", "),
                                outputs.size() > kOutputsShown ? ", ..." : ""));
  }
  if (verdict.origin) lines.push_back(origin_text(*verdict.origin));
  if (!verdict.origin_note.empty())
    lines.push_back((verdict.origin ? "note: " : "no origin named: ") + verdict.origin_note);
  for (const auto& step : verdict.steps)
    lines.push_back(fmt::format("after SGD step {}: loss {}, parameters {}", step.step,
                                difference_text(step.loss_difference), difference_text(step.parameter_difference)));
  // Like with like: the recorded runs against the plain runs of the same processes among or right after
  // them (a report without those says nothing rather than compare runs of other processes or rounds).
  const auto& plain = verdict.per_op_plain_timing;
  if (verdict.per_op_timing.samples > 0 && plain.samples > 0 && plain.median_ns > 0)
    lines.push_back(fmt::format(
        "per-op digests: a run took {:.2f}x as long ({} against {} for the plain runs of the same processes "
        "among or right after them; medians of {} and {} runs)",
        static_cast<double>(verdict.per_op_timing.median_ns) / static_cast<double>(plain.median_ns),
        format_duration(verdict.per_op_timing.median_ns), format_duration(plain.median_ns),
        verdict.per_op_timing.samples, plain.samples));
  return lines;
}

}  // namespace repro_audit
