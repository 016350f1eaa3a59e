// Normalizations: BatchNormalization (inference and training_mode), InstanceNormalization, LayerNormalization,
// MeanVarianceNormalization and LRN, composed from runtime reductions and elementwise ops (h-onnx-nn), so they run
// on every backend and their gradients reach scale, bias and the input.
#include <fmt/format.h>

#include <cmath>

#include "onnx/ops/nn_common.hpp"

namespace ember::onnx_import::nn_ops {
namespace {

DynTensor add(const DynTensor& a, const DynTensor& b) { return capi::binary(a, b, BinaryOp::Add); }
DynTensor sub(const DynTensor& a, const DynTensor& b) { return capi::binary(a, b, BinaryOp::Sub); }
DynTensor mul(const DynTensor& a, const DynTensor& b) { return capi::binary(a, b, BinaryOp::Mul); }
// 1 / sqrt(var + eps).
DynTensor inv_std(const DynTensor& var, double eps) {
  return capi::unary(capi::unary(capi::scalar(var, ScalarOp::Add, eps), UnaryOp::Sqrt), UnaryOp::Recip);
}

// A BatchNormalization parameter laid along x's dims 1.. ([C] per channel; [C, D1, ...] for opset 7's
// spatial = 0): [1, dims..., 1, ...].
DynTensor along_channels(const OpContext& ctx, const DynTensor& p, int64_t rank) {
  std::vector<int64_t> d = dims_of(p);
  if (static_cast<int64_t>(d.size()) >= rank) ctx.fail("a parameter has as many dims as the input");
  d.insert(d.begin(), 1);
  d.resize(static_cast<std::size_t>(rank), 1);
  return capi::reshape(p, d);
}

Outputs batch_norm(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  const int64_t r = rank_of(x);
  if (r < 2) ctx.fail(fmt::format("input must be at least 2-D, got rank {}", r));
  const double eps = ctx.node.attr_float("epsilon", 1e-5), momentum = ctx.node.attr_float("momentum", 0.9);
  // Opset 14 says so in training_mode; before, asking for the statistics outputs meant training.
  const bool training = ctx.opset >= 14 ? ctx.node.attr_int("training_mode", ctx.training ? 1 : 0) != 0
                                        : (ctx.training || ctx.num_outputs() > 1);
  const DynTensor scale = along_channels(ctx, float_input(ctx, 1), r);
  const DynTensor bias = along_channels(ctx, float_input(ctx, 2), r);
  const DynTensor& running_mean = float_input(ctx, 3);
  const DynTensor& running_var = float_input(ctx, 4);
  if (!training) {
    // x * k + (bias - mean * k): the per-channel work on [C]-sized tensors, two passes over x.
    const DynTensor k = mul(scale, inv_std(along_channels(ctx, running_var, r), eps));
    return {add(mul(x, k), sub(bias, mul(along_channels(ctx, running_mean, r), k)))};
  }
  std::vector<int64_t> axes{0};
  for (int64_t i = 2; i < r; ++i) axes.push_back(i);
  const Moments m = moments(x, axes);
  const DynTensor y = add(mul(mul(sub(x, m.mean), inv_std(m.var, eps)), scale), bias);
  const std::vector<int64_t> pd = dims_of(running_mean);
  const DynTensor batch_mean = capi::reshape(m.mean, pd), batch_var = capi::reshape(m.var, pd);
  const auto blend = [&](const DynTensor& running, const DynTensor& batch) {
    return add(capi::scalar(running, ScalarOp::Mul, momentum), capi::scalar(batch, ScalarOp::Mul, 1.0 - momentum));
  };
  Outputs out{y, blend(running_mean, batch_mean), blend(running_var, batch_var)};
  if (ctx.opset < 14) {  // saved_mean, saved_var of opsets 7 and 9
    out.emplace_back(batch_mean);
    out.emplace_back(batch_var);
  }
  out.resize(std::min(out.size(), ctx.num_outputs()));
  return out;
}

Outputs instance_norm(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  const int64_t r = rank_of(x);
  if (r < 3) ctx.fail(fmt::format("input must have spatial dims, got rank {}", r));
  std::vector<int64_t> axes;
  for (int64_t i = 2; i < r; ++i) axes.push_back(i);
  const Moments m = moments(x, axes);
  const DynTensor norm = mul(sub(x, m.mean), inv_std(m.var, ctx.node.attr_float("epsilon", 1e-5)));
  return {add(mul(norm, per_channel(float_input(ctx, 1), r)), per_channel(float_input(ctx, 2), r))};
}

Outputs layer_norm(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  const int64_t r = rank_of(x);
  int64_t axis = ctx.node.attr_int("axis", -1);
  if (axis < -r || axis >= r) ctx.fail(fmt::format("axis {} is out of range for rank {}", axis, r));
  if (axis < 0) axis += r;
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < r; ++i) axes.push_back(i);
  const Moments m = moments(x, axes);
  const DynTensor istd = inv_std(m.var, ctx.node.attr_float("epsilon", 1e-5));
  DynTensor y = mul(mul(sub(x, m.mean), istd), float_input(ctx, 1));
  if (ctx.has_input(2)) y = add(y, float_input(ctx, 2));
  Outputs out{y, m.mean, istd};
  out.resize(std::min(out.size(), ctx.num_outputs()));
  return out;
}

// ONNX's function body: (x - mean) / (sqrt(var) + 1e-9) over `axes`.
Outputs mean_variance_norm(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  const Moments m = moments(x, ctx.node.attr_ints("axes", {0, 2, 3}));
  const DynTensor denom = capi::scalar(capi::unary(m.var, UnaryOp::Sqrt), ScalarOp::Add, 1e-9);
  return {capi::binary(sub(x, m.mean), denom, BinaryOp::Div)};
}

// LRN: x / (bias + alpha / size * sum of x^2 over the `size` channels around c)^beta. The channel sum is an
// average pool over [N, 1, C, rest] with the window [size, 1], padded floor((size-1)/2) before, ceil(...) after.
Outputs lrn(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  const std::vector<int64_t> xd = dims_of(x);
  if (xd.size() < 2) ctx.fail("input must be at least 2-D");
  const int64_t size = ctx.node.attr_int("size", 0);
  if (size < 1 || size > (int64_t{1} << 31)) ctx.fail(fmt::format("size {} must be positive", size));
  const double alpha = ctx.node.attr_float("alpha", 1e-4), beta = ctx.node.attr_float("beta", 0.75),
               bias = ctx.node.attr_float("bias", 1.0);
  int64_t rest = 1;
  for (std::size_t i = 2; i < xd.size(); ++i) rest *= xd[i];
  const DynTensor sq = capi::reshape(mul(x, x), {xd[0], 1, xd[1], rest});
  const DynTensor padded = capi::pad(sq, {0, 0, (size - 1) / 2, size / 2}, PadMode::Constant, 0.0);
  Pool2dOptions o;
  o.kernel = {size, 1};
  o.stride = {1, 1};
  o.padding = {0, 0};
  const DynTensor mean = capi::reshape(capi::avg_pool2d(padded, o), xd);
  const DynTensor denom = capi::scalar(capi::scalar(capi::scalar(mean, ScalarOp::Mul, alpha), ScalarOp::Add, bias),
                                       ScalarOp::Pow, beta);
  return {capi::binary(x, denom, BinaryOp::Div)};
}

}  // namespace

void register_norm(OpRegistry& r) {
  r.add("BatchNormalization", batch_norm);
  r.add("InstanceNormalization", instance_norm);
  r.add("LayerNormalization", layer_norm, 17);
  r.add("MeanVarianceNormalization", mean_variance_norm);
  r.add("LRN", lrn);
}

}  // namespace ember::onnx_import::nn_ops
