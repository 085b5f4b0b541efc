#pragma once
// Digests of tensors (hash/tensor_digest.h) kept while the tensor is provably unchanged, for the per-op
// records (recording/op_recorder.h).
#include <torch/types.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace repro_audit {

// Digests of tensors already taken this run or an earlier one: an op's inputs are mostly the outputs of
// the op before it, every nested call (conv2d > convolution > _convolution > ...) reads them again, and a
// model's parameters are the same tensors run after run. An entry holds while its tensor, storage, place,
// shape and version counter are what they were; any op that may write a storage (in place, out=) drops
// the entries on it as it begins. Entries are made only where no enclosing op is running, that could
// still write the tensor's memory without dispatching an op (a kernel filling its result after at::zeros).
class DigestCache {
 public:
  const std::string* find(const at::Tensor& tensor) const {
    const auto it = entries_.find(tensor.unsafeGetTensorImpl());
    if (it == entries_.end() || !cacheable(tensor) || !it->second.same(tensor)) return nullptr;
    return &it->second.digest;
  }
  void insert(const at::Tensor& tensor, const std::string& digest) {
    if (!cacheable(tensor)) return;
    entries_.insert_or_assign(tensor.unsafeGetTensorImpl(), Entry::of(tensor, digest));
  }
  // An op that may write these tensors' storage begins.
  void drop_storage(const at::Tensor& tensor) {
    if (!tensor.defined() || !tensor.has_storage()) return;
    const auto* storage = tensor.storage().unsafeGetStorageImpl();
    std::erase_if(entries_, [&](const auto& entry) { return entry.second.storage == storage; });
  }
  // Entries of tensors that no longer exist (their addresses may come back as other tensors).
  void drop_freed() {
    std::erase_if(entries_, [](const auto& entry) { return entry.second.impl.expired(); });
  }
  void clear() { entries_.clear(); }
  // Rewrites every entry's digest in place (a device's tokens become digests when a run ends).
  template <typename Rewrite>
  void rewrite(Rewrite&& change) {
    for (auto& [_, entry] : entries_) change(entry.digest);
  }

 private:
  static bool cacheable(const at::Tensor& tensor) {
    return tensor.defined() && tensor.has_storage() && tensor.layout() == at::kStrided && !tensor.is_inference();
  }
  struct Entry {
    c10::weak_intrusive_ptr<c10::TensorImpl> impl;
    const c10::StorageImpl* storage = nullptr;
    const void* data = nullptr;
    std::int64_t offset = 0;
    std::vector<std::int64_t> sizes, strides;
    at::ScalarType dtype = at::kFloat;
    std::int64_t version = 0;
    std::string digest;

    static Entry of(const at::Tensor& tensor, const std::string& digest) {
      return {c10::weak_intrusive_ptr<c10::TensorImpl>(tensor.getIntrusivePtr()),
              tensor.storage().unsafeGetStorageImpl(),
              tensor.storage().data(),
              tensor.storage_offset(),
              tensor.sizes().vec(),
              tensor.strides().vec(),
              tensor.scalar_type(),
              tensor._version(),
              digest};
    }
    bool same(const at::Tensor& tensor) const {
      return !impl.expired() && tensor.storage().unsafeGetStorageImpl() == storage && tensor.storage().data() == data &&
             tensor.storage_offset() == offset && tensor.sizes() == sizes && tensor.strides() == strides &&
             tensor.scalar_type() == dtype && tensor._version() == version;
    }
  };
  std::unordered_map<const c10::TensorImpl*, Entry> entries_;
};

}  // namespace repro_audit
