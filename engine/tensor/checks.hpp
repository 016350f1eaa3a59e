#pragma once
// Validation shared by every backend: each function checks one op's arguments, throws a typed error whose message
// names the op and the shapes, and returns what the backend needs (output shape, resolved ranges, ...).
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/backend/matmul_geometry.hpp"
#include "engine/backend/ops.hpp"
#include "engine/backend/pool_geometry.hpp"
#include "engine/backend/sliding_window.hpp"
#include "engine/tensor/error.hpp"
#include "engine/tensor/shape.hpp"

namespace ember::checks {

// Upper bound on kernel sizes, strides, paddings, dilations and groups.
inline constexpr int64_t kMaxOption = int64_t(1) << 31;

inline std::string str(const std::vector<int64_t>& v) { return Shape(v).to_string(); }

// Resolves one -1 and checks the element count.
inline Shape reshape(const char* op, const Shape& from, const std::vector<int64_t>& to) {
  Shape out(to);
  int64_t known = 1;  // product of the non-zero given dims (bounded, so it cannot overflow)
  bool zero = false;
  int infer = -1;
  for (std::size_t i = 0; i < to.size(); ++i) {
    if (to[i] == -1) {
      if (infer >= 0) throw ShapeError(fmt::format("{}: more than one -1 in {}", op, str(to)));
      infer = static_cast<int>(i);
    } else if (to[i] < 0) {
      throw ShapeError(fmt::format("{}: negative dim in {}", op, str(to)));
    } else if (to[i] == 0) {
      zero = true;
    } else {
      if (to[i] > kMaxElements / known)
        throw ShapeError(fmt::format("{}: cannot reshape {} into {}", op, from.to_string(), str(to)));
      known *= to[i];
    }
  }
  if (infer >= 0) {
    if (zero || from.num_elements() % known != 0)
      throw ShapeError(fmt::format("{}: cannot reshape {} into {}", op, from.to_string(), str(to)));
    out[infer] = from.num_elements() / known;
  }
  check_dims(op, out);
  if (out.num_elements() != from.num_elements())
    throw ShapeError(fmt::format("{}: cannot reshape {} ({} elements) into {}", op, from.to_string(),
                                 from.num_elements(), out.to_string()));
  return out;
}

inline std::vector<std::size_t> permutation(const char* op, const std::vector<int64_t>& axes, std::size_t rank) {
  if (axes.size() != rank)
    throw ShapeError(fmt::format("{}: {} axes for rank {}", op, axes.size(), rank));
  std::vector<std::size_t> out(rank);
  std::vector<bool> seen(rank, false);
  for (std::size_t i = 0; i < rank; ++i) {
    out[i] = wrap_dim(op, axes[i], rank);
    if (seen[out[i]]) throw ShapeError(fmt::format("{}: repeated axis in {}", op, str(axes)));
    seen[out[i]] = true;
  }
  return out;
}

// Python-style slice bounds: negatives count from the end, ends clamp, start > end gives an empty range.
struct SliceArg {
  int64_t start = 0;
  std::optional<int64_t> end = std::nullopt;  // nullopt: to the end of the dim
};
inline std::vector<Range> slice_ranges(const char* op, const Shape& s, const std::vector<SliceArg>& args) {
  if (args.size() > s.rank())
    throw IndexError(fmt::format("{}: {} ranges for shape {}", op, args.size(), s.to_string()));
  std::vector<Range> out(s.rank());
  for (std::size_t i = 0; i < s.rank(); ++i) {
    const int64_t n = s[i];
    if (i >= args.size()) {
      out[i] = {0, n};
      continue;
    }
    int64_t b = args[i].start, e = args[i].end.value_or(n);
    if (b < 0) b += n;
    if (e < 0) e += n;
    b = std::clamp<int64_t>(b, 0, n);
    e = std::clamp<int64_t>(e, 0, n);
    out[i] = {b, std::max(b, e)};
  }
  return out;
}
inline Shape sliced_shape(const std::vector<Range>& r) {
  Shape s;
  for (auto& x : r) s.dims.push_back(x.end - x.start);
  return s;
}

inline void cat(const char* op, const std::vector<Shape>& shapes, std::size_t dim) {
  if (shapes.empty()) throw ArgumentError(fmt::format("{}: empty list of tensors", op));
  for (auto& s : shapes) {
    bool ok = s.rank() == shapes[0].rank();
    for (std::size_t i = 0; ok && i < s.rank(); ++i) ok = i == dim || s[i] == shapes[0][i];
    if (!ok)
      throw ShapeError(fmt::format("{}: shapes {} and {} differ outside dim {}", op, shapes[0].to_string(),
                                   s.to_string(), dim));
  }
}

inline Shape matmul(const Shape& a, const Shape& b) {
  if (a.rank() < 2 || b.rank() != a.rank())
    throw ShapeError(fmt::format("matmul: needs two tensors of the same rank >= 2, got {} and {}", a.to_string(),
                                 b.to_string()));
  const std::size_t r = a.rank();
  if (a[r - 1] != b[r - 2])
    throw ShapeError(fmt::format("matmul: inner dims differ: {} @ {}", a.to_string(), b.to_string()));
  try {
    return matmul_geometry(a, b, false, false).out_shape();
  } catch (const ShapeError&) {
    throw ShapeError(
        fmt::format("matmul: batch dims of {} and {} are not broadcastable", a.to_string(), b.to_string()));
  }
}

// gather/scatter_add: indices of the same rank as x; every dim other than `dim` no larger than x's.
inline void gather(const char* op, std::size_t dim, const Shape& x, const Shape& idx) {
  bool ok = idx.rank() == x.rank();
  for (std::size_t i = 0; ok && i < x.rank(); ++i) ok = i == dim || idx[i] <= x[i];
  if (!ok)
    throw ShapeError(fmt::format("{}: index shape {} does not fit tensor {} along dim {}", op, idx.to_string(),
                                 x.to_string(), dim));
}

inline void index_select_add(const Shape& x, std::size_t dim, const Shape& idx, const Shape& values) {
  Shape expect = x;
  expect[dim] = idx[0];
  if (!(values == expect))
    throw ShapeError(fmt::format("select_assign: values {} should be {} for tensor {} and {} indices on dim {}",
                                 values.to_string(), expect.to_string(), x.to_string(), idx[0], dim));
}

inline void nonempty(const char* op, const Shape& s, std::optional<std::size_t> dim = std::nullopt) {
  if ((dim && s[*dim] == 0) || (!dim && s.num_elements() == 0))
    throw ShapeError(
        fmt::format("{}: cannot reduce an empty {} of shape {}", op, dim ? "dim" : "tensor", s.to_string()));
}

inline Shape conv2d(const Shape& x, const Shape& w, const Shape* bias, const Conv2dOptions& o) {
  // Every message ends with the arguments, so a failure deep in a model names the layer's shapes.
  const std::string args = fmt::format("(input {}, weight {})", x.to_string(), w.to_string());
  if (x.rank() != 4 || w.rank() != 4) throw ShapeError(fmt::format("conv2d: input and weight must be 4-D {}", args));
  // Option bounds keep the size arithmetic below (span, padded size) far from int64 overflow.
  for (int i = 0; i < 2; ++i)
    if (o.stride[i] > kMaxOption || o.padding[i] > kMaxOption || o.dilation[i] > kMaxOption || w[2 + i] > kMaxOption)
      throw ArgumentError(fmt::format("conv2d: kernel, stride, padding and dilation must be at most 2^31 {}", args));
  if (o.groups < 1 || o.groups > kMaxOption || x[1] % o.groups || w[0] % o.groups)
    throw ArgumentError(fmt::format("conv2d: groups {} must divide in and out channels {}", o.groups, args));
  if (w[1] != x[1] / o.groups)
    throw ShapeError(fmt::format("conv2d: weight expects {} input channels {}", w[1] * o.groups, args));
  if (bias && (bias->rank() != 1 || (*bias)[0] != w[0]))
    throw ShapeError(fmt::format("conv2d: bias {} must be [{}] {}", bias->to_string(), w[0], args));
  Shape out{x[0], w[0], 0, 0};
  for (int i = 0; i < 2; ++i) {
    if (o.stride[i] < 1 || o.dilation[i] < 1 || o.padding[i] < 0)
      throw ArgumentError(fmt::format("conv2d: stride and dilation must be >= 1 and padding >= 0 {}", args));
    const int64_t span = o.dilation[i] * (w[2 + i] - 1) + 1;
    const int64_t padded = x[2 + i] + 2 * o.padding[i];
    if (padded < span) throw ShapeError(fmt::format("conv2d: kernel larger than padded input {}", args));
    out[2 + i] = window_out_size(x[2 + i], w[2 + i], o.stride[i], o.padding[i], o.dilation[i]);
  }
  return out;
}

inline Shape pool2d(const char* op, const Shape& x, const Pool2dOptions& o) {
  if (x.rank() != 4) throw ShapeError(fmt::format("{}: input must be 4-D, got {}", op, x.to_string()));
  for (int i = 0; i < 2; ++i) {
    if (o.kernel[i] < 1 || o.stride[i] < 1 || o.dilation[i] < 1 || o.padding[i] < 0)
      throw ArgumentError(fmt::format("{}: kernel, stride and dilation must be >= 1 and padding >= 0", op));
    if (o.kernel[i] > kMaxOption || o.stride[i] > kMaxOption || o.dilation[i] > kMaxOption)
      throw ArgumentError(fmt::format("{}: kernel, stride and dilation must be at most 2^31", op));
    if (o.padding[i] > o.kernel[i] / 2)
      throw ArgumentError(fmt::format("{}: padding must be at most half the kernel size", op));
    const int64_t span = o.dilation[i] * (o.kernel[i] - 1) + 1;
    const int64_t padded = x[2 + i] + 2 * o.padding[i];
    if (padded < span) throw ShapeError(fmt::format("{}: kernel larger than padded input {}", op, x.to_string()));
  }
  const auto hw = pool2d_out_hw(x, o);
  return Shape{x[0], x[1], hw[0], hw[1]};
}

}  // namespace ember::checks
