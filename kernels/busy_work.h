#pragma once
// The timing control's work, the same steps on the CPU and in one GPU thread: `iterations` steps of
// xorshift64, each needing the last, so no compiler or processor can shorten them. Returns the state
// after the last step; `kept` gets the state after `keep_at` steps (the control's output, the same
// under every profile whatever the work).
#include <cstdint>

#ifdef __CUDACC__
#define REPRO_AUDIT_HOST_DEVICE __host__ __device__
#else
#define REPRO_AUDIT_HOST_DEVICE
#endif

namespace repro_audit {

// The busy work's starting state, the same on every device.
inline constexpr std::uint64_t kBusyWorkSeed = 88172645463325252ull;

REPRO_AUDIT_HOST_DEVICE inline std::uint64_t busy_steps(std::int64_t iterations, std::int64_t keep_at,
                                                        std::uint64_t& kept) {
  std::uint64_t state = kBusyWorkSeed;
  kept = 0;
  for (std::int64_t i = 0; i < iterations; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    if (i + 1 == keep_at) kept = state;
  }
  return state;
}

}  // namespace repro_audit
