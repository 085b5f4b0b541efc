#pragma once
// Digests and element-wise comparison of torch tensors, on the CPU copy of their values.
#include <torch/types.h>

#include <string>

#include "common/records.h"

namespace repro_audit {

// The canonical XXH3-128 (hash/digest.h) of a tensor: its dtype tag followed by tensor_properties(),
// then its values as stored, in row-major order. An ordinary dense tensor has no properties, so its
// digest is what it always was; the Python runner (python_runner/python_digests.py) computes the same.
std::string digest_tensor(const at::Tensor& tensor);

// What beyond dtype, sizes and values tells two tensors apart, as text: ";conj" and ";neg" for the view
// bits, the quantization scheme and parameters (";qscheme=per_tensor_affine;scale=<the double's bits
// in hex>;zero_point=3", or per channel the axis and the digests of the scales and zero points), and for
// a sparse layout its name and the digests of its parts (";layout=sparse_csr;crow_indices=...;
// col_indices=...;values=..."; COO also whether it is coalesced). Empty for an ordinary dense tensor.
// Throws std::invalid_argument for a layout with no canonical form (oneDNN, nested).
std::string tensor_properties(const at::Tensor& tensor);

// The dtype's name followed by tensor_properties(): what a digest hashes before the sizes.
std::string tensor_tag(const at::Tensor& tensor);

// The same storage without the conjugate and negative view bits (the tag names them): the values as stored.
at::Tensor stored_values(at::Tensor tensor);

// The bytes a contiguous tensor's elements take in its storage: nbytes(), but for the dtypes that pack
// several elements into a byte (quint4x2, quint2x4), whose storage is smaller.
std::size_t stored_bytes(const at::Tensor& tensor);

// The tensor as the canonical form sees it, on the CPU: dense ones contiguous with their view bits and
// quantization kept, sparse ones in their layout (never made dense).
at::Tensor canonical_tensor(const at::Tensor& tensor);

// The values of a tensor, dense, on the CPU, contiguous, view bits resolved, quantized ones as their
// stored integers: what element-wise comparison counts.
at::Tensor comparable_values(const at::Tensor& tensor);

// Differing elements (bitwise), max absolute and max ULP difference between two tensors' comparable values.
Divergence compare_tensors(const std::string& output, int run, const at::Tensor& reference, const at::Tensor& other);

}  // namespace repro_audit
