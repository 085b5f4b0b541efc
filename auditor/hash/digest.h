#pragma once
// XXH3-128 digests over the canonical form of a tensor: dtype tag, rank, sizes, element bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace repro_audit {

// Canonical bytes: the dtype name and a 0 byte, the rank as little-endian uint64, each size as
// little-endian int64, then the elements in contiguous (row-major) order. Bitwise: -0.0 and 0.0 differ.
std::string digest_canonical(const std::string& dtype, const std::vector<std::int64_t>& sizes, const void* data,
                             std::size_t bytes);

// One digest per run over the outputs' names and digests, in the probe's order.
std::string combine_digests(const std::vector<std::pair<std::string, std::string>>& outputs);

// Digest of arbitrary text, e.g. a kernel sequence.
std::string digest_text(const std::string& text);

}  // namespace repro_audit
