// The word sums (hash/word_sums.h) on a CUDA device: a grid-stride loop over the words, a warp's sums
// reduced by shuffles, one 64-bit atomic add per warp and sum. Integer adds: the result is the same in
// any order. Words are loaded as 64-bit values where the address allows, else byte by byte.
#include <cuda_runtime.h>

#include "hash/word_sums.h"

namespace {

using repro_audit::word_sums_detail::add_word;

__device__ __forceinline__ std::uint64_t load_word(const unsigned char* data, unsigned long long bytes,
                                                   unsigned long long index, bool aligned) {
  const unsigned long long offset = index * 8;
  if (aligned && offset + 8 <= bytes) return reinterpret_cast<const std::uint64_t*>(data)[index];
  std::uint64_t word = 0;
  for (unsigned long long k = 0; k < 8 && offset + k < bytes; ++k)
    word |= static_cast<std::uint64_t>(data[offset + k]) << (8 * k);
  return word;
}

__global__ void word_sums_kernel(const unsigned char* data, unsigned long long bytes, unsigned long long* sums) {
  const unsigned long long words = (bytes + 7) / 8;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(data) % 8) == 0;
  std::uint64_t a = 0, b = 0;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += stride)
    add_word(load_word(data, bytes, i, aligned), i, a, b);
  for (int offset = 16; offset > 0; offset /= 2) {
    a += __shfl_down_sync(0xffffffffu, a, offset);
    b += __shfl_down_sync(0xffffffffu, b, offset);
  }
  if ((threadIdx.x & 31) == 0 && (a | b) != 0) {
    atomicAdd(&sums[0], static_cast<unsigned long long>(a));
    atomicAdd(&sums[1], static_cast<unsigned long long>(b));
  }
}

}  // namespace

extern "C" int repro_audit_word_sums(const void* data, unsigned long long bytes, unsigned long long* sums,
                                     void* stream) {
  if (bytes == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const unsigned long long words = (bytes + 7) / 8;
  // Enough blocks to fill the device several times over; the loop covers the rest.
  const unsigned long long wanted = (words + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(wanted < 2048 ? wanted : 2048);
  word_sums_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const unsigned char*>(data),
                                                                               bytes, sums);
  return static_cast<int>(cudaGetLastError());
}
