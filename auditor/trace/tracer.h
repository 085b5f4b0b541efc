#pragma once
// A vendor-neutral view of what ran: per run, the kernels (or ATen ops) launched, in order.
#include <memory>
#include <string>
#include <vector>

#include "common/records.h"

namespace repro_audit {

class Tracer {
 public:
  virtual ~Tracer() = default;
  // Empty when the tracer works; otherwise why it records nothing ("CUPTI: not initialized").
  virtual std::string unavailable_reason() const = 0;
  virtual void begin_run() = 0;
  // Everything launched since begin_run, in launch order. Call after the device is synchronised.
  virtual std::vector<KernelRecord> end_run() = 0;
  // The per-op recorder says which op is innermost while a run records (ops nest); a tracer that
  // can tell sets KernelRecord::op of what that op launched. Others ignore it.
  virtual void enter_op(std::int64_t /*op*/) {}
  virtual void exit_op() {}
  // Around a cell's timing-only runs: no tracing cost inside a timed run (CUPTI's activity records).
  virtual void pause() {}
  virtual void resume() {}
};

// Records nothing, and says why.
class NullTracer : public Tracer {
 public:
  explicit NullTracer(std::string reason) : reason_(std::move(reason)) {}
  std::string unavailable_reason() const override { return reason_; }
  void begin_run() override {}
  std::vector<KernelRecord> end_run() override { return {}; }

 private:
  std::string reason_;
};

// Digest of a kernel sequence: names, grids and blocks in order.
std::string kernel_sequence_digest(const std::vector<KernelRecord>& kernels);

// At most this many records are kept per run, so a long backward pass cannot swamp a report.
inline constexpr std::size_t kMaxKernelsPerRun = 1000;

}  // namespace repro_audit
