#include "hash/tensor_digest.h"

#include <c10/core/QScheme.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <iterator>
#include <stdexcept>

#include "hash/digest.h"

namespace repro_audit {
namespace {

// Maps a float's bit pattern onto integers that order like the floats, so the distance counts ULPs.
long double ordered(std::uint64_t bits, std::size_t size) {
  const std::uint64_t sign = std::uint64_t{1} << (8 * size - 1);
  const std::uint64_t magnitude = bits & (sign - 1);
  return (bits & sign) ? -static_cast<long double>(magnitude) : static_cast<long double>(magnitude);
}

std::uint64_t load(const unsigned char* p, std::size_t size) {
  std::uint64_t value = 0;
  std::memcpy(&value, p, size);  // little-endian hosts only, like the canonical form
  return value;
}

// The layouts a digest knows, named as torch's Python names them (torch.sparse_csr: "sparse_csr").
struct SparseLayout {
  at::Layout layout;
  const char* name;
};
constexpr SparseLayout kSparseLayouts[] = {{at::kSparse, "sparse_coo"},
                                           {at::kSparseCsr, "sparse_csr"},
                                           {at::kSparseCsc, "sparse_csc"},
                                           {at::kSparseBsr, "sparse_bsr"},
                                           {at::kSparseBsc, "sparse_bsc"}};

}  // namespace

at::Tensor stored_values(at::Tensor tensor) {
  if (tensor.is_conj()) tensor = tensor.conj();
  if (tensor.is_neg()) tensor = tensor._neg_view();
  return tensor;
}

std::string tensor_tag(const at::Tensor& tensor) {
  return c10::toString(tensor.scalar_type()) + tensor_properties(tensor);
}

at::Tensor canonical_tensor(const at::Tensor& tensor) {
  auto cpu = tensor.detach();
  // A sparse tensor stays sparse: its parts are digested each, never made dense (it may be huge).
  if (cpu.layout() != at::kStrided) return cpu.to(at::kCPU);
  // The stored values, copied with the view bits cleared (a copy would resolve them), then set again.
  const bool conj = cpu.is_conj(), neg = cpu.is_neg();
  cpu = stored_values(cpu).to(at::kCPU).contiguous();
  if (neg) cpu = cpu._neg_view();
  return conj ? cpu.conj() : cpu;
}

std::string digest_tensor(const at::Tensor& tensor) {
  const auto cpu = canonical_tensor(tensor);
  const auto tag = tensor_tag(cpu);
  if (cpu.layout() != at::kStrided) return digest_canonical(tag, cpu.sizes().vec(), nullptr, 0);
  const auto values = stored_values(cpu);
  return digest_canonical(tag, values.sizes().vec(), values.data_ptr(), stored_bytes(values));
}

std::size_t stored_bytes(const at::Tensor& tensor) {
  // quint4x2 and quint2x4 pack 2 and 4 elements into a byte: nbytes() (numel x 1) overstates them.
  const auto numel = static_cast<std::size_t>(tensor.numel());
  if (tensor.scalar_type() == at::kQUInt4x2) return (numel * 4 + 7) / 8;
  if (tensor.scalar_type() == at::kQUInt2x4) return (numel * 2 + 7) / 8;
  return tensor.nbytes();
}

std::string tensor_properties(const at::Tensor& tensor) {
  if (tensor.layout() != at::kStrided) {
    const auto* layout = std::find_if(std::begin(kSparseLayouts), std::end(kSparseLayouts),
                                      [&](const SparseLayout& known) { return known.layout == tensor.layout(); });
    if (layout == std::end(kSparseLayouts))
      throw std::invalid_argument(fmt::format("cannot digest a tensor of layout {}", c10::toString(tensor.layout())));
    auto text = fmt::format(";layout={}", layout->name);
    if (tensor.layout() == at::kSparse) {  // as stored: the order of its entries is part of it
      text += tensor.is_coalesced() ? ";coalesced=1" : ";coalesced=0";
      return text +
             fmt::format(";indices={};values={}", digest_tensor(tensor._indices()), digest_tensor(tensor._values()));
    }
    // Compressed rows (CSR, BSR) or columns (CSC, BSC): the compressed index first, as torch names it.
    if (tensor.layout() == at::kSparseCsr || tensor.layout() == at::kSparseBsr)
      return text + fmt::format(";crow_indices={};col_indices={};values={}", digest_tensor(tensor.crow_indices()),
                                digest_tensor(tensor.col_indices()), digest_tensor(tensor.values()));
    return text + fmt::format(";ccol_indices={};row_indices={};values={}", digest_tensor(tensor.ccol_indices()),
                              digest_tensor(tensor.row_indices()), digest_tensor(tensor.values()));
  }
  std::string text = tensor.is_conj() ? ";conj" : "";
  if (tensor.is_neg()) text += ";neg";
  if (!tensor.is_quantized()) return text;
  const auto scheme = tensor.qscheme();
  text += fmt::format(";qscheme={}", c10::toString(scheme));
  if (scheme == at::kPerTensorAffine || scheme == at::kPerTensorSymmetric)
    return text + fmt::format(";scale={:016x};zero_point={}", std::bit_cast<std::uint64_t>(tensor.q_scale()),
                              tensor.q_zero_point());
  return text + fmt::format(";axis={};scales={};zero_points={}", tensor.q_per_channel_axis(),
                            digest_tensor(tensor.q_per_channel_scales()),
                            digest_tensor(tensor.q_per_channel_zero_points()));
}

at::Tensor comparable_values(const at::Tensor& tensor) {
  auto values = tensor.detach();
  if (values.layout() != at::kStrided) values = values.to_dense();
  if (values.is_quantized()) values = values.int_repr();
  return values.resolve_conj().resolve_neg().to(at::kCPU).contiguous();
}

Divergence compare_tensors(const std::string& output, int run, const at::Tensor& reference_tensor,
                           const at::Tensor& other_tensor) {
  // A sparse tensor too large to make dense (2 GiB of float64) is not counted, like two of other shapes.
  constexpr std::int64_t kMaxDenseElements = std::int64_t{1} << 28;
  const bool countable = reference_tensor.layout() == other_tensor.layout() &&
                         (reference_tensor.layout() == at::kStrided || reference_tensor.numel() <= kMaxDenseElements);
  const auto reference = countable ? comparable_values(reference_tensor) : reference_tensor;
  const auto other = countable ? comparable_values(other_tensor) : other_tensor;
  Divergence divergence{output, run, 0, reference.numel(), 0, 0};
  if (!countable || reference.sizes() != other.sizes() || reference.scalar_type() != other.scalar_type()) {
    divergence.differing_elements = reference.numel();
    divergence.max_abs_difference = INFINITY;
    divergence.max_ulp_difference = INFINITY;
    return divergence;
  }
  const auto size = reference.element_size();
  const bool floating = at::isFloatingType(reference.scalar_type());
  const auto* a = static_cast<const unsigned char*>(reference.data_ptr());
  const auto* b = static_cast<const unsigned char*>(other.data_ptr());
  const auto as_double_a = reference.to(at::kDouble).contiguous();
  const auto as_double_b = other.to(at::kDouble).contiguous();
  const auto* da = as_double_a.data_ptr<double>();
  const auto* db = as_double_b.data_ptr<double>();
  for (std::int64_t i = 0; i < reference.numel(); ++i) {
    if (std::memcmp(a + i * size, b + i * size, size) == 0) continue;
    ++divergence.differing_elements;
    const double abs_difference = std::fabs(da[i] - db[i]);
    if (!std::isnan(abs_difference))
      divergence.max_abs_difference = std::max(divergence.max_abs_difference, abs_difference);
    const long double ulps =
        floating ? std::fabs(ordered(load(a + i * size, size), size) - ordered(load(b + i * size, size), size))
                 : static_cast<long double>(abs_difference);
    divergence.max_ulp_difference = std::max(divergence.max_ulp_difference, static_cast<double>(ulps));
  }
  return divergence;
}

}  // namespace repro_audit
