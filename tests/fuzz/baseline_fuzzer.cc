// Any input to the baseline loader ends in a Baseline or a UserError, never a crash or another exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "compare/baseline.h"
#include "common/user_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    repro_audit::parse_baseline(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  } catch (const repro_audit::UserError&) {
  }
  return 0;
}
