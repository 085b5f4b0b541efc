#pragma once
// Invariance probes: a run returns the reference first ("reference"), then the same logical result
// under each perturbation, each with the reference's shape. The worker digests every output; the
// verdict compares each with the reference bit for bit (`invariant` / `varies`), and the worker
// measures how far a differing one is off (elements, max abs and max ULP difference).
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "probe/probe.h"

namespace repro_audit {

inline constexpr const char* kReferenceOutput = "reference";

// {1, 2, 3, 7, 17, 33, 64, 128, 257, 1024}: small sizes where a BLAS switches kernels by M, odd ones
// that leave a remainder after any vector width, and a large one.
std::vector<std::int64_t> default_batch_sizes();

// Sizes up to `largest`, for ops too slow on a CPU at the largest batch (low precision, attention).
std::vector<std::int64_t> batch_sizes_up_to(std::int64_t largest);

// The batch inputs, concatenated along `dim`, to the result whose `dim` indexes the batch.
using BatchOp = std::function<at::Tensor(const std::vector<at::Tensor>&)>;

// Batch invariance. `anchors` hold the request (size 1 along `dim`), `fillers` the other requests
// (at least max(sizes) - 1 along `dim`); each input tensor of the op is one entry of both. The
// reference is op(anchors); the perturbations place the anchor first, in the middle and last in a
// batch of each size ("batch=7@middle") and take the anchor's slice of the result. Batches are
// built here, outside the timed runs.
RunFunction batch_invariance(const std::vector<at::Tensor>& anchors, const std::vector<at::Tensor>& fillers, BatchOp op,
                             const std::vector<std::int64_t>& sizes, std::int64_t dim = 0);

// The same values as `input` in other memory layouts: "transposed" (the last two dimensions
// stored the other way round), "strided-slice" (every other element of a larger tensor),
// "storage-offset-1" and, when asked and 4-d, "channels-last". The reference is `input` contiguous.
std::vector<std::pair<std::string, at::Tensor>> other_layouts(const at::Tensor& input, bool channels_last = false);

// Layout invariance: op(input) against op of each of other_layouts(input).
RunFunction layout_invariance(const at::Tensor& input, std::function<at::Tensor(const at::Tensor&)> op,
                              bool channels_last = false);

// An invariance probe in f32, bf16 and f16 with a 600 s limit (it runs dozens of batches per run).
ProbeBuilder invariance_probe(std::string name, std::string description, Invariance invariance,
                              PrepareFunction prepare);

}  // namespace repro_audit
