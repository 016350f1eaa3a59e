// Conv and ConvTranspose (1-D, 2-D and 3-D) on the runtime's conv2d / conv_transpose2d (h-onnx-nn).
//
// ONNX pads may differ between the start and the end of a dim and may come from auto_pad; the runtime's ops pad
// symmetrically, so the symmetric part goes to them and the rest is an explicit constant pad (Conv) or crop
// (ConvTranspose: the full transposed output is computed and then cut to the pads / output_shape). 1-D is 2-D with
// a height of 1; 3-D sums 2-D convolutions over the kernel's depth (each depth tap sees the input depths it meets
// folded into the batch), so it needs no 3-D kernel and keeps conv2d's gradients.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "onnx/fuse_conv.hpp"
#include "onnx/ops/nn_common.hpp"

namespace ember::onnx_import::nn_ops {
namespace {

DynTensor int_tensor(const DynDevice& dev, const std::vector<int64_t>& v) {
  return capi::from_data(dev, TensorData::from_vec<int64_t>(v, Shape{static_cast<int64_t>(v.size())}));
}

// Swaps dims 1 and 2 of a 5-D tensor and folds the first two: [N, A, B, H, W] -> [N * B, A, H, W].
DynTensor fold_depth(const DynTensor& x) {
  const std::vector<int64_t> d = dims_of(x);
  return capi::reshape(capi::permute(x, {0, 2, 1, 3, 4}), {d[0] * d[2], d[1], d[3], d[4]});
}
// The inverse: [N * B, A, H, W] -> [N, A, B, H, W].
DynTensor unfold_depth(const DynTensor& y, int64_t n) {
  const std::vector<int64_t> d = dims_of(y);
  return capi::permute(capi::reshape(y, {n, d[0] / n, d[1], d[2], d[3]}), {0, 2, 1, 3, 4});
}

DynTensor activated(const DynTensor& y, bool relu) { return relu ? capi::unary(y, UnaryOp::Relu) : y; }

// A Conv + Relu + MaxPool fused at load (onnx/fuse_conv.hpp): the pool's [kh, kw, sh, sw, ph, pw] from the mark.
DynTensor conv_relu_max_pool(const OpContext& ctx, const DynTensor& x, const DynTensor& w, const DynTensor* bias,
                             const Conv2dOptions& o) {
  const std::vector<int64_t> m = ctx.node.attr_ints(kConvFusedMaxPoolAttr);
  if (m.size() != 6 || !ctx.node.has_attr(kConvFusedReluAttr)) ctx.fail("malformed fused MaxPool mark");
  Pool2dOptions pool;
  pool.kernel = {m[0], m[1]};
  pool.stride = {m[2], m[3]};
  pool.padding = {m[4], m[5]};
  return capi::conv2d_relu_max_pool(x, w, bias, o, pool);
}

void check_conv_ranks(const OpContext& ctx, const DynTensor& x, const DynTensor& w) {
  const int64_t r = rank_of(x);
  if (r < 3 || r > 5) ctx.fail(fmt::format("input must be 3-D, 4-D or 5-D (1 to 3 spatial dims), got rank {}", r));
  if (rank_of(w) != r) ctx.fail(fmt::format("weight rank {} differs from the input's {}", rank_of(w), r));
}

}  // namespace

DynTensor conv_forward(const OpContext& ctx, const DynTensor& x, const DynTensor& w, const DynTensor* bias,
                       bool relu) {
  check_conv_ranks(ctx, x, w);
  const int64_t group = ctx.node.attr_int("group", 1);
  const std::vector<int64_t> xd = dims_of(x), wd = dims_of(w);
  const std::size_t n = xd.size() - 2;
  if (group < 1 || xd[1] % group || wd[0] % group || wd[1] * group != xd[1])
    ctx.fail(fmt::format("group {} does not fit input channels {} and weight {}", group, xd[1], fmt::join(wd, "x")));
  const std::vector<int64_t> in(xd.begin() + 2, xd.end()), kernel(wd.begin() + 2, wd.end());
  if (ctx.node.has_attr("kernel_shape") && ctx.node.attr_ints("kernel_shape") != kernel)
    ctx.fail("kernel_shape differs from the weight's spatial dims");
  const Window g = window_geometry(ctx, in, kernel, false);

  // The symmetric part of the H/W padding goes to conv2d, the rest is padded explicitly (depth: all of it).
  std::vector<int64_t> sym(n, 0), extra_b(n), extra_e(n);
  for (std::size_t i = 0; i < n; ++i) {
    sym[i] = (n == 3 && i == 0) ? 0 : std::min(g.pad_begin[i], g.pad_end[i]);
    extra_b[i] = g.pad_begin[i] - sym[i];
    extra_e[i] = g.pad_end[i] - sym[i];
  }
  const DynTensor xp = pad_spatial(x, extra_b, extra_e, 0.0);
  Conv2dOptions o;
  o.groups = group;
  const std::size_t hw = n == 1 ? 0 : n - 2;  // index of the H dim among the spatial ones (1-D: none)
  for (int k = 0; k < 2; ++k) {
    if (n == 1 && k == 0) continue;  // the added height of 1
    const std::size_t i = n == 1 ? 0 : hw + static_cast<std::size_t>(k);
    o.stride[k] = g.strides[i];
    o.padding[k] = sym[i];
    o.dilation[k] = g.dilations[i];
  }
  if (n == 1) {
    const DynTensor y = capi::conv2d(capi::reshape(xp, {xd[0], xd[1], 1, -1}),
                                     capi::reshape(w, {wd[0], wd[1], 1, wd[2]}), bias, o);
    return activated(capi::reshape(y, {xd[0], wd[0], g.out[0]}), relu);
  }
  if (n == 2) {
    if (ctx.node.has_attr(kConvFusedMaxPoolAttr)) return conv_relu_max_pool(ctx, xp, w, bias, o);
    return relu ? capi::conv2d_relu(xp, w, bias, o) : capi::conv2d(xp, w, bias, o);
  }
  if (ctx.node.has_attr(kConvFusedMaxPoolAttr)) ctx.fail("a MaxPool was fused into a Conv that is not 2-D");
  // 3-D: out[:, :, od] = sum over kd of conv2d(in[:, :, od * stride + kd * dilation], w[:, :, kd]).
  std::optional<DynTensor> sum;
  for (int64_t kd = 0; kd < kernel[0]; ++kd) {
    std::vector<int64_t> depths(static_cast<std::size_t>(g.out[0]));
    for (int64_t od = 0; od < g.out[0]; ++od) depths[od] = od * g.strides[0] + kd * g.dilations[0];
    const DynTensor slab = fold_depth(capi::index_select(xp, 2, int_tensor(capi::device(x), depths)));
    DynTensor y = capi::conv2d(slab, capi::select(w, 2, kd), nullptr, o);
    sum = sum ? capi::binary(*sum, y, BinaryOp::Add) : y;
  }
  DynTensor y = unfold_depth(*sum, xd[0]);
  if (bias) y = capi::binary(y, per_channel(*bias, 5), BinaryOp::Add);
  return activated(y, relu);
}

namespace {

// A Conv that fuse_conv_relu marked (onnx/fuse_conv.hpp) also applies the Relu it absorbed: 2-D through the
// runtime's conv2d_relu (one pass under no_grad), 1-D and 3-D as a ReLU after the convolution.
Outputs conv(OpContext& ctx) {
  const DynTensor* bias = ctx.has_input(2) ? &float_input(ctx, 2) : nullptr;
  const bool relu = ctx.node.attr_int(kConvFusedReluAttr, 0) != 0;
  return {conv_forward(ctx, float_input(ctx, 0), float_input(ctx, 1), bias, relu)};
}

// ConvTranspose's padding: explicit pads, or the ones output_shape / auto_pad SAME imply (ONNX's rule: the odd
// unit at the start unless SAME_UPPER).
struct TransposeGeometry {
  std::vector<int64_t> strides, dilations, out_pad, pad_begin, pad_end, full;
};

TransposeGeometry transpose_geometry(const OpContext& ctx, const std::vector<int64_t>& in,
                                     const std::vector<int64_t>& kernel) {
  const std::size_t n = in.size();
  TransposeGeometry g;
  g.strides = spatial_attr(ctx, "strides", n, 1);
  g.dilations = spatial_attr(ctx, "dilations", n, 1);
  g.out_pad = ctx.node.attr_ints("output_padding", std::vector<int64_t>(n, 0));
  if (g.out_pad.size() != n) ctx.fail("output_padding needs one value per spatial dim");
  g.full.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (g.out_pad[i] < 0 || g.out_pad[i] > (int64_t{1} << 31)) ctx.fail("output_padding must be in 0..2^31");
    g.full[i] = (in[i] - 1) * g.strides[i] + g.dilations[i] * (kernel[i] - 1) + 1;
  }
  const std::string auto_pad = ctx.node.attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> target;
  if (ctx.node.has_attr("output_shape")) {
    target = ctx.node.attr_ints("output_shape");
    if (target.size() == n + 2) target.erase(target.begin(), target.begin() + 2);
    if (target.size() != n) ctx.fail("output_shape needs one value per spatial dim");
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (std::size_t i = 0; i < n; ++i) target.push_back(in[i] * g.strides[i]);
  }
  g.pad_begin.assign(n, 0);
  g.pad_end.assign(n, 0);
  if (!target.empty()) {
    for (std::size_t i = 0; i < n; ++i) {
      // total < 0 (output_shape beyond the full output) extends the output; the halves are floored as in ONNX.
      const int64_t total = g.full[i] + g.out_pad[i] - target[i];
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? half : total - half;
      g.pad_end[i] = total - g.pad_begin[i];
    }
  } else if (auto_pad == "NOTSET") {
    const std::vector<int64_t> pads = ctx.node.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
    if (pads.size() != 2 * n) ctx.fail("pads needs two values per spatial dim");
    for (std::size_t i = 0; i < n; ++i) {
      g.pad_begin[i] = pads[i];
      g.pad_end[i] = pads[n + i];
    }
  } else if (auto_pad != "VALID") {
    ctx.fail(fmt::format("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad));
  }
  for (std::size_t i = 0; i < n; ++i)
    if (g.full[i] + g.out_pad[i] - g.pad_begin[i] - g.pad_end[i] < 1 || std::abs(g.pad_begin[i]) > (int64_t{1} << 31) ||
        std::abs(g.pad_end[i]) > (int64_t{1} << 31))
      ctx.fail("the pads / output_shape leave no output");
  return g;
}

Outputs conv_transpose(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  const DynTensor& w = float_input(ctx, 1);
  check_conv_ranks(ctx, x, w);
  const int64_t group = ctx.node.attr_int("group", 1);
  const std::vector<int64_t> xd = dims_of(x), wd = dims_of(w);
  const std::size_t n = xd.size() - 2;
  if (group < 1 || xd[1] % group || wd[0] != xd[1])
    ctx.fail(fmt::format("group {} does not fit input channels {} and weight {}", group, xd[1], fmt::join(wd, "x")));
  const std::vector<int64_t> in(xd.begin() + 2, xd.end()), kernel(wd.begin() + 2, wd.end());
  const TransposeGeometry g = transpose_geometry(ctx, in, kernel);
  const int64_t m = wd[1] * group;

  // The full transposed convolution (no padding), then cut / extended to the ONNX output.
  ConvTranspose2dOptions o;
  o.groups = group;
  const std::size_t h = n == 3 ? 1 : 0;
  for (int k = 0; k < 2; ++k) {
    if (n == 1 && k == 0) continue;
    const std::size_t i = n == 1 ? 0 : h + static_cast<std::size_t>(k);
    o.stride[k] = g.strides[i];
    o.dilation[k] = g.dilations[i];
  }
  DynTensor full;
  if (n == 1) {
    full = capi::reshape(capi::conv_transpose2d(capi::reshape(x, {xd[0], xd[1], 1, xd[2]}),
                                                capi::reshape(w, {wd[0], wd[1], 1, wd[2]}), nullptr, o),
                         {xd[0], m, g.full[0]});
  } else if (n == 2) {
    full = capi::conv_transpose2d(x, w, nullptr, o);
  } else {
    // 3-D: each depth tap kd spreads input depth d to output depth d * stride + kd * dilation. The 2-D result of
    // every input depth is placed there by one index_select over it plus a zero slab (index D) for the gaps.
    const int64_t depth = xd[2];
    const DynTensor folded = fold_depth(x);
    std::optional<DynTensor> sum;
    for (int64_t kd = 0; kd < kernel[0]; ++kd) {
      const DynTensor y = unfold_depth(capi::conv_transpose2d(folded, capi::select(w, 2, kd), nullptr, o), xd[0]);
      std::vector<int64_t> zd = dims_of(y);
      zd[2] = 1;
      const DynTensor zero = capi::full(capi::device(x), capi::dtype(y), Shape(zd), 0.0);
      const DynTensor padded = capi::cat({&y, &zero}, 2);
      std::vector<int64_t> src(static_cast<std::size_t>(g.full[0]), depth);
      for (int64_t d = 0; d < depth; ++d) src[d * g.strides[0] + kd * g.dilations[0]] = d;
      const DynTensor placed = capi::index_select(padded, 2, int_tensor(capi::device(x), src));
      sum = sum ? capi::binary(*sum, placed, BinaryOp::Add) : placed;
    }
    full = *sum;
  }
  std::vector<int64_t> begin(n), end(n);
  for (std::size_t i = 0; i < n; ++i) {
    begin[i] = -g.pad_begin[i];
    end[i] = g.out_pad[i] - g.pad_end[i];
  }
  DynTensor y = pad_spatial(full, begin, end, 0.0);
  if (ctx.has_input(2)) y = capi::binary(y, per_channel(float_input(ctx, 2), static_cast<int64_t>(n + 2)), BinaryOp::Add);
  return {y};
}

}  // namespace

void register_conv(OpRegistry& r) {
  r.add("Conv", conv);
  r.add("ConvTranspose", conv_transpose);
}

}  // namespace ember::onnx_import::nn_ops
