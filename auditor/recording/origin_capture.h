#pragma once
// The arguments of one op of a model run, captured as it begins, for a standalone reproduction of
// the op where a model's divergence starts (`repro` on a model cell). Ops are counted as OpRecorder
// counts them (recording/op_recorder.h): every dispatcher op and autograd node, in the order they begin.
#include <torch/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace repro_audit {

struct CapturedOp {
  std::string name;       // "aten::index_put_"
  std::string overload;   // "" for the default overload
  std::string arguments;  // Python call arguments over the tensors T: "T[0], [T[1]], T[2], accumulate=True"
  std::vector<at::Tensor> tensors;
  std::string unreproducible;  // why a call from Python cannot repeat it, e.g. an autograd node
};

class OriginCapture {
 public:
  explicit OriginCapture(std::int64_t start);  // the op's place in the order ops began
  ~OriginCapture();
  OriginCapture(const OriginCapture&) = delete;
  OriginCapture& operator=(const OriginCapture&) = delete;

  std::optional<CapturedOp> captured() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace repro_audit
