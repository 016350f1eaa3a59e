#pragma once
// Shape: the dims of a tensor, plus the shape arithmetic every backend shares (broadcasting, dim wrapping,
// contiguous strides). Checks live here so that every backend reports the same errors.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "engine/tensor/error.hpp"

namespace ember {

struct Shape {
  std::vector<int64_t> dims;

  Shape() = default;
  Shape(std::initializer_list<int64_t> d) : dims(d) {}
  explicit Shape(std::vector<int64_t> d) : dims(std::move(d)) {}

  std::size_t rank() const { return dims.size(); }
  int64_t operator[](std::size_t i) const { return dims[i]; }
  int64_t& operator[](std::size_t i) { return dims[i]; }
  int64_t num_elements() const {
    int64_t n = 1;
    for (auto d : dims) n *= d;
    return n;
  }
  bool operator==(const Shape& o) const = default;
  std::string to_string() const {
    std::string s = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (i) s += ", ";
      s += std::to_string(dims[i]);
    }
    return s + "]";
  }
  // Row-major strides in elements.
  std::vector<int64_t> strides() const {
    std::vector<int64_t> st(dims.size(), 1);
    for (std::size_t i = dims.size(); i-- > 1;) st[i - 1] = st[i] * dims[i];
    return st;
  }
};

// Largest element count of any tensor, and of any shape with its zero dims left out: reductions and broadcasts of a
// zero-element tensor (say [0, 2^32, 2^32]) produce the non-zero part, so it must be bounded too. x 8 bytes still
// fits int64, so size arithmetic in kernels cannot overflow.
inline constexpr int64_t kMaxElements = int64_t(1) << 59;

// Every dim >= 0 and the product of the non-zero dims <= kMaxElements; throws ShapeError naming the op otherwise.
inline void check_dims(const char* op, const Shape& s) {
  int64_t n = 1;
  for (auto d : s.dims) {
    if (d < 0) throw ShapeError(std::string(op) + ": negative dim in " + s.to_string());
    if (d == 0) continue;
    if (d > kMaxElements / n) throw ShapeError(std::string(op) + ": shape " + s.to_string() + " has too many elements");
    n *= d;
  }
}

// Wraps a possibly negative dim into [0, rank); throws IndexError naming the op otherwise.
inline std::size_t wrap_dim(const char* op, int64_t dim, std::size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (dim < -r || dim >= r) {
    throw IndexError(std::string(op) + ": dim " + std::to_string(dim) + " out of range for rank " +
                     std::to_string(rank));
  }
  return static_cast<std::size_t>(dim < 0 ? dim + r : dim);
}

// NumPy broadcasting of two shapes (aligned at the trailing dim).
inline Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
  const std::size_t r = std::max(a.rank(), b.rank());
  Shape out;
  out.dims.resize(r);
  for (std::size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.rank() ? 1 : a.dims[i - (r - a.rank())];
    const int64_t db = i < r - b.rank() ? 1 : b.dims[i - (r - b.rank())];
    if (da != db && da != 1 && db != 1) {
      throw ShapeError(std::string(op) + ": shapes " + a.to_string() + " and " + b.to_string() +
                       " are not broadcastable");
    }
    out.dims[i] = da == 1 ? db : da;
  }
  return out;
}

// Strides (in elements) that read a tensor of shape `s` as if it had the broadcast shape `out`: 0 where the dim is
// broadcast, row-major otherwise.
inline std::vector<int64_t> broadcast_strides(const Shape& s, const Shape& out) {
  std::vector<int64_t> st(out.rank(), 0);
  const auto own = s.strides();
  const std::size_t off = out.rank() - s.rank();
  for (std::size_t i = 0; i < s.rank(); ++i) st[off + i] = s.dims[i] == 1 ? 0 : own[i];
  return st;
}

inline void check_same_shape(const char* op, const Shape& a, const Shape& b) {
  if (!(a == b)) {
    throw ShapeError(std::string(op) + ": shapes " + a.to_string() + " and " + b.to_string() + " must be equal");
  }
}

}  // namespace ember
