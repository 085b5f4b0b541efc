#pragma once
// How a probe's inputs are made from the seed. Recorded in reports, baselines and journals: a digest
// means something only beside the scheme that made the inputs it was taken over.
#include <optional>
#include <string>

namespace repro_audit {

enum class InputScheme {
  // ATen's CPU generator (randn, rand, randint): its kernels are vectorised per CPU capability, so
  // another ATen capability (another ISA) can mean other inputs. Every file written before the
  // scheme was recorded used it.
  aten = 1,
  // Counter-based values in portable integer code (inputs/portable_values.h): the same bits on every
  // host, ISA, thread count and device.
  portable = 2,
};

inline constexpr InputScheme kCurrentInputScheme = InputScheme::portable;
// What a file that records no scheme was made with.
inline constexpr InputScheme kUnrecordedInputScheme = InputScheme::aten;
inline constexpr const char* kInputSchemeNames = "1 (ATen's generator), 2 (portable)";

inline int to_int(InputScheme scheme) { return static_cast<int>(scheme); }

inline std::optional<InputScheme> input_scheme_from_int(long long value) {
  if (value == 1) return InputScheme::aten;
  if (value == 2) return InputScheme::portable;
  return std::nullopt;
}

// "2 (portable)"
inline std::string describe(InputScheme scheme) {
  return scheme == InputScheme::aten ? "1 (ATen's generator)" : "2 (portable)";
}

}  // namespace repro_audit
