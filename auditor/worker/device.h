#pragma once
#include <string>

#include "plan/resolved_device.h"

namespace repro_audit {

// auto -> the first CUDA device when one is usable, else cpu; cuda -> cuda:0.
ResolvedDevice resolve_device(const std::string& requested);

}  // namespace repro_audit
