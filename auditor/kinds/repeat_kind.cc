#include "kinds/repeat_kind.h"

#include "verdict/verdict.h"

namespace repro_audit {
namespace {

class RepeatKind : public ProbeCellKind {
 public:
  const char* name() const override { return "repeat"; }
  bool claims(const Cell&) const override { return true; }

  // The first process's sensitivity check; a deterministic verdict of insensitive inputs says so.
  void judge(const Cell&, const std::vector<ProcessObservation>& observations, Verdict& verdict) const override {
    for (const auto& observation : observations)
      if (observation.sensitivity) {
        verdict.sensitivity = observation.sensitivity;
        break;
      }
    if (is_vacuous(verdict)) {
      const auto note =
          "vacuous: the inputs are insensitive to the order of accumulation, so a reordering "
          "kernel would give these bits too";
      verdict.message = verdict.message.empty() ? note : verdict.message + "; " + note;
    }
  }

  std::vector<std::string> detail_lines(const Verdict& verdict) const override {
    if (!verdict.sensitivity) return {};
    return {(verdict.sensitivity->insensitive() ? "order sensitivity INSUFFICIENT: " : "order sensitivity: ") +
            sensitivity_text(*verdict.sensitivity)};
  }
};

}  // namespace

const CellKind& repeat_kind() {
  static const RepeatKind kind;
  return kind;
}

}  // namespace repro_audit
