// Any input to the report loader ends in a Report or a UserError, never a crash or another exception.
// The same path as load_report_file, minus the disk.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/user_error.h"
#include "report/json_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    repro_audit::parse_report(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const repro_audit::UserError&) {
  }
  return 0;
}
