#pragma once
// Holds a CUDA stream while a timed run's work is queued behind it (as nvbench's blocking kernel does):
// the host launches the op's kernels while a one-thread kernel spins on a flag in pinned memory; then
// the flag is released and the kernels run back to back. Events recorded after the hold time the GPU's
// execution of the op, not the host's launching of it (which, for kernels of a few microseconds, is
// most of a run). An op that waits for the GPU while it is held (a copy to the host, .item()) would
// wait forever: the hold gives up after `limit_ns` and says so, and the timer stops holding that cell.
#include <cstdint>

namespace repro_audit {

class HeldStream {
 public:
  HeldStream();
  ~HeldStream();
  HeldStream(const HeldStream&) = delete;
  HeldStream& operator=(const HeldStream&) = delete;

  // Queues the hold on `stream` (a cudaStream_t).
  void hold(void* stream, std::uint64_t limit_ns);
  // Lets the held work run. Returns false when the hold had already given up (the work was not all
  // queued behind it). Call after the work's last event is recorded, before waiting for it.
  bool release();
  // Whether the last hold gave up; valid once the held work has finished.
  bool gave_up() const;

 private:
  volatile int* flags_ = nullptr;  // [0]: released, [1]: gave up; pinned, mapped into the GPU
};

}  // namespace repro_audit
