#pragma once
// Per-op digests of a model run: a thread-local RecordFunction callback digests the inputs of every
// dispatcher op (and autograd node) as it begins and its outputs as it ends, in the canonical form
// the outputs of a cell use, with the TorchScript module path the interpreter is in.
#include <torch/types.h>

#include <memory>
#include <vector>

#include "recording/tensor_digester.h"
#include "trace/tracer.h"
#include "verdict/observation.h"

namespace repro_audit {

struct RecordedRun {
  std::vector<OpRecord> ops;                  // in the order ops ended
  std::vector<std::vector<at::Tensor>> kept;  // per record, copies of its tensor outputs (when kept)
  bool truncated = false;                     // more than kMaxOpsPerRun ops: the rest were not recorded
};

class OpRecorder {
 public:
  // The tracer (may be null) is told which op is innermost, so its records can name the op. With a
  // device digester (recording/tensor_digester.h), tensors on its device are digested there; a run
  // without a reference reads their digests back once, when it ends.
  explicit OpRecorder(Tracer* tracer, std::unique_ptr<TensorDigester> device = nullptr);
  ~OpRecorder();
  OpRecorder(const OpRecorder&) = delete;
  OpRecorder& operator=(const OpRecorder&) = delete;

  // Records on this thread (and threads autograd hands the work to) until end_run. With
  // `keep_bytes` > 0, output tensors are also copied until they add up to that many bytes: every op's
  // when there is no `reference` run, else only those of an op that received the reference's inputs at
  // the same place and returned other outputs (where a divergence starts: the copy it is measured on).
  void begin_run(std::size_t keep_bytes, const RecordedRun* reference = nullptr);
  RecordedRun end_run();
  // Whether a device's tensors are digested on it: a run with a reference then waits for the device
  // at every op (its outputs are compared as it records), one without waits once.
  bool digests_on_device() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// The digest of a whole sequence: names, module paths, and the input and output digests, in order.
std::string op_sequence_digest(const std::vector<OpRecord>& ops);

// "TOP(Net)::forward", "block(Block)::forward", "fc(Linear)::forward" -> "block.fc".
std::string module_path(const std::vector<std::string>& hierarchy);

}  // namespace repro_audit
