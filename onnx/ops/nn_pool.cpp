// MaxPool, AveragePool, LpPool and the global pools (1-D, 2-D, 3-D) on the runtime's max_pool2d / avg_pool2d.
//
// ONNX pads may be asymmetric, come from auto_pad, and ceil_mode may add windows that hang over the end; the
// runtime's pools pad symmetrically by at most half the kernel. So every pool here pads explicitly (with -inf for
// max, 0 for average) and runs the runtime's pool unpadded. ONNX's average divides by the number of elements a
// window covers: the input only (count_include_pad = 0) or the input and the pads, never the ceil_mode overhang; it
// is the average pool of the padded input over the average pool of a 0/1 mask of what counts. 1-D pools are 2-D
// with a height of 1; 3-D pools are separable (a 2-D pool over H, W, then one over D), for max and for average.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "onnx/ops/nn_common.hpp"

namespace ember::onnx_import::nn_ops {
namespace {

enum class PoolKind { Max, Avg };

// The runtime pool over the spatial dims of x [N, C, s...] (1 to 3 of them) with symmetric padding `pads` (at most
// half the kernel; average pools count the pads when count_include_pad). Pads go to the runtime op per stage, which
// is exact for 3-D too: max is separable, and an average excluding pads divides by a count that is the product of
// the per-stage counts.
DynTensor pool_run(const DynTensor& x, PoolKind kind, const std::vector<int64_t>& kernel,
                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                   const std::vector<int64_t>& pads, bool count_include_pad) {
  const auto run = [&](const DynTensor& t, std::array<int64_t, 2> k, std::array<int64_t, 2> s,
                       std::array<int64_t, 2> d, std::array<int64_t, 2> p) {
    Pool2dOptions o;
    o.kernel = k;
    o.stride = s;
    o.padding = p;
    o.dilation = d;
    o.count_include_pad = count_include_pad;
    return kind == PoolKind::Max ? capi::max_pool2d(t, o) : capi::avg_pool2d(t, o);
  };
  const std::vector<int64_t> xd = dims_of(x);
  const std::size_t n = kernel.size();
  if (n == 1) {
    const DynTensor y = run(capi::reshape(x, {xd[0], xd[1], 1, xd[2]}), {1, kernel[0]}, {1, strides[0]},
                            {1, dilations[0]}, {0, pads[0]});
    const std::vector<int64_t> yd = dims_of(y);
    return capi::reshape(y, {yd[0], yd[1], yd[3]});
  }
  if (n == 2)
    return run(x, {kernel[0], kernel[1]}, {strides[0], strides[1]}, {dilations[0], dilations[1]}, {pads[0], pads[1]});
  // 3-D: H, W first with depth folded into the channels, then D with H * W as the width.
  const DynTensor hw = run(capi::reshape(x, {xd[0], xd[1] * xd[2], xd[3], xd[4]}), {kernel[1], kernel[2]},
                           {strides[1], strides[2]}, {dilations[1], dilations[2]}, {pads[1], pads[2]});
  const std::vector<int64_t> hd = dims_of(hw);
  const DynTensor d = run(capi::reshape(hw, {xd[0], xd[1], xd[2], hd[2] * hd[3]}), {kernel[0], 1}, {strides[0], 1},
                          {dilations[0], 1}, {pads[0], 0});
  return capi::reshape(d, {xd[0], xd[1], dims_of(d)[2], hd[2], hd[3]});
}

DynTensor pool_unpadded(const DynTensor& x, PoolKind kind, const std::vector<int64_t>& kernel,
                        const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  return pool_run(x, kind, kernel, strides, dilations, std::vector<int64_t>(kernel.size(), 0), true);
}

struct PoolPlan {
  Window g;
  std::vector<int64_t> in, overhang;  // overhang: ceil_mode's extra end padding that no window may count
  bool any_pad = false, any_overhang = false;
  // Symmetric pads of at most half the kernel and no overhang: the runtime pool pads by itself (no copy).
  bool direct = true;
};

PoolPlan plan_pool(const OpContext& ctx, const DynTensor& x, bool allow_ceil) {
  const int64_t r = rank_of(x);
  if (r < 3 || r > 5) ctx.fail(fmt::format("input must have 1 to 3 spatial dims, got rank {}", r));
  PoolPlan p;
  const std::vector<int64_t> xd = dims_of(x);
  p.in.assign(xd.begin() + 2, xd.end());
  const std::size_t n = p.in.size();
  const std::vector<int64_t> kernel = ctx.node.attr_ints("kernel_shape");
  if (kernel.size() != n) ctx.fail(fmt::format("kernel_shape needs {} values", n));
  for (int64_t k : kernel)
    if (k < 1 || k > (int64_t{1} << 31)) ctx.fail("kernel_shape values must be in 1..2^31");
  const bool ceil_mode = allow_ceil && ctx.node.attr_int("ceil_mode", 0) != 0;
  p.g = window_geometry(ctx, p.in, kernel, ceil_mode);
  p.overhang.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t span = p.g.dilations[i] * (kernel[i] - 1) + 1;
    p.overhang[i] =
        std::max<int64_t>(0, (p.g.out[i] - 1) * p.g.strides[i] + span - (p.in[i] + p.g.pad_begin[i] + p.g.pad_end[i]));
    p.any_pad = p.any_pad || p.g.pad_begin[i] || p.g.pad_end[i];
    p.any_overhang = p.any_overhang || p.overhang[i];
    p.direct = p.direct && p.g.pad_begin[i] == p.g.pad_end[i] && p.g.pad_begin[i] <= kernel[i] / 2;
  }
  p.direct = p.direct && !p.any_overhang;
  return p;
}

std::vector<int64_t> plus(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
  return out;
}

// MaxPool's Indices output (2-D): the flat index into the input (row-major per storage_order 0, column-major for
// 1), counted over N, C, H, W like ONNX. Each window's elements are gathered by host-made indices, its argmax taken
// and mapped back to the input position through a host table.
DynTensor max_indices(const OpContext& ctx, const DynTensor& padded, const PoolPlan& p) {
  if (p.in.size() != 2) ctx.fail("the Indices output is supported for 2-D pooling only");
  const std::vector<int64_t> pd = dims_of(padded);
  const int64_t nb = pd[0], ch = pd[1], hp = pd[2], wp = pd[3];
  const int64_t oh = p.g.out[0], ow = p.g.out[1], kh = p.g.kernel[0], kw = p.g.kernel[1];
  const bool column_major = ctx.node.attr_int("storage_order", 0) != 0;
  std::vector<int64_t> taps, table;
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ow; ++x)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j) {
          const int64_t py = y * p.g.strides[0] + i * p.g.dilations[0];
          const int64_t px = x * p.g.strides[1] + j * p.g.dilations[1];
          taps.push_back(py * wp + px);
          const int64_t iy = std::clamp<int64_t>(py - p.g.pad_begin[0], 0, p.in[0] - 1);
          const int64_t ix = std::clamp<int64_t>(px - p.g.pad_begin[1], 0, p.in[1] - 1);
          table.push_back(column_major ? ix * p.in[0] + iy : iy * p.in[1] + ix);
        }
  const DynDevice dev = capi::device(padded);
  const int64_t windows = oh * ow, k = kh * kw;
  const DynTensor tap_idx = capi::from_data(dev, TensorData::from_vec<int64_t>(taps, Shape{windows * k}));
  const DynTensor gathered =
      capi::reshape(capi::index_select(capi::reshape(padded, {nb, ch, hp * wp}), 2, tap_idx), {nb, ch, windows, k});
  const DynTensor arg = capi::arg_reduce(gathered, ArgReduceOp::ArgMax, 3, true);
  const DynTensor tab = capi::expand(capi::from_data(dev, TensorData::from_vec<int64_t>(table, Shape{1, 1, windows, k})),
                                     {nb, ch, windows, k});
  std::vector<int64_t> plane(static_cast<std::size_t>(nb * ch));
  for (int64_t i = 0; i < nb * ch; ++i) plane[i] = i * p.in[0] * p.in[1];
  const DynTensor offsets = capi::from_data(dev, TensorData::from_vec<int64_t>(plane, Shape{nb, ch, 1}));
  const DynTensor flat = capi::binary(capi::reshape(capi::gather(tab, 3, arg), {nb, ch, windows}), offsets,
                                      BinaryOp::Add);
  return capi::cast(capi::reshape(flat, {nb, ch, oh, ow}), DType::I64);
}

Outputs max_pool(OpContext& ctx) {
  const DynTensor& x0 = ctx.input(0);
  const DType dt = capi::dtype(x0);
  if (dt != DType::U8 && dt != DType::I32 && dt != DType::I64 && !dtype_is_float(dt))
    ctx.fail(fmt::format("unsupported input dtype {}", dtype_name(dt)));
  // Integer inputs are pooled as floats: max picks one of the values, which the float type holds exactly.
  const DynTensor x = dtype_is_float(dt) ? x0 : capi::cast(x0, exact_float_for(x0));
  const PoolPlan p = plan_pool(ctx, x, ctx.opset >= 10);
  const bool want_indices = ctx.num_outputs() > 1 && !ctx.node.outputs[1].empty();
  if (p.direct && !want_indices) {
    DynTensor y = pool_run(x, PoolKind::Max, p.g.kernel, p.g.strides, p.g.dilations, p.g.pad_begin, true);
    return {dtype_is_float(dt) ? y : capi::cast(y, dt)};
  }
  const DynTensor padded =
      pad_spatial(x, p.g.pad_begin, plus(p.g.pad_end, p.overhang), -std::numeric_limits<double>::infinity());
  DynTensor y = pool_unpadded(padded, PoolKind::Max, p.g.kernel, p.g.strides, p.g.dilations);
  if (!dtype_is_float(dt)) y = capi::cast(y, dt);
  Outputs out{y};
  if (want_indices) out.emplace_back(max_indices(ctx, padded, p));
  return out;
}

// Sum pooling divided by how many elements each window counts (see the file comment).
DynTensor average(const DynTensor& x, const PoolPlan& p, bool count_include_pad) {
  if (p.direct) return pool_run(x, PoolKind::Avg, p.g.kernel, p.g.strides, p.g.dilations, p.g.pad_begin, count_include_pad);
  const DynTensor padded = pad_spatial(x, p.g.pad_begin, plus(p.g.pad_end, p.overhang), 0.0);
  const DynTensor y = pool_unpadded(padded, PoolKind::Avg, p.g.kernel, p.g.strides, p.g.dilations);
  if (!p.any_overhang && (count_include_pad || !p.any_pad)) return y;
  std::vector<int64_t> md{1, 1};
  md.insert(md.end(), p.in.begin(), p.in.end());
  const DynTensor ones = capi::full(capi::device(x), capi::dtype(x), Shape(md), 1.0);
  const DynTensor counted = pad_spatial(ones, p.g.pad_begin, p.g.pad_end, count_include_pad ? 1.0 : 0.0);
  const DynTensor mask = pad_spatial(counted, std::vector<int64_t>(p.in.size(), 0), p.overhang, 0.0);
  return capi::binary(y, pool_unpadded(mask, PoolKind::Avg, p.g.kernel, p.g.strides, p.g.dilations), BinaryOp::Div);
}

Outputs average_pool(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  const PoolPlan p = plan_pool(ctx, x, ctx.opset >= 10);
  return {average(x, p, ctx.node.attr_int("count_include_pad", 0) != 0)};
}

// LpPool: (sum over the window of |x|^p)^(1/p), the sum being the average times the window size (pads add 0).
Outputs lp_pool(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  const double pw = static_cast<double>(ctx.node.attr_int("p", 2));
  if (pw < 1) ctx.fail("p must be at least 1");
  const PoolPlan p = plan_pool(ctx, x, false);
  const DynTensor powered = capi::scalar(capi::unary(x, UnaryOp::Abs), ScalarOp::Pow, pw);
  double k = 1;
  for (int64_t v : p.g.kernel) k *= static_cast<double>(v);
  const DynTensor sum = capi::scalar(average(powered, p, true), ScalarOp::Mul, k);
  return {capi::scalar(sum, ScalarOp::Pow, 1.0 / pw)};
}

std::vector<int64_t> spatial_axes(const OpContext& ctx, const DynTensor& x) {
  const int64_t r = rank_of(x);
  if (r < 3) ctx.fail(fmt::format("input must have spatial dims, got rank {}", r));
  std::vector<int64_t> axes;
  for (int64_t i = 2; i < r; ++i) axes.push_back(i);
  return axes;
}

Outputs global_average_pool(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  return {reduce_keep(x, ReduceOp::Mean, spatial_axes(ctx, x))};
}

Outputs global_max_pool(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  return {reduce_keep(x, ReduceOp::Max, spatial_axes(ctx, x))};
}

Outputs global_lp_pool(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  const double pw = static_cast<double>(ctx.node.attr_int("p", 2));
  if (pw < 1) ctx.fail("p must be at least 1");
  const DynTensor powered = capi::scalar(capi::unary(x, UnaryOp::Abs), ScalarOp::Pow, pw);
  return {capi::scalar(reduce_keep(powered, ReduceOp::Sum, spatial_axes(ctx, x)), ScalarOp::Pow, 1.0 / pw)};
}

}  // namespace

void register_pool(OpRegistry& r) {
  r.add("MaxPool", max_pool);
  r.add("AveragePool", average_pool);
  r.add("LpPool", lp_pool);
  r.add("GlobalAveragePool", global_average_pool);
  r.add("GlobalMaxPool", global_max_pool);
  r.add("GlobalLpPool", global_lp_pool);
}

}  // namespace ember::onnx_import::nn_ops
