#pragma once
// The lines a model cell adds to every printer: which outputs diverged, where the divergence
// starts, how it grew over SGD steps, and what the per-op digests cost.
#include <string>
#include <vector>

#include "verdict/verdict.h"

namespace repro_audit {

// "origin of divergence: #62 aten::index_put_ > aten::_index_put_impl_ (update), op 62 of 78; ..."
std::string origin_text(const Origin& origin);

// Empty for a cell that is not a model's, or whose runs agreed and recorded no per-op timing.
std::vector<std::string> model_details(const Verdict& verdict);

}  // namespace repro_audit
