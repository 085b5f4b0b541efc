#include "worker/freed_memory.h"

#include <malloc.h>

#include <climits>
#include <cstdlib>
#include <string_view>

namespace repro_audit {

void keep_freed_memory() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos) return;
  ::mallopt(M_MMAP_MAX, 0);  // large blocks from the heap too (mmap still where the heap cannot grow)
  ::mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

}  // namespace repro_audit
