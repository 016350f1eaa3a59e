// Resize (opsets 10..17) and Upsample (7..9) as separable interpolation (h-onnx-nn).
//
// Every mode ONNX has (nearest with its four rounding rules, linear, cubic with cubic_coeff_a / exclude_outside)
// and every coordinate_transformation_mode is a per-axis weighted sum of input rows: output row o along an axis is
// sum_t w_t[o] * x[idx_t[o]], with one tap for nearest, two for linear, four for cubic. The taps and weights depend
// only on the sizes, so they are computed on the host and applied with index_select and a broadcast multiply:
// runtime ops only, any rank, every backend, and the gradient reaches x. Axes are resized from the last to the
// first, the order of ONNX's reference (which matters for tf_crop_and_resize's extrapolation).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "onnx/ops/nn_common.hpp"

namespace ember::onnx_import::nn_ops {
namespace {

enum class Mode { Nearest, Linear, Cubic };

struct ResizeAttrs {
  Mode mode = Mode::Nearest;
  std::string coord = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0.0;
  bool exclude_outside = false;
};

Mode parse_mode(const OpContext& ctx, const std::string& m) {
  if (m == "nearest") return Mode::Nearest;
  if (m == "linear" || m == "bilinear" || m == "trilinear") return Mode::Linear;
  if (m == "cubic") return Mode::Cubic;
  ctx.fail(fmt::format("mode '{}' is not nearest, linear or cubic", m));
}

// One axis's taps: out rows each take sum_t weight[t][o] * x[index[t][o]]; inside[o] is false where
// tf_crop_and_resize samples outside the input (the output is extrapolation_value there).
struct AxisPlan {
  std::vector<std::vector<int64_t>> index;
  std::vector<std::vector<double>> weight;
  std::vector<bool> inside;
  bool any_outside = false;
};

// `out` is the resized length as ONNX's reference sees it: in * scale when scales are given (not rounded), else
// the size asked for; align_corners and pytorch_half_pixel read it.
double source_coord(const ResizeAttrs& a, int64_t o, int64_t in, double out, double scale, double roi_start,
                    double roi_end) {
  const double x = static_cast<double>(o);
  if (a.coord == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (a.coord == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (a.coord == "align_corners") return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / (out - 1);
  if (a.coord == "asymmetric") return x / scale;
  if (a.coord == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  // tf_crop_and_resize
  const double span = static_cast<double>(in - 1);
  return out > 1 ? roi_start * span + x * (roi_end - roi_start) * span / (out - 1)
                 : 0.5 * (roi_start + roi_end) * span;
}

int64_t nearest_index(const ResizeAttrs& a, double x) {
  const double f = std::floor(x);
  if (a.nearest == "floor") return static_cast<int64_t>(f);
  if (a.nearest == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (x - f == 0.5) return static_cast<int64_t>(a.nearest == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

std::vector<double> cubic_coeffs(double r, double A) {
  const auto far = [A](double t) { return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A; };  // 1 < |t| < 2
  const auto near = [A](double t) { return ((A + 2) * t - (A + 3)) * t * t + 1; };       // |t| <= 1
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

AxisPlan plan_axis(const ResizeAttrs& a, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  AxisPlan p;
  const int taps = a.mode == Mode::Nearest ? 1 : a.mode == Mode::Linear ? 2 : 4;
  p.index.assign(taps, std::vector<int64_t>(static_cast<std::size_t>(out)));
  p.weight.assign(taps, std::vector<double>(static_cast<std::size_t>(out)));
  p.inside.assign(static_cast<std::size_t>(out), true);
  const auto clamp = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    const double x = source_coord(a, o, in, static_cast<double>(in) * scale, scale, roi_start, roi_end);
    if (a.coord == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(in - 1))) {
      p.inside[o] = false;
      p.any_outside = true;
    }
    if (a.mode == Mode::Nearest) {
      p.index[0][o] = clamp(nearest_index(a, x));
      p.weight[0][o] = 1.0;
      continue;
    }
    const double f = std::floor(x), r = x - f;
    const int64_t base = static_cast<int64_t>(f);
    if (a.mode == Mode::Linear) {
      p.index[0][o] = clamp(base);
      p.index[1][o] = clamp(base + 1);
      p.weight[0][o] = 1 - r;
      p.weight[1][o] = r;
      continue;
    }
    std::vector<double> c = cubic_coeffs(r, a.cubic_a);
    double total = 0;
    for (int t = 0; t < 4; ++t) {
      const int64_t i = base - 1 + t;
      if (a.exclude_outside && (i < 0 || i >= in)) c[t] = 0;
      total += c[t];
      p.index[t][o] = clamp(i);
    }
    for (int t = 0; t < 4; ++t) p.weight[t][o] = a.exclude_outside && total != 0 ? c[t] / total : c[t];
  }
  return p;
}

// A host vector as a tensor laid along `axis` of a rank-r tensor ([1, .., n, .., 1]) in x's dtype.
DynTensor along_axis(const DynTensor& like, const std::vector<double>& v, std::size_t axis, std::size_t r) {
  std::vector<int64_t> d(r, 1);
  d[axis] = static_cast<int64_t>(v.size());
  return capi::from_data(capi::device(like), TensorData::from_vec<double>(v, Shape(d)).convert(capi::dtype(like)));
}

DynTensor resize_axis(const DynTensor& x, std::size_t axis, const AxisPlan& p, double extrapolation) {
  const std::size_t r = capi::shape(x).rank();
  std::optional<DynTensor> y;
  for (std::size_t t = 0; t < p.index.size(); ++t) {
    const std::vector<int64_t>& idx = p.index[t];
    const DynTensor rows = capi::index_select(
        x, static_cast<int64_t>(axis),
        capi::from_data(capi::device(x), TensorData::from_vec<int64_t>(idx, Shape{static_cast<int64_t>(idx.size())})));
    const bool unit = std::all_of(p.weight[t].begin(), p.weight[t].end(), [](double w) { return w == 1.0; });
    const DynTensor term = unit ? rows : capi::binary(rows, along_axis(x, p.weight[t], axis, r), BinaryOp::Mul);
    y = y ? capi::binary(*y, term, BinaryOp::Add) : term;
  }
  if (!p.any_outside) return *y;
  std::vector<double> keep(p.inside.size()), fill(p.inside.size());
  for (std::size_t i = 0; i < keep.size(); ++i) {
    keep[i] = p.inside[i] ? 1.0 : 0.0;
    fill[i] = p.inside[i] ? 0.0 : extrapolation;
  }
  return capi::binary(capi::binary(*y, along_axis(x, keep, axis, r), BinaryOp::Mul), along_axis(x, fill, axis, r),
                      BinaryOp::Add);
}

// Resizes x to `out` with per-axis `scales` (the ones the coordinate transforms divide by) and roi.
DynTensor resize(const OpContext& ctx, const DynTensor& x, const ResizeAttrs& a, const std::vector<int64_t>& out,
                 const std::vector<double>& scales, const std::vector<double>& roi) {
  const std::vector<int64_t> in = dims_of(x);
  const std::size_t r = in.size();
  if (r == 0) ctx.fail("input must have at least one dim");
  DynTensor y = x;
  for (std::size_t i = r; i-- > 0;) {
    if (out[i] < 1 || out[i] > (int64_t{1} << 31)) ctx.fail(fmt::format("output dim {} would be {}", i, out[i]));
    if (in[i] == 0) ctx.fail("cannot resize an empty dim");
    const bool crop = a.coord == "tf_crop_and_resize";
    if (!crop && out[i] == in[i] && scales[i] == 1.0) continue;  // every transform is the identity there
    const double rs = crop ? roi.at(i) : 0.0, re = crop ? roi.at(r + i) : 1.0;
    y = resize_axis(y, i, plan_axis(a, in[i], out[i], scales[i], rs, re), a.extrapolation);
  }
  return y;
}

std::vector<int64_t> scaled_sizes(const OpContext& ctx, const std::vector<int64_t>& in,
                                  const std::vector<double>& scales) {
  if (scales.size() != in.size()) ctx.fail(fmt::format("{} scales for rank {}", scales.size(), in.size()));
  std::vector<int64_t> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!(scales[i] > 0) || scales[i] > 1e6) ctx.fail(fmt::format("scale {} must be positive", scales[i]));
    // ONNX computes floor(in * scale) in float32 (the scales' type).
    out[i] = static_cast<int64_t>(std::floor(static_cast<float>(static_cast<float>(in[i]) * static_cast<float>(scales[i]))));
  }
  return out;
}

Outputs resize_op(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  ResizeAttrs a;
  a.mode = parse_mode(ctx, ctx.node.attr_string("mode", "nearest"));
  const std::vector<int64_t> in = dims_of(x);
  std::vector<double> scales;
  std::vector<int64_t> out;
  std::vector<double> roi;
  if (ctx.opset < 11) {  // Resize-10: (X, scales), asymmetric coordinates, nearest rounds down
    a.coord = "asymmetric";
    a.nearest = "floor";
    scales = host_doubles(ctx, 1);
    out = scaled_sizes(ctx, in, scales);
  } else {
    a.coord = ctx.node.attr_string("coordinate_transformation_mode", "half_pixel");
    a.nearest = ctx.node.attr_string("nearest_mode", "round_prefer_floor");
    a.cubic_a = ctx.node.attr_float("cubic_coeff_a", -0.75);
    a.exclude_outside = ctx.node.attr_int("exclude_outside", 0) != 0;
    a.extrapolation = ctx.node.attr_float("extrapolation_value", 0.0);
    static const std::vector<std::string> kCoords{"half_pixel",   "pytorch_half_pixel",   "align_corners",
                                                  "asymmetric",   "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    if (std::find(kCoords.begin(), kCoords.end(), a.coord) == kCoords.end())
      ctx.fail(fmt::format("coordinate_transformation_mode '{}' is unknown", a.coord));
    if (a.nearest != "round_prefer_floor" && a.nearest != "round_prefer_ceil" && a.nearest != "floor" &&
        a.nearest != "ceil")
      ctx.fail(fmt::format("nearest_mode '{}' is unknown", a.nearest));
    if (ctx.has_input(1)) roi = host_doubles(ctx, 1);
    if (a.coord == "tf_crop_and_resize" && roi.size() != 2 * in.size())
      ctx.fail(fmt::format("tf_crop_and_resize needs a roi of {} values", 2 * in.size()));
    if (ctx.has_input(2)) scales = host_doubles(ctx, 2);
    if (!scales.empty()) {
      if (ctx.has_input(3) && capi::shape(ctx.input(3)).num_elements() > 0)
        ctx.fail("scales and sizes are both given");
      out = scaled_sizes(ctx, in, scales);
    } else {
      if (!ctx.has_input(3)) ctx.fail("neither scales nor sizes is given");
      out = ctx.ints(3);
      if (out.size() != in.size()) ctx.fail(fmt::format("{} sizes for rank {}", out.size(), in.size()));
      scales.resize(in.size());
      for (std::size_t i = 0; i < in.size(); ++i)
        scales[i] = in[i] == 0 ? 1.0 : static_cast<double>(out[i]) / static_cast<double>(in[i]);
    }
  }
  return {resize(ctx, x, a, out, scales, roi)};
}

// Upsample: Resize with asymmetric coordinates; scales an attribute (opset 7) or an input (9).
Outputs upsample(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  ResizeAttrs a;
  a.mode = parse_mode(ctx, ctx.node.attr_string("mode", "nearest"));
  a.coord = "asymmetric";
  a.nearest = "floor";
  const std::vector<double> scales = ctx.opset < 9 ? ctx.node.attr_floats("scales") : host_doubles(ctx, 1);
  return {resize(ctx, x, a, scaled_sizes(ctx, dims_of(x), scales), scales, {})};
}

}  // namespace

void register_resize(OpRegistry& r) {
  r.add("Resize", resize_op, 10);
  r.add("Upsample", upsample, 7, 9);
}

}  // namespace ember::onnx_import::nn_ops
