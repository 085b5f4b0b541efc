#pragma once
// Sizes in bytes as people read them, and as they type them.
#include <cstdint>
#include <optional>
#include <string>

namespace repro_audit {

// "100 bytes", "64 KiB", "1.5 MiB", "13.4 GiB": the largest unit the size reaches, one decimal when
// it is not a whole number of them, so a limit under 1 MiB never reads as "0.0 MiB".
std::string byte_size_text(std::uint64_t bytes);

// A decimal count of bytes from 1 to 2^64 - 1 ("1073741824"), or nullopt: no sign, no other character,
// no wrap-around, so "-1" or 2^64 can never become a bound that is off.
std::optional<std::uint64_t> parse_byte_count(const std::string& digits);

}  // namespace repro_audit
