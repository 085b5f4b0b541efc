#pragma once
// Word sums: how a per-op record digests a tensor where its bytes lie (on a GPU, one kernel reads them
// at memory bandwidth and only 16 bytes cross to the host). The bytes, in row-major order, are read as
// little-endian 64-bit words w_i (the last one zero-padded); each word is mixed with its index by two
// bijective 64-bit mixers, and the mixed words are summed modulo 2^64:
//   a = sum_i mix_a(w_i xor (i + 1) * K_a),  b = sum_i mix_b(w_i + (i + 1) * K_b).
// Integer addition is associative: any order of reduction (threads, blocks, atomics) gives the same
// sums, so the digest is exact and deterministic. It is order-sensitive (a word counts with its index),
// and a difference confined to one word (one bit, one element) always changes both sums: each mixer is
// a bijection, so the changed term differs. The digest (word_sums_digest) adds the dtype, the shape and
// the byte count. Not the canonical XXH3-128 of outputs: a per-op record is compared with the same
// op's record in another run on the same device, never with an output digest.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#if defined(__CUDACC__)
#define REPRO_AUDIT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define REPRO_AUDIT_HOST_DEVICE inline
#endif

namespace repro_audit {

struct WordSums {
  std::uint64_t a = 0;
  std::uint64_t b = 0;
};

namespace word_sums_detail {

constexpr std::uint64_t kKeyA = 0x9e3779b97f4a7c15ULL;
constexpr std::uint64_t kKeyB = 0xd6e8feb86659fd93ULL;

// splitmix64's finaliser: a bijection of 64-bit words.
REPRO_AUDIT_HOST_DEVICE std::uint64_t mix_a(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// MurmurHash3's fmix64: another bijection, with other constants.
REPRO_AUDIT_HOST_DEVICE std::uint64_t mix_b(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

REPRO_AUDIT_HOST_DEVICE void add_word(std::uint64_t word, std::uint64_t index, std::uint64_t& a, std::uint64_t& b) {
  a += mix_a(word ^ ((index + 1) * kKeyA));
  b += mix_b(word + (index + 1) * kKeyB);
}

}  // namespace word_sums_detail

// The sums of `bytes` bytes at `data`, on the host: the reference the device's kernel must equal.
WordSums word_sums(const void* data, std::size_t bytes);

// The per-op digest: XXH3-128 over the tag (dtype and properties, as tensor_properties() gives them),
// the sizes, the byte count and the sums; 32 hex digits like every other digest.
std::string word_sums_digest(const std::string& tag, const std::vector<std::int64_t>& sizes, std::size_t bytes,
                             WordSums sums);

}  // namespace repro_audit

// The device's reduction, with a C interface so that the Python runner can call the same kernel
// (ctypes, through the shared library built from word_sums_cuda.cu). Adds the sums of `bytes` bytes at
// device address `data` into sums[0] (a) and sums[1] (b), which are in device memory, on `stream` (a
// cudaStream_t; null: the legacy default stream), without waiting. Returns the cudaError_t of the launch.
extern "C" int repro_audit_word_sums(const void* data, unsigned long long bytes, unsigned long long* sums,
                                     void* stream);
