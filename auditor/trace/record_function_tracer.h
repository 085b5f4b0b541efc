#pragma once
// CPU backend: the ATen ops a run dispatched, seen through a RecordFunction global callback.
#include <memory>

#include "trace/tracer.h"

namespace repro_audit {

// Registers the callback on construction and removes it on destruction; one at a time per process.
std::unique_ptr<Tracer> make_record_function_tracer();

}  // namespace repro_audit
