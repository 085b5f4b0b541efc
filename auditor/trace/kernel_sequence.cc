#include "hash/digest.h"
#include "trace/tracer.h"

namespace repro_audit {

std::string kernel_sequence_digest(const std::vector<KernelRecord>& kernels) {
  std::string text;
  for (const auto& kernel : kernels) text += kernel.name + '\0' + kernel.grid + '\0' + kernel.block + '\n';
  return digest_text(text);
}

}  // namespace repro_audit
