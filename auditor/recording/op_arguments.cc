// How a recorded op's arguments and results become the text its digest is taken of.
#include "recording/op_arguments.h"

#include <cstring>
#include <sstream>

#include "hash/tensor_digest.h"

namespace repro_audit {

namespace {

bool starts_with(const std::string& name, const char* prefix) { return name.rfind(prefix, 0) == 0; }

}  // namespace

bool uninitialised_output(const std::string& name) {
  return name.find("empty") != std::string::npos || starts_with(name, "aten::resize_") ||
         starts_with(name, "aten::set_");
}

bool overwrites_self(const std::string& name) {
  for (const char* op :
       {"aten::copy_", "aten::fill_", "aten::zero_", "aten::uniform_", "aten::normal_", "aten::random_",
        "aten::bernoulli_", "aten::exponential_", "aten::geometric_", "aten::cauchy_", "aten::log_normal_"})
    if (name == op || starts_with(name, (std::string(op) + ".").c_str())) return true;
  return false;
}

namespace {

// On the device digester's device: its token, or its digest at once; elsewhere the canonical digest.
std::string device_or_host_digest(const at::Tensor& tensor, Digests* digests) {
  if (digests && digests->device && digests->device->defers(tensor))
    return digests->defer ? digests->device->enqueue(tensor) : digests->device->digest_now(tensor);
  return digest_tensor(tensor);
}

// Text that is not a tensor's never holds a token's first byte (a string argument might).
std::string without_token_bytes(std::string text) {
  for (auto& c : text)
    if (c == TensorDigester::kTokenStart) c = '?';
  return text;
}

void describe_tensor(std::string& text, const at::Tensor& tensor, const Uninitialised& uninitialised,
                     Digests* digests) {
  if (!tensor.defined()) {
    text += "undefined;";
    return;
  }
  if (uninitialised.contains(tensor)) {
    std::ostringstream shape;
    shape << "uninitialised:" << tensor.scalar_type() << tensor.sizes() << ';';
    text += shape.str();
    return;
  }
  try {
    if (const auto* known = digests ? digests->cache.find(tensor) : nullptr) {
      text += *known;
    } else {
      const auto digest = device_or_host_digest(tensor, digests);
      if (digests && digests->may_insert) digests->cache.insert(tensor, digest);
      text += digest;
    }
  } catch (const std::exception&) {
    // An opaque layout (oneDNN, a nested tensor) has no canonical form: its shape is what is known.
    std::ostringstream shape;
    shape << tensor.layout() << tensor.scalar_type() << tensor.sizes();
    text += "opaque:" + shape.str();
  }
  text += ';';
}

// A view's bits are its base's: only its geometry is its own.
void describe_geometry(std::string& text, const at::Tensor& tensor) {
  std::ostringstream out;
  if (tensor.defined())
    out << tensor.scalar_type() << tensor.sizes() << tensor.strides() << '+' << tensor.storage_offset();
  text += out.str() + ';';
}

}  // namespace

void describe(std::string& text, const c10::IValue& value, const Uninitialised& uninitialised, bool geometry,
              Digests* digests) {
  if (value.isTensor() && geometry) {
    describe_geometry(text, value.toTensor());
  } else if (value.isTensor()) {
    describe_tensor(text, value.toTensor(), uninitialised, digests);
  } else if (value.isTensorList()) {
    text += '[';
    for (const auto& tensor : value.toTensorVector()) describe_tensor(text, tensor, uninitialised, digests);
    text += ']';
  } else if (value.isList()) {
    text += '[';
    for (const auto& item : value.toListRef()) describe(text, item, uninitialised, false, digests);
    text += ']';
  } else if (value.isTuple()) {
    text += '(';
    for (const auto& item : value.toTupleRef().elements()) describe(text, item, uninitialised, false, digests);
    text += ')';
  } else if (value.isDouble()) {
    const double number = value.toDouble();
    std::uint64_t bits = 0;
    std::memcpy(&bits, &number, sizeof bits);
    text += "d" + std::to_string(bits) + ';';
  } else if (value.isNone()) {
    text += "none;";
  } else if (value.isStorage() || value.isObject() || value.isGenerator()) {
    text += std::string(value.tagKind()) + ';';  // an address, not a value
  } else {
    std::ostringstream out;
    out << value;
    text += without_token_bytes(out.str()) + ';';
  }
}

}  // namespace repro_audit
