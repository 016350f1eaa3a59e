#pragma once
// Printing tensors: `std::cout << t` shows kind, shape and values (long dims are elided like NumPy's).
#include <ostream>
#include <sstream>
#include <string>

#include "engine/tensor/tensor.hpp"

namespace ember {
namespace detail {

inline void print_values(std::ostream& os, const TensorData& d, std::size_t dim, std::size_t offset,
                         std::size_t indent) {
  const Shape& s = d.shape;
  constexpr int64_t kEdge = 3;  // elements shown at each end of a long dim
  const int64_t n = s[dim];
  std::size_t stride = 1;
  for (std::size_t i = dim + 1; i < s.rank(); ++i) stride *= static_cast<std::size_t>(s[i]);
  os << '[';
  for (int64_t i = 0; i < n; ++i) {
    if (n > 2 * kEdge + 1 && i == kEdge) {
      os << "...";
      i = n - kEdge - 1;
      os << (dim + 1 == s.rank() ? ", " : ",\n" + std::string(indent + 1, ' '));
      continue;
    }
    const std::size_t off = offset + static_cast<std::size_t>(i) * stride;
    if (dim + 1 == s.rank()) {
      if (dtype_is_float(d.dtype)) os << d.get<double>(off);
      else if (d.dtype == DType::Bool) os << (d.get<int64_t>(off) ? "true" : "false");
      else os << d.get<int64_t>(off);
    } else {
      print_values(os, d, dim + 1, off, indent + 1);
    }
    if (i + 1 < n) os << (dim + 1 == s.rank() ? ", " : ",\n" + std::string(indent + 1, ' '));
  }
  os << ']';
}

}  // namespace detail

template <Backend B, std::size_t D, TensorKind K>
std::ostream& operator<<(std::ostream& os, const Tensor<B, D, K>& t) {
  const TensorData d = t.into_data();
  os << "Tensor<" << B::name() << ", " << D << ", " << kind_name<K>() << "> shape " << d.shape.to_string() << " "
     << dtype_name(d.dtype) << "\n";
  if (d.shape.num_elements() == 0) return os << "[]";
  detail::print_values(os, d, 0, 0, 0);
  return os;
}

template <Backend B, std::size_t D, TensorKind K>
std::string to_string(const Tensor<B, D, K>& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

}  // namespace ember
