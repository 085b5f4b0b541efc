#include "hash/word_sums.h"

#include <cstring>

#include "hash/digest.h"

namespace repro_audit {

WordSums word_sums(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  WordSums sums;
  const std::size_t words = bytes / 8;
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t word = 0;
    std::memcpy(&word, p + 8 * i, 8);  // little-endian hosts only, like the canonical form
    word_sums_detail::add_word(word, i, sums.a, sums.b);
  }
  if (const auto tail = bytes % 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, p + 8 * words, tail);
    word_sums_detail::add_word(word, words, sums.a, sums.b);
  }
  return sums;
}

std::string word_sums_digest(const std::string& tag, const std::vector<std::int64_t>& sizes, std::size_t bytes,
                             WordSums sums) {
  unsigned char packed[16];
  for (int i = 0; i < 8; ++i) {
    packed[i] = static_cast<unsigned char>(sums.a >> (8 * i));
    packed[8 + i] = static_cast<unsigned char>(sums.b >> (8 * i));
  }
  return digest_canonical(tag + ";word_sums=1;bytes=" + std::to_string(bytes), sizes, packed, sizeof packed);
}

}  // namespace repro_audit
