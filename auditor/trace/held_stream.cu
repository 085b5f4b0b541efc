#include "trace/held_stream.h"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace repro_audit {
namespace {

__global__ void hold_kernel(volatile int* flags, std::uint64_t limit_ns) {
  std::uint64_t started = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(started));
  while (flags[0] == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - started > limit_ns) {
      flags[1] = 1;
      return;
    }
    __nanosleep(500);
  }
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

}  // namespace

HeldStream::HeldStream() {
  void* flags = nullptr;
  check(cudaHostAlloc(&flags, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable), "cudaHostAlloc");
  flags_ = static_cast<volatile int*>(flags);
  flags_[0] = 1;
  flags_[1] = 0;
}

HeldStream::~HeldStream() { cudaFreeHost(const_cast<int*>(flags_)); }

void HeldStream::hold(void* stream, std::uint64_t limit_ns) {
  flags_[0] = 0;
  flags_[1] = 0;
  __sync_synchronize();
  int* device_flags = nullptr;
  check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags), const_cast<int*>(flags_), 0),
        "cudaHostGetDevicePointer");
  hold_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(device_flags, limit_ns);
  check(cudaGetLastError(), "launching the stream hold");
}

bool HeldStream::release() {
  const bool held = flags_[1] == 0;
  flags_[0] = 1;
  __sync_synchronize();
  return held;
}

bool HeldStream::gave_up() const { return flags_[1] != 0; }

}  // namespace repro_audit
