#pragma once
// TensorData: host bytes + shape + dtype. The only form in which tensors cross to the host (and to records).
#include <cstddef>
#include <span>
#include <vector>

#include "engine/tensor/dtype.hpp"
#include "engine/tensor/shape.hpp"

namespace ember {

struct TensorData {
  std::vector<std::byte> bytes;
  Shape shape;
  DType dtype = DType::F32;

  TensorData() = default;
  TensorData(std::vector<std::byte> b, Shape s, DType d) : bytes(std::move(b)), shape(std::move(s)), dtype(d) {
    validate();
  }

  template <class T>
  static TensorData from_span(std::span<const T> values, Shape shape) {
    if (static_cast<int64_t>(values.size()) != shape.num_elements()) {
      throw ShapeError("TensorData: " + std::to_string(values.size()) + " values do not fill shape " +
                       shape.to_string());
    }
    std::vector<std::byte> b(values.size() * sizeof(T));
    if (!b.empty()) std::memcpy(b.data(), values.data(), b.size());
    return TensorData(std::move(b), std::move(shape), dtype_of<T>());
  }
  template <class T>
  static TensorData from_vec(const std::vector<T>& values, Shape shape) {
    if constexpr (std::is_same_v<T, bool>) {  // vector<bool> is bit-packed: widen to bytes
      std::vector<uint8_t> u(values.begin(), values.end());
      auto d = from_span<uint8_t>(u, std::move(shape));
      d.dtype = DType::Bool;
      return d;
    } else {
      return from_span<T>(std::span<const T>(values), std::move(shape));
    }
  }

  std::size_t num_elements() const { return static_cast<std::size_t>(shape.num_elements()); }

  // Element i converted to T (any dtype to any arithmetic type; float to int as convert_element defines it).
  template <class T>
  T get(std::size_t i) const {
    const std::byte* p = bytes.data() + i * dtype_size(dtype);
    switch (dtype) {
      case DType::F32: return convert_element<T>(load<float>(p));
      case DType::F64: return convert_element<T>(load<double>(p));
      case DType::F16: return convert_element<T>(f16_to_float(load<f16>(p)));
      case DType::I16: return static_cast<T>(load<int16_t>(p));
      case DType::I32: return static_cast<T>(load<int32_t>(p));
      case DType::I64: return static_cast<T>(load<int64_t>(p));
      case DType::U8: return static_cast<T>(load<uint8_t>(p));
      case DType::Bool: return static_cast<T>(load<uint8_t>(p) != 0);
    }
    throw KindError("TensorData: unknown dtype");
  }

  // All elements converted to T. Bool converts to 0/1.
  template <class T>
  std::vector<T> to_vec() const {
    std::vector<T> out(num_elements());
    if constexpr (!std::is_same_v<T, bool>) {  // vector<bool> is bit-packed: no memcpy
      if (dtype == dtype_of<T>()) {
        if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
        return out;
      }
    }
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = get<T>(i);
    return out;
  }

  // Same values in another dtype (float->int truncates toward zero; anything->bool is != 0).
  TensorData convert(DType to) const;

  void validate() const {
    check_dims("TensorData", shape);
    if (bytes.size() != num_elements() * dtype_size(dtype)) {
      throw ShapeError("TensorData: " + std::to_string(bytes.size()) + " bytes do not match shape " +
                       shape.to_string() + " of " + std::string(dtype_name(dtype)));
    }
  }

 private:
  template <class T>
  static T load(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
};

namespace detail {
template <class T>
void store_as(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
}  // namespace detail

inline TensorData TensorData::convert(DType to) const {
  if (to == dtype) return *this;
  const std::size_t n = num_elements();
  std::vector<std::byte> out(n * dtype_size(to));
  for (std::size_t i = 0; i < n; ++i) {
    std::byte* p = out.data() + i * dtype_size(to);
    switch (to) {
      case DType::F32: detail::store_as(p, get<float>(i)); break;
      case DType::F64: detail::store_as(p, get<double>(i)); break;
      case DType::F16: detail::store_as(p, float_to_f16(get<float>(i))); break;
      case DType::I16: detail::store_as(p, get<int16_t>(i)); break;
      case DType::I32: detail::store_as(p, get<int32_t>(i)); break;
      case DType::I64: detail::store_as(p, get<int64_t>(i)); break;
      case DType::U8: detail::store_as(p, get<uint8_t>(i)); break;
      case DType::Bool: detail::store_as(p, uint8_t(get<double>(i) != 0.0)); break;
    }
  }
  return TensorData(std::move(out), shape, to);
}

}  // namespace ember
