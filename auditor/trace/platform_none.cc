// Builds without CUDA: CPU tracing and timing only.
#include <stdexcept>

#include "trace/library_verbose_tracer.h"
#include "trace/record_function_tracer.h"
#include "trace/steady_clock_timer.h"
#include "trace/tracer_factory.h"

namespace repro_audit {

std::unique_ptr<Tracer> make_tracer(const std::string& device) {
  if (device.rfind("cuda", 0) == 0) return std::make_unique<NullTracer>("built without CUDA");
  return make_library_verbose_tracer(make_record_function_tracer());
}

std::unique_ptr<RunTimer> make_run_timer(const std::string&) { return std::make_unique<SteadyClockTimer>(); }

}  // namespace repro_audit
