// TensorProto -> TensorData with every size checked before allocation (onnx/parse.hpp).
#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "onnx/parse_internal.hpp"

namespace ember::onnx_import::detail {

namespace {

constexpr std::size_t kMaxTensorRank = 8;

// Copies `count` values of the typed field into `out` as `To` (the field's width differs from the element's for
// int32_data, which carries int16 / uint8 / bool / float16 bits).
template <class To, class Field>
void store_typed(const Field& field, std::vector<std::byte>& out) {
  for (int i = 0; i < field.size(); ++i) {
    const To v = static_cast<To>(field.Get(i));
    std::memcpy(out.data() + static_cast<std::size_t>(i) * sizeof(To), &v, sizeof(To));
  }
}

}  // namespace

std::optional<DType> dtype_of_onnx(int32_t elem_type) {
  switch (elem_type) {
    case onnx::TensorProto_DataType_FLOAT: return DType::F32;
    case onnx::TensorProto_DataType_DOUBLE: return DType::F64;
    case onnx::TensorProto_DataType_FLOAT16: return DType::F16;
    case onnx::TensorProto_DataType_INT32: return DType::I32;
    case onnx::TensorProto_DataType_INT64: return DType::I64;
    case onnx::TensorProto_DataType_INT16: return DType::I16;
    case onnx::TensorProto_DataType_UINT8: return DType::U8;
    case onnx::TensorProto_DataType_BOOL: return DType::Bool;
    default: return std::nullopt;
  }
}

std::string onnx_dtype_name(int32_t elem_type) {
  if (onnx::TensorProto_DataType_IsValid(elem_type) && elem_type != 0) {
    std::string n = onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
    for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return n;
  }
  return fmt::format("element type {}", elem_type);
}

TensorData tensor_from_proto(const onnx::TensorProto& t, ParseState& st, const std::string& what) {
  const std::optional<DType> dtype = dtype_of_onnx(t.data_type());
  if (!dtype)
    throw UnsupportedDTypeError(
        fmt::format("{}: element type {} is not supported by Ember", what, onnx_dtype_name(t.data_type())));
  if (t.has_segment()) throw OnnxError(fmt::format("{}: segmented tensors are not supported", what));
  if (static_cast<std::size_t>(t.dims_size()) > kMaxTensorRank)
    throw OnnxError(fmt::format("{}: rank {} is above Ember's {}", what, t.dims_size(), kMaxTensorRank));
  // Element count and bytes, overflow-checked, before anything proportional to them exists.
  std::vector<int64_t> dims;
  uint64_t numel = 1;
  for (int i = 0; i < t.dims_size(); ++i) {
    const int64_t d = t.dims(i);
    if (d < 0) throw OnnxError(fmt::format("{}: negative dim {}", what, d));
    dims.push_back(d);
    if (d != 0 && numel > st.limits.max_tensor_bytes / static_cast<uint64_t>(d))
      throw OnnxError(fmt::format("{}: shape has more elements than the {}-byte tensor limit allows", what,
                                  st.limits.max_tensor_bytes));
    numel *= static_cast<uint64_t>(d);
  }
  const uint64_t elem = dtype_size(*dtype);
  if (numel > st.limits.max_tensor_bytes / elem)
    throw OnnxError(fmt::format("{}: {} elements of {} exceed the {}-byte tensor limit", what, numel,
                                dtype_name(*dtype), st.limits.max_tensor_bytes));
  const uint64_t nbytes = numel * elem;
  Shape shape{std::vector<int64_t>(dims)};
  check_dims("onnx tensor", shape);

  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
    return TensorData(read_external_data(t, st, nbytes, what), std::move(shape), *dtype);

  if (t.has_raw_data()) {
    if (t.raw_data().size() != nbytes)
      throw OnnxError(fmt::format("{}: raw_data has {} bytes, shape {} of {} needs {}", what, t.raw_data().size(),
                                  shape.to_string(), dtype_name(*dtype), nbytes));
    std::vector<std::byte> bytes(nbytes);
    if (nbytes) std::memcpy(bytes.data(), t.raw_data().data(), nbytes);
    return TensorData(std::move(bytes), std::move(shape), *dtype);
  }

  // The typed field of the element type: its count must be the element count exactly.
  int64_t count = 0;
  switch (*dtype) {
    case DType::F32: count = t.float_data_size(); break;
    case DType::F64: count = t.double_data_size(); break;
    case DType::I64: count = t.int64_data_size(); break;
    default: count = t.int32_data_size(); break;  // int32, int16, uint8, bool, float16 (as bits)
  }
  if (static_cast<uint64_t>(count) != numel)
    throw OnnxError(fmt::format("{}: {} stored values for shape {} ({} elements)", what, count, shape.to_string(),
                                numel));
  std::vector<std::byte> bytes(nbytes);
  switch (*dtype) {
    case DType::F32: store_typed<float>(t.float_data(), bytes); break;
    case DType::F64: store_typed<double>(t.double_data(), bytes); break;
    case DType::I64: store_typed<int64_t>(t.int64_data(), bytes); break;
    case DType::I32: store_typed<int32_t>(t.int32_data(), bytes); break;
    case DType::I16: store_typed<int16_t>(t.int32_data(), bytes); break;
    case DType::F16: store_typed<uint16_t>(t.int32_data(), bytes); break;
    case DType::U8: store_typed<uint8_t>(t.int32_data(), bytes); break;
    case DType::Bool:
      for (int i = 0; i < t.int32_data_size(); ++i) bytes[static_cast<std::size_t>(i)] = std::byte(t.int32_data(i) != 0);
      break;
  }
  return TensorData(std::move(bytes), std::move(shape), *dtype);
}

}  // namespace ember::onnx_import::detail
