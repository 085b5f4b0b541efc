#pragma once
// How a recorded op's arguments and results become the text its digest is taken of (op_recorder.h):
// tensors by their canonical digest (through the cache), a view by its geometry, storage no op has
// written yet as "uninitialised", other values by their bits.
#include <ATen/ATen.h>

#include <string>
#include <unordered_map>

#include "recording/digest_cache.h"
#include "recording/tensor_digester.h"

namespace repro_audit {

// Ops whose outputs hold whatever memory the allocator returned (or a raw storage held): their bits
// mean nothing until an op writes them.
bool uninitialised_output(const std::string& name);

// In-place ops that overwrite `self` without reading it: its old bits are not an input.
bool overwrites_self(const std::string& name);

// Storage that an op like aten::empty returned and no op has written since: its bits mean nothing.
// Held weakly: once freed, its address may come back as another op's fresh storage.
class Uninitialised {
 public:
  void insert(const at::Tensor& tensor) {
    if (const auto* key = key_of(tensor)) storages_.insert_or_assign(key, tensor.storage().getWeakStorageImpl());
  }
  void erase(const at::Tensor& tensor) { storages_.erase(key_of(tensor)); }
  bool contains(const at::Tensor& tensor) const {
    const auto it = storages_.find(key_of(tensor));
    return it != storages_.end() && !it->second.expired();
  }
  void clear() { storages_.clear(); }

 private:
  static const void* key_of(const at::Tensor& tensor) {
    return tensor.defined() && tensor.has_storage() ? tensor.storage().unsafeGetStorageImpl() : nullptr;
  }
  std::unordered_map<const void*, c10::weak_intrusive_ptr<c10::StorageImpl>> storages_;
};

// How an op's tensors are digested: through the cache, which only ops outside any other may fill; a
// tensor on the device digester's device by it, as a token (`defer`) or at once.
struct Digests {
  DigestCache& cache;
  bool may_insert = false;
  TensorDigester* device = nullptr;
  bool defer = false;
};

// Appends `value`'s description to `text`; `geometry`: a view, described by its geometry alone.
void describe(std::string& text, const c10::IValue& value, const Uninitialised& uninitialised, bool geometry = false,
              Digests* digests = nullptr);

}  // namespace repro_audit
