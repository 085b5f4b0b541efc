#pragma once
// Where a model's divergence starts: two runs' per-op records aligned by op name (longest common
// subsequence, so runs whose op sequences differ are compared, not refused), then the first op
// whose inputs agree and whose outputs do not.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "verdict/observation.h"

namespace repro_audit {

struct Origin {
  int position = 0;                         // in the reference run's records (the order ops ended)
  int ops = 0;                              // records in the reference run
  std::string op;                           // the innermost op whose inputs agreed and outputs did not
  std::vector<std::string> within;          // the recorded ops enclosing it, outermost first
  std::string module;                       // its TorchScript module path; "" at the top level
  int downstream = 0;                       // later ops (not enclosing it) whose outputs then differed
  std::vector<std::string> downstream_ops;  // the first few of them, "#12 aten::addmm (head)"
  std::string compared;                     // which runs: "process 0 run 0 vs process 0 run 3"
  std::optional<Divergence> difference;     // its output measured where both runs were in one worker
  std::vector<std::string> kernels;         // kernel trace records launched inside it
};

struct OpComparison {
  std::vector<std::pair<int, int>> matched;  // aligned record indices (reference, other)
  std::string parted;                        // where the op sequences part, when they do
  std::optional<Origin> origin;
  std::string no_origin;  // when outputs differ but no op's inputs agreed: where they first differ
};

// Longest common subsequence of op names, after trimming the common prefix and suffix; past
// `max_cells` table cells the middle is aligned by position instead.
std::vector<std::pair<int, int>> align_ops(const std::vector<OpRecord>& reference, const std::vector<OpRecord>& other,
                                           std::size_t max_cells = 4'000'000);

OpComparison compare_op_sequences(const std::vector<OpRecord>& reference, const std::vector<OpRecord>& other);

// "#7 aten::index_put_ > aten::_index_put_impl_ (update)"
std::string describe_origin_op(const Origin& origin);

}  // namespace repro_audit
