#include "worker/freed_memory.h"

#include <malloc.h>

#include <climits>
#include <cstdlib>
#include <string_view>

namespace repro_audit {

constexpr int kLargestMmapThreshold = 4 * 1024 * 1024 * static_cast<int>(sizeof(long));

void keep_freed_memory() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos) return;
  // Blocks up to glibc's largest threshold (32 MiB on 64 bits) from the heap; larger ones are still
  // mapped and given back, so a worker's heap never holds a hole of that size.
  ::mallopt(M_MMAP_THRESHOLD, kLargestMmapThreshold);
  ::mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

}  // namespace repro_audit
