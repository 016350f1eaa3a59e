// ONNX operators of the nn family (h-onnx-nn): Gemm, MatMul and Dropout here; convolutions (nn_conv.cpp), pools
// (nn_pool.cpp), normalizations (nn_norm.cpp) and Resize / Upsample (nn_resize.cpp) in their own files.
#include <fmt/format.h>

#include <atomic>
#include <optional>

#include "onnx/fuse.hpp"
#include "onnx/ops/nn_common.hpp"
#include "onnx/ops/numpy_mt19937.hpp"

namespace ember::onnx_import {
namespace nn_ops {
namespace {

// The bias of a Gemm that the fused linear can take: C of shape [N] or [1, N] with beta 1 (PyTorch's Linear), as
// a [N] tensor; nullopt for any other C (broadcast over rows or columns, a full [M, N], scaled).
std::optional<DynTensor> row_bias(OpContext& ctx, int64_t n, double beta) {
  if (beta != 1.0) return std::nullopt;
  const DynTensor& c = float_input(ctx, 2);
  const std::vector<int64_t> cd = dims_of(c);
  if (cd == std::vector<int64_t>{n}) return c;
  if (cd == std::vector<int64_t>{1, n}) return capi::reshape(c, {n});
  return std::nullopt;
}

// Gemm: alpha * A' B' + beta * C with A' = A^T when transA, B' = B^T when transB, C broadcast to the result; then
// ReLU when the load-time fusion (onnx/fuse.hpp) merged the Relu that read it.
Outputs gemm(OpContext& ctx) {
  DynTensor a = float_input(ctx, 0), b = float_input(ctx, 1);
  if (rank_of(a) != 2 || rank_of(b) != 2)
    ctx.fail(fmt::format("A and B must be 2-D, got ranks {} and {}", rank_of(a), rank_of(b)));
  const bool ta = ctx.node.attr_int("transA", 0) != 0, tb = ctx.node.attr_int("transB", 0) != 0;
  const bool relu = ctx.node.attr_int(kFusedReluAttr, 0) != 0;
  const std::vector<int64_t> ad = dims_of(a), bd = dims_of(b);
  const int64_t m = ta ? ad[1] : ad[0], k = ta ? ad[0] : ad[1], n = tb ? bd[0] : bd[1];
  const double alpha = ctx.node.attr_float("alpha", 1.0), beta = ctx.node.attr_float("beta", 1.0);
  const bool has_c = ctx.has_input(2) && beta != 0.0;
  // PyTorch's Linear (A as is, alpha 1, a row bias): one fused linear that reads B (transposed or not) in place and
  // adds the bias and ReLU in the GEMM's output pass where the backend can (ops_linear.cpp; recorded ops instead
  // when a gradient is wanted).
  if (!ta && alpha == 1.0 && (tb ? bd[1] : bd[0]) == k) {
    const std::optional<DynTensor> bias = has_c ? row_bias(ctx, n, beta) : std::nullopt;
    if (!has_c || bias) return {capi::linear(a, b, bias ? &*bias : nullptr, tb, relu)};
  }
  // A transpose is a copy (except of a row or column). PyTorch's Linear exports transB = 1 with a [N, K] weight:
  // Y = (B A'^T)^T copies A' and Y (M * (K + N) values, none for M = 1) instead of the weight (N * K).
  DynTensor y;
  if (tb && m * (k + n) < n * k) {
    y = capi::transpose(capi::matmul(b, ta ? a : capi::transpose(a, 0, 1)), 0, 1);
  } else {
    y = capi::matmul(ta ? capi::transpose(a, 0, 1) : a, tb ? capi::transpose(b, 0, 1) : b);
  }
  if (alpha != 1.0) y = capi::scalar(y, ScalarOp::Mul, alpha);
  if (has_c) {
    const DynTensor& c = float_input(ctx, 2);
    y = capi::binary(y, beta == 1.0 ? c : capi::scalar(c, ScalarOp::Mul, beta), BinaryOp::Add);
  }
  if (relu) y = capi::unary(y, UnaryOp::Relu);
  return {y};
}

// MatMul with NumPy's rules: 1-D operands gain a dim of 1 that the result drops again; batch dims broadcast.
// Integer operands are multiplied as floats (F64 on the CPU: exact below 2^53) and cast back.
Outputs matmul(OpContext& ctx) {
  DynTensor a = ctx.input(0), b = ctx.input(1);
  const DType dt = capi::dtype(a);
  if (dt != capi::dtype(b))
    ctx.fail(fmt::format("A is {} and B is {}", dtype_name(dt), dtype_name(capi::dtype(b))));
  if (dt == DType::Bool) ctx.fail("bool operands are not supported");
  if (!dtype_is_float(dt)) {
    a = capi::cast(a, exact_float_for(a));
    b = capi::cast(b, exact_float_for(b));
  }
  const int64_t ra = rank_of(a), rb = rank_of(b);
  if (ra < 1 || rb < 1) ctx.fail("operands must be at least 1-D");
  if (ra == 1) a = capi::reshape(a, {1, -1});
  if (rb == 1) b = capi::reshape(b, {-1, 1});
  DynTensor y = capi::matmul(a, b);
  if (ra == 1 || rb == 1) {
    std::vector<int64_t> d = dims_of(y);
    d.erase(d.end() - (rb == 1 ? 1 : 2));
    y = capi::reshape(y, d);
  }
  if (!dtype_is_float(dt)) y = capi::cast(y, dt);
  return {y};
}

// Dropout: the identity with an all-true mask unless training (opset 12: the training_mode input; before: the
// executor's training flag) with a ratio > 0; then x * mask / (1 - ratio), mask = uniform >= ratio from NumPy's
// generator (numpy_mt19937.hpp) seeded by the seed attribute (ONNX's reference masks) or else a process counter
// (a fresh mask per call).
Outputs dropout(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  double ratio = ctx.node.attr_float("ratio", 0.5);
  bool training = ctx.training;
  if (ctx.opset >= 12) {
    const auto one = [&](std::size_t i) {
      const std::vector<double> v = host_doubles(ctx, i, 1);
      if (v.size() != 1) ctx.fail(fmt::format("input {} must hold one value", i));
      return v[0];
    };
    ratio = ctx.has_input(1) ? one(1) : 0.5;
    if (ctx.has_input(2)) training = one(2) != 0.0;
  }
  if (!(ratio >= 0.0 && ratio < 1.0)) ctx.fail(fmt::format("ratio {} must be in [0, 1)", ratio));
  const Shape s = capi::shape(x);
  // Opsets 7-9 give the mask in x's dtype, later ones as bool.
  const DType mask_type = ctx.opset >= 10 ? DType::Bool : capi::dtype(x);
  const bool want_mask = ctx.num_outputs() > 1 && !ctx.node.outputs[1].empty();
  if (!training || ratio == 0.0) {
    Outputs out{x};
    if (want_mask) out.emplace_back(capi::full(capi::device(x), mask_type, s, 1.0));
    return out;
  }
  if (!dtype_is_float(capi::dtype(x))) ctx.fail("training dropout needs a float input");
  // The mask is drawn on the host (as capi::random does) from NumPy's generator: keep where uniform >= ratio.
  static std::atomic<uint32_t> calls{0};
  const uint32_t seed = ctx.node.has_attr("seed") ? static_cast<uint32_t>(ctx.node.attr_int("seed", 0))
                                                  : 0x9e3779b9u * (calls.fetch_add(1) + 1);
  if (s.num_elements() > (int64_t{1} << 31)) ctx.fail("the input is too large for a host-drawn mask");
  NumpyMt19937 rng(seed);
  std::vector<uint8_t> bits(static_cast<std::size_t>(s.num_elements()));
  for (uint8_t& b : bits) b = rng.uniform() >= ratio ? 1 : 0;
  const DynTensor keep = capi::from_data(capi::device(x), TensorData::from_vec<uint8_t>(bits, s).convert(capi::dtype(x)));
  Outputs out{capi::scalar(capi::binary(x, keep, BinaryOp::Mul), ScalarOp::Mul, 1.0 / (1.0 - ratio))};
  if (want_mask) out.emplace_back(capi::cast(keep, mask_type));
  return out;
}

}  // namespace
}  // namespace nn_ops

void register_nn_ops(OpRegistry& r) {
  r.add("Gemm", nn_ops::gemm);
  r.add("MatMul", nn_ops::matmul);
  r.add("Dropout", nn_ops::dropout);
  nn_ops::register_conv(r);
  nn_ops::register_pool(r);
  nn_ops::register_norm(r);
  nn_ops::register_resize(r);
  nn_ops::register_quant(r);
}

}  // namespace ember::onnx_import
