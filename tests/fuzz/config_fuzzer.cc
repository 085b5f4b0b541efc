// Any input to the config loader ends in a Config or a UserError, never a crash or another exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "../core/test_catalogue.h"
#include "config/config.h"
#include "common/user_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto catalogue = repro_audit::testing::test_catalogue();
  try {
    repro_audit::parse_config(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml", catalogue);
  } catch (const repro_audit::UserError&) {
  }
  return 0;
}
