// CUDA builds: a CUDA tensor's per-op digest is reduced by the word-sums kernel (hash/word_sums_cuda.cu)
// on the stream the op runs on; the slots are read back once per run, after the device is idle.
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <stdexcept>

#include "recording/tensor_digester.h"

namespace repro_audit {

std::unique_ptr<TensorDigester> make_tensor_digester(const at::Device& device) {
  if (!device.is_cuda()) return nullptr;
  return std::make_unique<TensorDigester>(
      device,
      [](const void* data, std::size_t bytes, std::uint64_t* sums) {
        const auto status = repro_audit_word_sums(data, bytes, reinterpret_cast<unsigned long long*>(sums),
                                                  c10::cuda::getCurrentCUDAStream().stream());
        if (status != 0)
          throw std::runtime_error(
              fmt::format("the word-sums kernel: {}", cudaGetErrorString(static_cast<cudaError_t>(status))));
      },
      [] { c10::cuda::device_synchronize(); });
}

}  // namespace repro_audit
