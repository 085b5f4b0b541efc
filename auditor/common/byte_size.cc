#include "common/byte_size.h"

#include <fmt/format.h>

#include <charconv>

namespace repro_audit {

std::string byte_size_text(std::uint64_t bytes) {
  static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} byte{}", bytes, bytes == 1 ? "" : "s");
  int unit = 0;
  std::uint64_t size = 1024;
  while (unit < 5 && bytes / size >= 1024) {
    size *= 1024;
    ++unit;
  }
  if (bytes % size == 0) return fmt::format("{} {}", bytes / size, units[unit]);
  return fmt::format("{:.1f} {}", static_cast<double>(bytes) / static_cast<double>(size), units[unit]);
}

std::optional<std::uint64_t> parse_byte_count(const std::string& digits) {
  std::uint64_t value = 0;
  const auto* end = digits.data() + digits.size();
  if (digits.empty() || digits.front() < '0' || digits.front() > '9') return std::nullopt;
  const auto [stop, error] = std::from_chars(digits.data(), end, value);
  if (error != std::errc() || stop != end || value == 0) return std::nullopt;
  return value;
}

}  // namespace repro_audit
