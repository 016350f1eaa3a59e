// The operator registry and OpContext's input helpers (onnx/op_registry.hpp).
#include "onnx/op_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace ember::onnx_import {

namespace {

constexpr int64_t kMaxHostInts = int64_t{1} << 20;

template <class T>
std::vector<int64_t> widen(const TensorData& d) {
  std::vector<int64_t> out(static_cast<std::size_t>(d.shape.num_elements()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, d.bytes.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<int64_t>(v);
  }
  return out;
}

}  // namespace

DynTensor upload(const DynDevice& device, const TensorData& data) {
  if (data.dtype == DType::F64 && device.backend != BackendId::Cpu)
    return capi::from_data(device, data.convert(DType::F32));
  return capi::from_data(device, data);
}

const DynTensor& OpContext::input(std::size_t i) const {
  if (!has_input(i)) fail(fmt::format("input {} is required but missing", i));
  return *inputs[i];
}

std::vector<int64_t> OpContext::ints(std::size_t i) const {
  const DynTensor& t = input(i);
  const Shape s = capi::shape(t);
  if (s.num_elements() > kMaxHostInts)
    fail(fmt::format("input {} has {} elements; at most {} are read as integers", i, s.num_elements(), kMaxHostInts));
  const TensorData d = capi::to_data(t);
  switch (d.dtype) {
    case DType::I64: return widen<int64_t>(d);
    case DType::I32: return widen<int32_t>(d);
    case DType::I16: return widen<int16_t>(d);
    case DType::U8: return widen<uint8_t>(d);
    case DType::Bool: return widen<uint8_t>(d);
    default: break;
  }
  fail(fmt::format("input {} must be an integer tensor, got {}", i, dtype_name(d.dtype)));
}

double OpContext::scalar(std::size_t i) const {
  const DynTensor& t = input(i);
  if (capi::shape(t).num_elements() != 1) fail(fmt::format("input {} must hold exactly one value", i));
  // Read to the host and converted there: no op of the graph (so a trainable F32 initializer such as Dropout's
  // ratio reads while it requires grad), and no float64 on the device (GPU backends compute in float32 only).
  return capi::to_data(capi::detach(t)).get<double>(0);
}

DType onnx_elem_dtype(const OpContext& ctx, int64_t elem) {
  switch (elem) {
    case 1: return DType::F32;
    case 2: return DType::U8;
    case 5: return DType::I16;
    case 6: return DType::I32;
    case 7: return DType::I64;
    case 9: return DType::Bool;
    case 10: return DType::F16;
    case 11: return DType::F64;
    default: break;
  }
  static const char* const names[] = {"undefined", "float",  "uint8",     "int8",       "uint16",  "int16",
                                      "int32",     "int64",  "string",    "bool",       "float16", "double",
                                      "uint32",    "uint64", "complex64", "complex128", "bfloat16"};
  const char* name = elem >= 0 && elem <= 16 ? names[elem] : "unknown";
  // UnsupportedDTypeError (not a plain OnnxError): the model asks for a type Ember lacks, it is not malformed.
  throw UnsupportedDTypeError(
      fmt::format("{}: element type {} ({}) is not supported by Ember", ctx.node.describe(), elem, name));
}

void OpContext::fail(const std::string& what) const { throw OnnxError(node.describe() + ": " + what); }

void OpRegistry::add(std::string op_type, Converter fn, int64_t since, int64_t until) {
  for (const Entry& e : entries_)
    if (e.op_type == op_type && since <= e.until && e.since <= until)
      throw std::logic_error("OpRegistry: " + op_type + " registered twice for overlapping opsets");
  entries_.push_back({std::move(op_type), since, until, std::move(fn)});
}

const Converter* OpRegistry::find(std::string_view op_type, int64_t opset) const {
  for (const Entry& e : entries_)
    if (e.op_type == op_type && e.since <= opset && opset <= e.until) return &e.fn;
  return nullptr;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_) out.push_back(e.op_type);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const OpRegistry& op_registry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_core_ops(r);
    register_elementwise_ops(r);
    register_shape_ops(r);
    register_reduce_ops(r);
    register_nn_ops(r);
    register_rnn_ops(r);
    return r;
  }();
  return registry;
}

}  // namespace ember::onnx_import
