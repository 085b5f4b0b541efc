#pragma once
// How the per-op recorder (recording/op_recorder.h) digests a tensor that lies on a device: its bytes
// are reduced where they lie (hash/word_sums.h) into a slot of a buffer on that device, and the op's
// text holds a token for the slot; when the run ends, the slots cross to the host at once (16 bytes a
// tensor) and every token becomes its digest. Nothing waits for the device while the run records.
// The device's part is a function (a CUDA kernel in CUDA builds); a host one serves the CPU's tests.
#include <torch/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hash/word_sums.h"

namespace repro_audit {

// Adds the word sums of `bytes` bytes at `data` into the two 64-bit words at `sums`, both on the
// slots' device, after the work already queued there. Throws on failure.
using WordSumsFunction = std::function<void(const void* data, std::size_t bytes, std::uint64_t* sums)>;

class TensorDigester {
 public:
  // `device`: where the slots live and which tensors are deferred (only those on it). `wait`, when
  // given, waits for every reduction queued on the device (they may be on several streams).
  TensorDigester(at::Device device, WordSumsFunction reduce, std::function<void()> wait = {});

  // Whether `tensor` is digested by a token: dense, not quantized, on this digester's device.
  bool defers(const at::Tensor& tensor) const;
  // Queues the reduction of the tensor's stored values (row-major; a contiguous copy made on the device
  // where needed) and returns its token; the tensor's tag and shape are taken now.
  std::string enqueue(const at::Tensor& tensor);
  // Reads every slot queued since the last call back (one wait for the device).
  void resolve();
  // `text` with each resolved token replaced by its digest.
  std::string substitute(const std::string& text) const;
  // The digest at once: enqueue, then resolve (one wait for the device).
  std::string digest_now(const at::Tensor& tensor);
  // Forgets every slot (a new run).
  void clear();

  static bool has_token(const std::string& text) { return text.find(kTokenStart) != std::string::npos; }
  static constexpr char kTokenStart = '\x01';
  static constexpr char kTokenEnd = '\x02';

 private:
  struct Slot {
    std::string tag;
    std::vector<std::int64_t> sizes;
    std::size_t bytes = 0;
    std::string digest;  // once resolved
  };
  static constexpr std::int64_t kSlotsPerChunk = 4096;
  at::Device device_;
  WordSumsFunction reduce_;
  std::function<void()> wait_;
  std::vector<at::Tensor> chunks_;  // int64 [kSlotsPerChunk, 2] on the device, zeroed when made
  std::vector<Slot> slots_;
  std::size_t resolved_ = 0;
};

// A digester whose slots are on the host and whose reductions run there: the device path's logic,
// tested on any machine.
std::unique_ptr<TensorDigester> make_host_tensor_digester();

// The digester for tensors on `device`: CUDA builds, a CUDA device: the kernel; else null (per-op
// digests are taken on the host, at once).
std::unique_ptr<TensorDigester> make_tensor_digester(const at::Device& device);

}  // namespace repro_audit
