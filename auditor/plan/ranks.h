#pragma once
// A cell's rank count: how many cooperating processes run it (kinds/collective_kind.h). One reading
// for the plan, the kind and the worker.
#include <stdexcept>
#include <string>

#include "config/settings.h"

namespace repro_audit {

// The `ranks` setting; 1 (one process) when there is none, it does not apply, or it is no number.
inline int ranks_of(const FlagSet& settings) {
  const auto it = settings.find("ranks");
  if (it == settings.end() || it->second == kNotApplicable) return 1;
  try {
    return std::stoi(it->second);
  } catch (const std::exception&) {
    return 1;
  }
}

}  // namespace repro_audit
