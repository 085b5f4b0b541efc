#pragma once

namespace repro_audit {
inline constexpr const char* kToolVersion = "0.1.0";
}
