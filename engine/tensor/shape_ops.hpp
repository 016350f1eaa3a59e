#pragma once
// Shape ops composed from the backend's primitives (issue 13): pad, step slices, baddbmm, logsumexp, std, einsum and
// interpolate. They work on primitives and Shapes, not on Tensor<B, D>, so the typed Tensor API (tensor.hpp,
// shape_ops_tensor.hpp) and the C runtime (c_api/src/runtime/ops_shape.cpp) run the same code at any rank. Each is
// reshape / permute / slice / index_select / matmul / reduce / elementwise, so every backend and Autodiff get them,
// gradients included, without a kernel of their own. Where a dedicated kernel would be faster the function says so.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/backend/backend.hpp"
#include "engine/tensor/checks.hpp"

namespace ember {

// torch.nn.functional.pad's modes.
enum class PadMode { Constant, Reflect, Replicate };
// torch.nn.functional.interpolate's modes that Ember has (4-D NCHW input).
enum class InterpolateMode { Nearest, Bilinear };

// One dim of a step slice, Python's start:end:step with a positive step (torch refuses steps <= 0).
struct StepSlice {
  int64_t start = 0;
  std::optional<int64_t> end = std::nullopt;  // nullopt: to the end of the dim
  int64_t step = 1;
};

struct InterpolateOptions {
  std::optional<std::array<int64_t, 2>> size;        // output [H, W]; exactly one of size / scale_factor
  std::optional<std::array<double, 2>> scale_factor;  // output = floor(input * scale)
  InterpolateMode mode = InterpolateMode::Nearest;
  bool align_corners = false;  // bilinear only (torch refuses it for nearest)
};

namespace shape_ops {

template <class B>
using FP = typename B::FloatPrimitive;

// x's elements at host-side `indices` along `dim` (index_select with a small Int tensor made on x's device).
template <class B, class K>
Primitive<B, K> take(const Primitive<B, K>& x, std::size_t dim, const std::vector<int64_t>& indices) {
  const auto dev = B::template device<K>(x);
  const auto idx = B::template from_data<Int>(
      TensorData::from_vec<int64_t>(indices, Shape{static_cast<int64_t>(indices.size())}), dev);
  return B::template index_select<K>(x, dim, idx);
}

// A host vector as a Float tensor of `shape` on x's device (interpolation weights).
template <class B>
FP<B> host_float(const FP<B>& like, const std::vector<double>& v, const Shape& shape) {
  return B::template from_data<Float>(TensorData::from_vec<double>(v, shape), B::template device<Float>(like));
}

template <class B>
FP<B> detached(const FP<B>& p) {
  if constexpr (requires { B::float_detach(p); }) return B::float_detach(p);
  else return p;
}

inline std::string text(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

// Distinct wrapped dims; empty means every dim.
inline std::vector<std::size_t> reduce_dims(const char* op, const std::vector<int64_t>& dims, std::size_t rank) {
  std::vector<std::size_t> out;
  if (dims.empty()) {
    for (std::size_t i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int64_t d : dims) {
    const std::size_t w = wrap_dim(op, d, rank);
    if (std::find(out.begin(), out.end(), w) != out.end())
      throw ArgumentError(fmt::format("{}: dim {} appears more than once in {}", op, d, text(dims)));
    out.push_back(w);
  }
  return out;
}

// ---------------------------------------------------------------- pad
// torch.nn.functional.pad: `pads` holds (left, right) pairs starting from the last dim. Constant padding works at any
// rank and takes negative pads (they crop); reflect and replicate pad the last 1..3 dims of a tensor with at least
// one more (batch or channel) dim, as torch's ReflectionPad / ReplicationPad (torch also caps the rank at k + 2).
template <class B, class K>
Primitive<B, K> pad(const Primitive<B, K>& x, const std::vector<int64_t>& pads, PadMode mode, double value) {
  const Shape s = B::template shape<K>(x);
  if (pads.size() % 2)
    throw ArgumentError(fmt::format("pad: the padding {} must have an even length ((left, right) per dim)",
                                    text(pads)));
  const std::size_t k = pads.size() / 2;
  if (k > s.rank())
    throw ArgumentError(fmt::format("pad: padding {} covers {} dims, the input {} has {}", text(pads), k,
                                    s.to_string(), s.rank()));
  for (int64_t p : pads)
    if (std::abs(p) > kMaxElements) throw ArgumentError(fmt::format("pad: padding {} is too large", text(pads)));
  if (mode == PadMode::Constant) {
    Shape out = s;
    std::vector<Range> crop(s.rank()), place(s.rank());
    for (std::size_t d = 0; d < s.rank(); ++d) crop[d] = place[d] = {0, s[d]};
    bool grows = false, crops = false;
    for (std::size_t i = 0; i < k; ++i) {
      const std::size_t d = s.rank() - 1 - i;
      const int64_t l = pads[2 * i], r = pads[2 * i + 1];
      out[d] = s[d] + l + r;
      if (out[d] < 0)
        throw ArgumentError(fmt::format("pad: padding {} makes dim {} of {} negative", text(pads), d, s.to_string()));
      crop[d] = {std::max<int64_t>(0, -l), s[d] - std::max<int64_t>(0, -r)};
      if (crop[d].end < crop[d].start) crop[d].end = crop[d].start;
      place[d] = {std::max<int64_t>(0, l), std::max<int64_t>(0, l) + crop[d].end - crop[d].start};
      grows = grows || l > 0 || r > 0;
      crops = crops || l < 0 || r < 0;
    }
    check_dims("pad", out);
    const auto inner = crops ? B::template slice<K>(x, crop) : x;
    if (!grows) return inner;
    // The pad value everywhere, x written into the middle: one slice_assign, whose gradient is the slice of the
    // output's gradient. A dedicated kernel would write each element once instead of twice.
    return B::template slice_assign<K>(B::template full<K>(out, value, B::template device<K>(x)), place, inner);
  }
  const char* name = mode == PadMode::Reflect ? "reflect" : "replicate";
  if (s.num_elements() == 0 && k <= s.rank()) {
    // No values to copy: the constant path gives the same (empty) shape without host index lists as long as a
    // huge zero-element dim (shapes like [0, 2^40]).
    bool ok = true;
    for (std::size_t i = 0; i < k; ++i) ok = ok && pads[2 * i] >= 0 && pads[2 * i + 1] >= 0;
    if (ok) return pad<B, K>(x, pads, PadMode::Constant, 0.0);
  }
  if (k < 1 || k > 3)
    throw ArgumentError(fmt::format("pad: {} padding takes 1 to 3 (left, right) pairs, got {}", name, text(pads)));
  if (s.rank() < k + 1)
    throw ShapeError(fmt::format("pad: {} padding of {} dims needs an input of rank >= {}, got {}", name, k, k + 1,
                                 s.to_string()));
  Primitive<B, K> y = x;
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t d = s.rank() - 1 - i;
    const int64_t l = pads[2 * i], r = pads[2 * i + 1], n = s[d];
    if (l < 0 || r < 0)
      throw ArgumentError(fmt::format("pad: {} padding must be non-negative, got {}", name, text(pads)));
    if (l == 0 && r == 0) continue;
    if (mode == PadMode::Reflect && (l >= n || r >= n))
      throw ArgumentError(fmt::format("pad: reflect padding ({}, {}) must be smaller than dim {} of {}", l, r, d,
                                      s.to_string()));
    if (n == 0) throw ArgumentError(fmt::format("pad: replicate padding of the empty dim {} of {}", d, s.to_string()));
    // Source index of every output position, gathered with index_select (its gradient sums the copies back).
    std::vector<int64_t> src;
    src.reserve(static_cast<std::size_t>(n + l + r));
    for (int64_t j = -l; j < n + r; ++j) {
      if (mode == PadMode::Reflect) src.push_back(j < 0 ? -j : j >= n ? 2 * (n - 1) - j : j);
      else src.push_back(std::clamp<int64_t>(j, 0, n - 1));
    }
    y = take<B, K>(y, d, src);
  }
  return y;
}

// ---------------------------------------------------------------- step slices
// x[start:end:step] per leading dim (Python's clamping; dims past the list are kept whole). A step > 1 gathers the
// selected positions with index_select; a strided view in the backend would avoid that copy.
template <class B, class K>
Primitive<B, K> slice_step(const Primitive<B, K>& x, const std::vector<StepSlice>& args) {
  const Shape s = B::template shape<K>(x);
  std::vector<checks::SliceArg> plain;
  for (const auto& a : args) {
    if (a.step <= 0) throw ArgumentError(fmt::format("slice: step must be greater than zero, got {}", a.step));
    plain.push_back({a.start, a.end});
  }
  const auto ranges = checks::slice_ranges("slice", s, plain);
  Primitive<B, K> y = B::template slice<K>(x, ranges);
  for (std::size_t d = 0; d < args.size(); ++d) {
    const int64_t len = ranges[d].end - ranges[d].start, step = args[d].step;
    if (step == 1 || len <= 1) continue;
    const int64_t count = (len + step - 1) / step;
    if (B::template shape<K>(y).num_elements() == 0) {  // nothing to gather (and len may be huge): a shorter slice
      std::vector<Range> r;
      for (auto n : B::template shape<K>(y).dims) r.push_back({0, n});
      r[d] = {0, count};
      y = B::template slice<K>(y, r);
      continue;
    }
    std::vector<int64_t> idx;
    for (int64_t j = 0; j < len; j += step) idx.push_back(j);
    y = take<B, K>(y, d, idx);
  }
  return y;
}

// ---------------------------------------------------------------- baddbmm
// beta * input + alpha * (batch1 @ batch2); input broadcasts to [b, n, p]. As torch, beta == 0 ignores input (NaN
// in it does not propagate).
template <class B>
FP<B> baddbmm(const FP<B>& input, const FP<B>& b1, const FP<B>& b2, double beta, double alpha) {
  const Shape s1 = B::template shape<Float>(b1), s2 = B::template shape<Float>(b2), si = B::template shape<Float>(input);
  if (s1.rank() != 3 || s2.rank() != 3)
    throw ShapeError(fmt::format("baddbmm: batch1 {} and batch2 {} must be rank 3", s1.to_string(), s2.to_string()));
  if (s1[0] != s2[0] || s1[2] != s2[1])
    throw ShapeError(fmt::format("baddbmm: batch1 {} and batch2 {} do not multiply ([b, n, m] @ [b, m, p])",
                                 s1.to_string(), s2.to_string()));
  const Shape out{s1[0], s1[1], s2[2]};
  if (si.rank() > 3 || !(broadcast_shapes("baddbmm", si, out) == out))
    throw ShapeError(fmt::format("baddbmm: input {} does not broadcast to {}", si.to_string(), out.to_string()));
  auto prod = B::float_matmul(b1, b2);
  if (alpha != 1.0) prod = B::float_scalar(prod, ScalarOp::Mul, alpha);
  if (beta == 0.0) return prod;
  Shape s3 = si;  // input at rank 3 (leading 1s) so the backend's same-rank broadcast applies
  s3.dims.insert(s3.dims.begin(), 3 - si.rank(), 1);
  auto in = B::template reshape<Float>(input, s3);
  if (beta != 1.0) in = B::float_scalar(in, ScalarOp::Mul, beta);
  return B::float_binary(in, prod, BinaryOp::Add);
}

// ---------------------------------------------------------------- logsumexp, std (keepdim)
// log(sum(exp(x))) over `dims` (empty: all), kept with size 1. Stable: the max (detached; the result does not depend
// on the shift) is subtracted first, and an infinite max is replaced by 0 as torch does, so all -inf gives -inf.
template <class B>
FP<B> logsumexp(const FP<B>& x, const std::vector<int64_t>& dims) {
  const Shape s = B::template shape<Float>(x);
  const auto ds = reduce_dims("logsumexp", dims, s.rank());
  for (auto d : ds) checks::nonempty("logsumexp", s, d);
  FP<B> m = x;
  for (auto d : ds) m = B::float_reduce(m, ReduceOp::Max, d);
  m = detached<B>(m);
  m = B::template mask_fill<Float>(m, B::float_predicate(m, PredicateOp::IsInf), 0.0);
  FP<B> e = B::float_unary(B::float_binary(x, m, BinaryOp::Sub), UnaryOp::Exp);
  for (auto d : ds) e = B::float_reduce(e, ReduceOp::Sum, d);
  return B::float_binary(B::float_unary(e, UnaryOp::Log), m, BinaryOp::Add);
}

// Standard deviation over `dims` (empty: all), kept with size 1: sqrt(sum((x - mean)^2) / max(N - correction, 0)),
// N the number of reduced elements (correction 1 = unbiased, torch's default).
template <class B>
FP<B> std_dev(const FP<B>& x, const std::vector<int64_t>& dims, double correction) {
  const Shape s = B::template shape<Float>(x);
  const auto ds = reduce_dims("std", dims, s.rank());
  double n = 1;
  FP<B> mean = x;
  for (auto d : ds) {
    n *= static_cast<double>(s[d]);
    mean = B::float_reduce(mean, ReduceOp::Mean, d);
  }
  const auto c = B::float_binary(x, mean, BinaryOp::Sub);
  FP<B> sq = B::float_binary(c, c, BinaryOp::Mul);
  for (auto d : ds) sq = B::float_reduce(sq, ReduceOp::Sum, d);
  return B::float_unary(B::float_scalar(sq, ScalarOp::Div, std::max(n - correction, 0.0)), UnaryOp::Sqrt);
}

// ---------------------------------------------------------------- interpolate (NCHW)
inline constexpr int64_t kMaxInterpolateSize = int64_t(1) << 24;

// The options alone (Upsample checks them when it is built): one of size / scale_factor, each value positive.
inline void check_interpolate_options(const InterpolateOptions& o) {
  if (o.size.has_value() == o.scale_factor.has_value())
    throw ArgumentError("interpolate: give exactly one of size and scale_factor");
  if (o.align_corners && o.mode == InterpolateMode::Nearest)
    throw ArgumentError("interpolate: align_corners can only be set with the bilinear mode");
  for (std::size_t i = 0; i < 2; ++i) {
    if (o.size && ((*o.size)[i] <= 0 || (*o.size)[i] > kMaxInterpolateSize))
      throw ArgumentError(fmt::format("interpolate: size [{}, {}] must be in 1..{}", (*o.size)[0], (*o.size)[1],
                                      kMaxInterpolateSize));
    if (o.scale_factor && !((*o.scale_factor)[i] > 0 && std::isfinite((*o.scale_factor)[i])))
      throw ArgumentError(fmt::format("interpolate: scale_factor must be positive and finite, got {}",
                                      (*o.scale_factor)[i]));
  }
}

inline std::array<int64_t, 2> interpolate_size(const Shape& s, const InterpolateOptions& o) {
  if (s.rank() != 4) throw ShapeError("interpolate: input must be 4-D (N, C, H, W), got " + s.to_string());
  check_interpolate_options(o);
  std::array<int64_t, 2> out{};
  for (std::size_t i = 0; i < 2; ++i) {
    if (o.size) {
      out[i] = (*o.size)[i];
    } else {
      const double f = (*o.scale_factor)[i];
      const double v = std::floor(static_cast<double>(s[2 + i]) * f);
      if (v > static_cast<double>(kMaxElements))
        throw ArgumentError(fmt::format("interpolate: scale_factor {} gives too large an output", f));
      out[i] = static_cast<int64_t>(v);
    }
    if (out[i] <= 0)
      throw ArgumentError(fmt::format("interpolate: output size [{}, {}] must be positive", out[0], out[1]));
    if (out[i] > kMaxInterpolateSize)  // the index lists are built on the host, one entry per output position
      throw ArgumentError(fmt::format("interpolate: output size {} is larger than {}", out[i], kMaxInterpolateSize));
  }
  if (s[2] == 0 || s[3] == 0) throw ShapeError("interpolate: empty spatial dims in " + s.to_string());
  check_dims("interpolate", Shape{s[0], s[1], out[0], out[1]});
  return out;
}

// torch 1.13's nearest source index (UpSample.h nearest_idx): the scale in float, floor(dst * scale), clamped.
inline int64_t nearest_index(int64_t dst, int64_t in, int64_t out, std::optional<double> scale_factor) {
  if (out == in) return dst;
  if (out == 2 * in) return dst >> 1;
  const float scale = scale_factor ? static_cast<float>(1.0 / *scale_factor)
                                   : static_cast<float>(in) / static_cast<float>(out);
  return std::min(static_cast<int64_t>(std::floor(static_cast<float>(dst) * scale)), in - 1);
}

// Linear interpolation along `dim` (2 or 3) to `out` positions: torch 1.13's area_pixel_compute_source_index, then
// x[i0] * (1 - t) + x[i1] * t with the weights as broadcast Float tensors. Bilinear is this along H, then W.
template <class B>
FP<B> linear_along(const FP<B>& x, std::size_t dim, int64_t out, bool align_corners, std::optional<double> factor) {
  const Shape s = B::template shape<Float>(x);
  const int64_t in = s[dim];
  const double scale = align_corners ? (out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0)
                       : factor     ? 1.0 / *factor
                                    : static_cast<double>(in) / static_cast<double>(out);
  std::vector<int64_t> i0(static_cast<std::size_t>(out)), i1(i0.size());
  std::vector<double> w0(i0.size()), w1(i0.size());
  for (int64_t j = 0; j < out; ++j) {
    const double src = align_corners ? scale * static_cast<double>(j)
                                     : std::max(scale * (static_cast<double>(j) + 0.5) - 0.5, 0.0);
    const auto lo = std::min(static_cast<int64_t>(src), in - 1);
    i0[j] = lo;
    i1[j] = lo + (lo < in - 1 ? 1 : 0);
    w1[j] = src - static_cast<double>(lo);
    w0[j] = 1.0 - w1[j];
  }
  Shape ws(std::vector<int64_t>(s.rank(), 1));
  ws[dim] = out;
  const auto a = B::float_binary(take<B, Float>(x, dim, i0), host_float<B>(x, w0, ws), BinaryOp::Mul);
  const auto b = B::float_binary(take<B, Float>(x, dim, i1), host_float<B>(x, w1, ws), BinaryOp::Mul);
  return B::float_binary(a, b, BinaryOp::Add);
}

// torch.nn.functional.interpolate on NCHW input. Composed from index_select and elementwise ops (a fused kernel
// would read each input element once instead of two to four times).
template <class B>
FP<B> interpolate(const FP<B>& x, const InterpolateOptions& o) {
  const Shape s = B::template shape<Float>(x);
  const auto out = interpolate_size(s, o);
  auto factor = [&](std::size_t i) -> std::optional<double> {
    if (o.scale_factor) return (*o.scale_factor)[i];
    return std::nullopt;
  };
  if (o.mode == InterpolateMode::Nearest) {
    FP<B> y = x;
    for (std::size_t i = 0; i < 2; ++i) {
      std::vector<int64_t> idx(static_cast<std::size_t>(out[i]));
      for (int64_t j = 0; j < out[i]; ++j) idx[j] = nearest_index(j, s[2 + i], out[i], factor(i));
      y = take<B, Float>(y, 2 + i, idx);
    }
    return y;
  }
  const auto h = linear_along<B>(x, 2, out[0], o.align_corners, factor(0));
  return linear_along<B>(h, 3, out[1], o.align_corners, factor(1));
}

}  // namespace shape_ops
}  // namespace ember
