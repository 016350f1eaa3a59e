// ONNX operators of the nn family (h-onnx-nn): Gemm, MatMul and Dropout here; convolutions (nn_conv.cpp), pools
// (nn_pool.cpp), normalizations (nn_norm.cpp) and Resize / Upsample (nn_resize.cpp) in their own files.
#include <fmt/format.h>

#include <atomic>

#include "onnx/ops/nn_common.hpp"

namespace ember::onnx_import {
namespace nn_ops {
namespace {

// Gemm: alpha * A' B' + beta * C with A' = A^T when transA, B' = B^T when transB, C broadcast to the result.
Outputs gemm(OpContext& ctx) {
  DynTensor a = float_input(ctx, 0), b = float_input(ctx, 1);
  if (rank_of(a) != 2 || rank_of(b) != 2)
    ctx.fail(fmt::format("A and B must be 2-D, got ranks {} and {}", rank_of(a), rank_of(b)));
  const bool trans_a = ctx.node.attr_int("transA", 0) != 0, trans_b = ctx.node.attr_int("transB", 0) != 0;
  DynTensor y;
  if (trans_b && !trans_a) {
    // PyTorch's Linear (B = weight [N, K]). A transpose is a permute copy, and copying the weight on every call
    // was most of an exported MLP's inference time (bench/onnx). y = (B @ A^T)^T copies M*K + M*N elements
    // instead of N*K, and none at all for M == 1, where both transposes are reshapes.
    const auto da = dims_of(a), db = dims_of(b);
    const int64_t m = da[0], k = da[1], n = db[0];
    if (m == 1) {
      y = capi::reshape(capi::matmul(b, capi::reshape(a, {k, 1})), {1, n});
    } else if (m * k + m * n < n * k) {
      y = capi::transpose(capi::matmul(b, capi::transpose(a, 0, 1)), 0, 1);
    } else {
      y = capi::matmul(a, capi::transpose(b, 0, 1));
    }
  } else {
    if (trans_a) a = capi::transpose(a, 0, 1);
    if (trans_b) b = capi::transpose(b, 0, 1);
    y = capi::matmul(a, b);
  }
  const double alpha = ctx.node.attr_float("alpha", 1.0), beta = ctx.node.attr_float("beta", 1.0);
  if (alpha != 1.0) y = capi::scalar(y, ScalarOp::Mul, alpha);
  if (ctx.has_input(2) && beta != 0.0) {
    const DynTensor& c = float_input(ctx, 2);
    y = capi::binary(y, beta == 1.0 ? c : capi::scalar(c, ScalarOp::Mul, beta), BinaryOp::Add);
  }
  return {y};
}

// MatMul with NumPy's rules: 1-D operands gain a dim of 1 that the result drops again; batch dims broadcast.
// Integer operands are multiplied as F64 (exact below 2^53) and cast back.
Outputs matmul(OpContext& ctx) {
  DynTensor a = ctx.input(0), b = ctx.input(1);
  const DType dt = capi::dtype(a);
  if (dt != capi::dtype(b))
    ctx.fail(fmt::format("A is {} and B is {}", dtype_name(dt), dtype_name(capi::dtype(b))));
  if (dt == DType::Bool) ctx.fail("bool operands are not supported");
  if (!dtype_is_float(dt)) {
    a = capi::cast(a, DType::F64);
    b = capi::cast(b, DType::F64);
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
// executor's training flag) with a ratio > 0; then x * mask / (1 - ratio) with mask ~ Bernoulli(1 - ratio), seeded
// by the seed attribute or else a process counter (a fresh mask per call).
Outputs dropout(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  double ratio = ctx.node.attr_float("ratio", 0.5);
  bool training = ctx.training;
  if (ctx.opset >= 12) {
    ratio = ctx.has_input(1) ? ctx.scalar(1) : 0.5;
    if (ctx.has_input(2)) training = ctx.scalar(2) != 0.0;
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
  static std::atomic<uint64_t> calls{0};
  const uint64_t seed = ctx.node.has_attr("seed") ? static_cast<uint64_t>(ctx.node.attr_int("seed", 0))
                                                  : 0x9e3779b97f4a7c15ULL * (calls.fetch_add(1) + 1);
  const DynTensor keep = capi::cast(capi::random(capi::device(x), Bernoulli{1.0 - ratio}, seed, s), capi::dtype(x));
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
}

}  // namespace ember::onnx_import
