// ember.h: rotary position embedding (issue 13, h-rope). Composed from the runtime's differentiable ops (slice, cat,
// mul, add, neg) rather than a new backend op, so every backend and autodiff get it with nothing to add; the
// cos/sin table is computed on the host in double precision like ember::nn::RotaryEmbedding
// (engine/nn/positional_embedding.hpp), so C, C++ and Python give the same values.
#include <cmath>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "c_api/src/boundary.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

// cos and sin of (offset + t) * base^(-2i / rotary_dim), duplicated over both halves: [L, rotary_dim] each, in x's
// dtype on x's device so they broadcast over x's leading dims.
std::pair<DynTensor, DynTensor> rotary_tables(const DynTensor& x, int64_t L, int64_t rotary_dim, double base,
                                              int64_t offset) {
  const int64_t half = rotary_dim / 2;
  std::vector<double> c(static_cast<std::size_t>(L * rotary_dim)), s(c.size());
  for (int64_t t = 0; t < L; ++t)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(offset + t) *
                           std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(rotary_dim));
      for (int64_t j : {i, i + half}) {
        c[static_cast<std::size_t>(t * rotary_dim + j)] = std::cos(angle);
        s[static_cast<std::size_t>(t * rotary_dim + j)] = std::sin(angle);
      }
    }
  const Shape table({L, rotary_dim});
  const auto make = [&](const std::vector<double>& v) {
    return cast(from_data(device(x), TensorData::from_span<double>(std::span<const double>(v), table)), dtype(x));
  };
  return {make(c), make(s)};
}

DynTensor rotary_embedding(const DynTensor& x, int64_t rotary_dim, double base, int64_t offset) {
  const Shape s = shape(x);
  if (!dtype_is_float(dtype(x)))
    throw KindError(fmt::format("x must be a float tensor, got {}", dtype_name(dtype(x))));
  if (s.rank() < 2) throw ShapeError(fmt::format("x must be [..., L, D], got {}", s.to_string()));
  const int64_t L = s.dims[s.rank() - 2], D = s.dims[s.rank() - 1];
  if (rotary_dim <= 0 || rotary_dim % 2 != 0 || rotary_dim > D)
    throw ArgumentError(fmt::format("rotary_dim {} must be even, positive and <= D = {} of {}", rotary_dim,
                                    D, s.to_string()));
  if (!(base > 0.0) || !std::isfinite(base))
    throw ArgumentError(fmt::format("base {} must be finite and > 0", base));
  // Positions up to 2^53 stay exact in the double angle.
  if (offset < 0 || offset > (int64_t{1} << 53) - L)
    throw ArgumentError(fmt::format("offset {} must be in [0, 2^53 - L]", offset));
  const auto [cos_t, sin_t] = rotary_tables(x, L, rotary_dim, base, offset);
  const int64_t half = rotary_dim / 2;
  const auto last = [&](int64_t start, int64_t end) {
    std::vector<checks::SliceArg> r(s.rank());
    r.back() = {start, end};
    return slice(x, r);
  };
  const DynTensor rot = last(0, rotary_dim), x1 = last(0, half), x2 = last(half, rotary_dim);
  const DynTensor neg_x2 = unary(x2, UnaryOp::Neg);
  const DynTensor turned = cat({&neg_x2, &x1}, -1);
  const DynTensor rotated =
      binary(binary(rot, cos_t, BinaryOp::Mul), binary(turned, sin_t, BinaryOp::Mul), BinaryOp::Add);
  if (rotary_dim == D) return rotated;
  const DynTensor pass = last(rotary_dim, D);
  return cat({&rotated, &pass}, -1);
}

}  // namespace

extern "C" {

ember_status ember_tensor_rotary_embedding(const ember_tensor* x, int64_t rotary_dim, double base, int64_t offset,
                                           ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    o = make_handle<ember_tensor>(rotary_embedding(use(x, "x"), rotary_dim, base, offset));
  });
}

}  // extern "C"
