#include "hash/digest.h"

#include <xxhash.h>

#include <fmt/format.h>

namespace repro_audit {
namespace {

std::string hex(XXH128_hash_t hash) { return fmt::format("{:016x}{:016x}", hash.high64, hash.low64); }

void update_u64(XXH3_state_t* state, std::uint64_t value) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(value >> (8 * i));
  XXH3_128bits_update(state, bytes, sizeof bytes);
}

}  // namespace

std::string digest_canonical(const std::string& dtype, const std::vector<std::int64_t>& sizes, const void* data,
                             std::size_t bytes) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  XXH3_128bits_update(state, dtype.c_str(), dtype.size() + 1);
  update_u64(state, sizes.size());
  for (const auto size : sizes) update_u64(state, static_cast<std::uint64_t>(size));
  if (bytes > 0) XXH3_128bits_update(state, data, bytes);
  const auto result = hex(XXH3_128bits_digest(state));
  XXH3_freeState(state);
  return result;
}

std::string combine_digests(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::string text;
  for (const auto& [name, digest] : outputs) text += name + '\0' + digest + '\n';
  return digest_text(text);
}

std::string digest_text(const std::string& text) { return hex(XXH3_128bits(text.data(), text.size())); }

}  // namespace repro_audit
