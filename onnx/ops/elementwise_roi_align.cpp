// ONNX's RoiAlign (opset 16, h-onnx-math): every output bin of every roi averages (mode avg) or takes the largest
// of (mode max) sampling_ratio^2 bilinear samples of X, sampled as ONNX Runtime does (samples beyond one pixel
// outside read 0, coordinates clamped at the border). The sample positions are computed on the device from the rois
// and the taps gathered from X, so gradients reach X and the rois. sampling_ratio 0 (adaptive: a count per roi
// that depends on its size) would need the roi sizes on the host, and is refused.
#include "onnx/ops/math_util.hpp"

namespace ember::onnx_import::math {
namespace {

DynTensor mul_s(const DynTensor& x, double s) { return capi::scalar(x, ScalarOp::Mul, s); }
DynTensor add_s(const DynTensor& x, double s) { return capi::scalar(x, ScalarOp::Add, s); }

// Sample coordinates [R, bins * grid] along one dim: start + bin * (p + (i + 0.5) / grid) for bin p, sample i.
DynTensor sample_coords(const DynTensor& start, const DynTensor& bin, int64_t bins, int64_t grid) {
  std::vector<float> offsets;
  for (int64_t p = 0; p < bins; ++p)
    for (int64_t i = 0; i < grid; ++i)
      offsets.push_back(static_cast<float>(p) + (static_cast<float>(i) + 0.5f) / static_cast<float>(grid));
  DynTensor off = capi::from_data(capi::device(start), TensorData::from_vec<float>(offsets, Shape{bins * grid}));
  off = capi::cast(off, capi::dtype(start));
  return capi::binary(start, capi::binary(bin, capi::reshape(off, {1, bins * grid}), BinaryOp::Mul), BinaryOp::Add);
}

// ONNX Runtime's bilinear rule along one dim of `size`: the low / high tap, the high tap's weight, and whether the
// sample is inside [-1, size].
struct Taps {
  DynTensor low, high, frac, valid;
};
Taps taps_of(const DynTensor& c, int64_t size) {
  const double n = static_cast<double>(size);
  const DynTensor valid = capi::logical(capi::compare_scalar(c, CompareOp::Ge, -1.0),
                                        capi::compare_scalar(c, CompareOp::Le, n), LogicOp::And);
  const DynTensor pos = capi::scalar(c, ScalarOp::ClampMin, 0.0);
  const DynTensor low0 = capi::unary(pos, UnaryOp::Floor);
  const DynTensor at_end = capi::compare_scalar(low0, CompareOp::Ge, n - 1);
  const DynTensor last = math::scalar_like(c, n - 1);
  const DynTensor low = capi::where(at_end, last, low0);
  const DynTensor high = capi::where(at_end, last, add_s(low0, 1.0));
  const DynTensor frac = capi::where(at_end, math::scalar_like(c, 0.0), capi::binary(pos, low0, BinaryOp::Sub));
  return {low, high, frac, valid};
}

Outs roi_align(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const DynTensor& rois = ctx.input(1);
  const Shape xs = capi::shape(x), rs = capi::shape(rois);
  if (xs.rank() != 4 || rs.rank() != 2 || rs[1] != 4)
    ctx.fail(fmt::format("X must be [N, C, H, W] and rois [R, 4], got {} and {}", xs.to_string(), rs.to_string()));
  const int64_t c = xs[1], h = xs[2], w = xs[3], r = rs[0];
  const int64_t out_h = ctx.node.attr_int("output_height", 1), out_w = ctx.node.attr_int("output_width", 1);
  const int64_t grid = ctx.node.attr_int("sampling_ratio", 0);
  if (grid <= 0) ctx.fail("sampling_ratio 0 (adaptive) is not supported: give a positive sampling_ratio");
  if (out_h < 1 || out_w < 1 || out_h * grid > 4096 || out_w * grid > 4096) ctx.fail("output size out of range");
  const std::string mode = ctx.node.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") ctx.fail(fmt::format("mode '{}' is not avg or max", mode));
  // Opset 16 added the attribute with half_pixel as its default; before, rois were output_half_pixel's.
  const std::string ctm =
      ctx.node.attr_string("coordinate_transformation_mode", ctx.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    ctx.fail(fmt::format("coordinate_transformation_mode '{}' is not half_pixel or output_half_pixel", ctm));
  const double scale = ctx.node.attr_float("spatial_scale", 1.0), offset = ctm == "half_pixel" ? 0.5 : 0.0;

  const auto corner = [&](int64_t i) {
    return add_s(mul_s(capi::reshape(capi::select(rois, 1, i), {r, 1}), scale), -offset);
  };
  const DynTensor x1 = corner(0), y1 = corner(1), x2 = corner(2), y2 = corner(3);  // [R, 1]
  DynTensor roi_w = capi::binary(x2, x1, BinaryOp::Sub), roi_h = capi::binary(y2, y1, BinaryOp::Sub);
  if (ctm == "output_half_pixel") {  // the legacy mode forces rois of at least one pixel
    roi_w = capi::scalar(roi_w, ScalarOp::ClampMin, 1.0);
    roi_h = capi::scalar(roi_h, ScalarOp::ClampMin, 1.0);
  }
  const DynTensor ys = sample_coords(y1, mul_s(roi_h, 1.0 / static_cast<double>(out_h)), out_h, grid);   // [R, Sh]
  const DynTensor xs_ = sample_coords(x1, mul_s(roi_w, 1.0 / static_cast<double>(out_w)), out_w, grid);  // [R, Sw]
  const int64_t sh = out_h * grid, sw = out_w * grid, points = sh * sw;
  const Taps ty = taps_of(ys, h), tx = taps_of(xs_, w);

  // Each roi's image [R, C, H * W]; a tap (row [R, Sh], col [R, Sw]) reads [R, C, Sh * Sw].
  const DynTensor image = capi::index_select(capi::reshape(x, {xs[0], c, h * w}), 0, ctx.input(2));
  const auto tap = [&](const DynTensor& row, const DynTensor& col) {
    const DynTensor flat = capi::binary(capi::reshape(mul_s(row, static_cast<double>(w)), {r, sh, 1}),
                                        capi::reshape(col, {r, 1, sw}), BinaryOp::Add);
    const DynTensor idx = capi::expand(capi::reshape(capi::cast(flat, DType::I64), {r, 1, points}), {r, c, points});
    return capi::gather(image, 2, idx);
  };
  const auto weight = [&](const DynTensor& wy, const DynTensor& wx) {
    return capi::reshape(capi::binary(capi::reshape(wy, {r, sh, 1}), capi::reshape(wx, {r, 1, sw}), BinaryOp::Mul),
                         {r, 1, points});
  };
  const DynTensor hy = capi::scalar(ty.frac, ScalarOp::RSub, 1.0), hx = capi::scalar(tx.frac, ScalarOp::RSub, 1.0);
  const DynTensor terms[4] = {capi::binary(tap(ty.low, tx.low), weight(hy, hx), BinaryOp::Mul),
                              capi::binary(tap(ty.low, tx.high), weight(hy, tx.frac), BinaryOp::Mul),
                              capi::binary(tap(ty.high, tx.low), weight(ty.frac, hx), BinaryOp::Mul),
                              capi::binary(tap(ty.high, tx.high), weight(ty.frac, tx.frac), BinaryOp::Mul)};
  // ONNX Runtime's max mode keeps the largest weighted tap of each sample; avg sums them.
  DynTensor v = terms[0];
  for (int i = 1; i < 4; ++i) v = capi::binary(v, terms[i], mode == "max" ? BinaryOp::Max : BinaryOp::Add);
  const DynTensor inside = weight(capi::cast(ty.valid, capi::dtype(x)), capi::cast(tx.valid, capi::dtype(x)));
  v = capi::reshape(capi::binary(v, inside, BinaryOp::Mul), {r, c, out_h, grid, out_w, grid});
  const ReduceOp op = mode == "max" ? ReduceOp::Max : ReduceOp::Mean;
  return one(capi::reduce(capi::reduce(v, op, 5, false), op, 3, false));
}

}  // namespace

void register_roi_align_ops(OpRegistry& r) { r.add("RoiAlign", roi_align, 10); }

}  // namespace ember::onnx_import::math
