// ONNX's sampling operators (h-onnx-shape). GridSample (opset 16, PyTorch's grid_sample): X [N, C, H, W] sampled
// at grid [N, Ho, Wo, 2] with bilinear, nearest or bicubic interpolation and zeros, border or reflection padding.
// Composed on the device: the grid's coordinates are unnormalised and padded with elementwise ops, every tap is a
// gather of the flattened input at floor-ed positions, weighted by a function of the fractional part, so the
// gradient reaches both X and the grid (through the weights), as in PyTorch. RoiAlign is at the end of the file.
#include <cmath>

#include "onnx/ops/shape_util.hpp"

namespace ember::onnx_import {
namespace {

using namespace shape_detail;

DynTensor sc(const DynTensor& x, ScalarOp op, double s) { return capi::scalar(x, op, s); }
DynTensor bin(const DynTensor& a, const DynTensor& b, BinaryOp op) { return capi::binary(a, b, op); }

struct Sampler {
  const OpContext& ctx;
  DynTensor table;  // X as [N, C, H * W]
  int64_t n, c, h, w, points;
  std::string padding;
  bool align;

  // A grid coordinate in [-1, 1] as a pixel coordinate along a dim of `size`: -1 and 1 are the centres of the end
  // pixels with align_corners, their outer edges without.
  DynTensor unnormalized(const DynTensor& g, int64_t size) const {
    if (align) return sc(sc(g, ScalarOp::Add, 1.0), ScalarOp::Mul, 0.5 * double(size - 1));
    return sc(sc(sc(g, ScalarOp::Add, 1.0), ScalarOp::Mul, 0.5 * double(size)), ScalarOp::Sub, 0.5);
  }
  // PyTorch's reflect_coordinates over [twice_low / 2, twice_high / 2].
  DynTensor reflect(const DynTensor& x, double twice_low, double twice_high) const {
    if (twice_low == twice_high) return sc(x, ScalarOp::Mul, 0.0);
    const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
    const DynTensor in = capi::unary(sc(x, ScalarOp::Sub, lo), UnaryOp::Abs);
    const DynTensor extra = sc(in, ScalarOp::Remainder, span);
    const DynTensor flips = capi::unary(sc(in, ScalarOp::Div, span), UnaryOp::Floor);
    const DynTensor even = capi::compare_scalar(sc(flips, ScalarOp::Remainder, 2.0), CompareOp::Eq, 0.0);
    return capi::where(even, sc(extra, ScalarOp::Add, lo), sc(sc(extra, ScalarOp::RSub, span), ScalarOp::Add, lo));
  }
  // Border / reflection padding of a pixel coordinate (zeros padding leaves it; out-of-range taps then read 0).
  DynTensor pad(const DynTensor& x, int64_t size) const {
    if (padding == "zeros") return x;
    DynTensor y = x;
    if (padding == "reflection")
      y = align ? reflect(y, 0.0, 2.0 * double(size - 1)) : reflect(y, -1.0, 2.0 * double(size) - 1.0);
    return sc(sc(y, ScalarOp::ClampMin, 0.0), ScalarOp::ClampMax, double(size - 1));
  }
  // X at integral pixel coordinates (tx, ty) [N, P], times weight [N, P]; 0 where the tap is outside X.
  DynTensor tap(const DynTensor& tx, const DynTensor& ty, const DynTensor& weight) const {
    const auto inside = [](const DynTensor& t, int64_t size) {
      return capi::logical(capi::compare_scalar(t, CompareOp::Ge, 0.0),
                           capi::compare_scalar(t, CompareOp::Le, double(size - 1)), LogicOp::And);
    };
    const DynTensor valid = capi::logical(inside(tx, w), inside(ty, h), LogicOp::And);
    const auto clamp = [](const DynTensor& t, int64_t size) {
      return sc(sc(t, ScalarOp::ClampMin, 0.0), ScalarOp::ClampMax, double(size - 1));
    };
    const DynTensor lin = bin(sc(clamp(ty, h), ScalarOp::Mul, double(w)), clamp(tx, w), BinaryOp::Add);
    const DynTensor idx = capi::expand(capi::reshape(capi::cast(lin, DType::I64), {n, 1, points}), {n, c, points});
    const DynTensor v = capi::gather(table, 2, idx);
    const DynTensor zero = capi::full(ctx.device, capi::dtype(weight), Shape{1}, 0.0);
    return bin(v, capi::reshape(capi::where(valid, weight, zero), {n, 1, points}), BinaryOp::Mul);
  }
};

// PyTorch's cubic convolution weights (A = -0.75) of the four taps around a point at fraction t.
std::vector<DynTensor> cubic_weights(const DynTensor& t) {
  constexpr double A = -0.75;
  const auto near = [&](const DynTensor& x) {  // ((A + 2) x - (A + 3)) x^2 + 1
    const DynTensor p = sc(sc(x, ScalarOp::Mul, A + 2), ScalarOp::Sub, A + 3);
    return sc(bin(bin(p, x, BinaryOp::Mul), x, BinaryOp::Mul), ScalarOp::Add, 1.0);
  };
  const auto far = [&](const DynTensor& x) {  // ((A x - 5A) x + 8A) x - 4A
    const DynTensor p = sc(sc(x, ScalarOp::Mul, A), ScalarOp::Sub, 5 * A);
    const DynTensor q = sc(bin(p, x, BinaryOp::Mul), ScalarOp::Add, 8 * A);
    return sc(bin(q, x, BinaryOp::Mul), ScalarOp::Sub, 4 * A);
  };
  return {far(sc(t, ScalarOp::Add, 1.0)), near(t), near(sc(t, ScalarOp::RSub, 1.0)), far(sc(t, ScalarOp::RSub, 2.0))};
}

Outputs grid_sample_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const DynTensor& grid = ctx.input(1);
  const std::vector<int64_t> xs = capi::shape(x).dims, gs = capi::shape(grid).dims;
  if (xs.size() != 4 || gs.size() != 4 || gs[3] != 2 || gs[0] != xs[0])
    ctx.fail(fmt::format("X {} must be [N, C, H, W] and grid {} [N, Ho, Wo, 2]", text(xs), text(gs)));
  const std::string mode = ctx.node.attr_string("mode", "bilinear");
  const std::string padding = ctx.node.attr_string("padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") ctx.fail(fmt::format("mode '{}'", mode));
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    ctx.fail(fmt::format("padding_mode '{}'", padding));
  const int64_t points = gs[1] * gs[2];
  Sampler s{ctx,     capi::reshape(x, {xs[0], xs[1], xs[2] * xs[3]}), xs[0], xs[1], xs[2], xs[3], points,
            padding, ctx.node.attr_int("align_corners", 0) != 0};
  const DynTensor g = capi::reshape(grid, {xs[0], points, 2});
  const DynTensor ix = s.unnormalized(capi::reshape(capi::slice(g, {{0}, {0}, {0, 1}}), {xs[0], points}), s.w);
  const DynTensor iy = s.unnormalized(capi::reshape(capi::slice(g, {{0}, {0}, {1, 2}}), {xs[0], points}), s.h);
  const DynTensor one = capi::full(ctx.device, capi::dtype(ix), Shape{1}, 1.0);
  DynTensor out;
  const auto add = [&](const DynTensor& t) { out = out.payload ? bin(out, t, BinaryOp::Add) : t; };
  if (mode == "nearest") {
    // Round half to even, as PyTorch's nearbyint.
    add(s.tap(capi::unary(s.pad(ix, s.w), UnaryOp::Round), capi::unary(s.pad(iy, s.h), UnaryOp::Round),
              capi::expand(one, {xs[0], points})));
  } else if (mode == "bilinear") {
    const DynTensor px = s.pad(ix, s.w), py = s.pad(iy, s.h);
    const DynTensor x0 = capi::unary(px, UnaryOp::Floor), y0 = capi::unary(py, UnaryOp::Floor);
    const DynTensor fx = bin(px, x0, BinaryOp::Sub), fy = bin(py, y0, BinaryOp::Sub);
    const DynTensor x1 = sc(x0, ScalarOp::Add, 1.0), y1 = sc(y0, ScalarOp::Add, 1.0);
    const DynTensor gx = sc(fx, ScalarOp::RSub, 1.0), gy = sc(fy, ScalarOp::RSub, 1.0);
    add(s.tap(x0, y0, bin(gx, gy, BinaryOp::Mul)));
    add(s.tap(x1, y0, bin(fx, gy, BinaryOp::Mul)));
    add(s.tap(x0, y1, bin(gx, fy, BinaryOp::Mul)));
    add(s.tap(x1, y1, bin(fx, fy, BinaryOp::Mul)));
  } else {
    // Bicubic: 4 x 4 taps around floor(ix, iy) of the unpadded coordinates; each tap's coordinates padded on their own.
    const DynTensor x0 = capi::unary(ix, UnaryOp::Floor), y0 = capi::unary(iy, UnaryOp::Floor);
    const auto wx = cubic_weights(bin(ix, x0, BinaryOp::Sub)), wy = cubic_weights(bin(iy, y0, BinaryOp::Sub));
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        add(s.tap(s.pad(sc(x0, ScalarOp::Add, j - 1), s.w), s.pad(sc(y0, ScalarOp::Add, i - 1), s.h),
                  bin(wx[static_cast<std::size_t>(j)], wy[static_cast<std::size_t>(i)], BinaryOp::Mul)));
  }
  return {capi::reshape(out, {xs[0], xs[1], gs[1], gs[2]})};
}

// RoiAlign (opsets 10 and 16, ONNX Runtime's algorithm): each output bin of each region averages (or takes the max
// of) bilinear samples on a regular grid. The regions are read on the host (no gradient flows to them, as in ORT),
// which makes every sample a fixed set of four weighted taps: one index_select of X's pixels [N * H * W, C] by all
// taps, a multiply by their weights and a reduction per bin, so X gets its gradient.
Outputs roi_align_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> xs = capi::shape(x).dims, rs = capi::shape(ctx.input(1)).dims;
  if (xs.size() != 4 || rs.size() != 2 || rs[1] != 4)
    ctx.fail(fmt::format("X {} must be [N, C, H, W] and rois {} [R, 4]", text(xs), text(rs)));
  const int64_t nb = xs[0], c = xs[1], h = xs[2], w = xs[3], nr = rs[0];
  const std::vector<double> rois = capi::to_data(ctx.input(1)).to_vec<double>();
  const std::vector<int64_t> batch = ctx.ints(2);
  if (static_cast<int64_t>(batch.size()) != nr) ctx.fail("batch_indices must have one entry per roi");
  const int64_t oh = ctx.node.attr_int("output_height", 1), ow = ctx.node.attr_int("output_width", 1);
  const int64_t ratio = ctx.node.attr_int("sampling_ratio", 0);
  const double scale = ctx.node.attr_float("spatial_scale", 1.0);
  const bool max_mode = ctx.node.attr_string("mode", "avg") == "max";
  // Opset 16's half_pixel (the default there) shifts by half a pixel; opset 10 behaves as output_half_pixel.
  const bool half_pixel =
      ctx.opset >= 16 && ctx.node.attr_string("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  if (oh <= 0 || ow <= 0 || ratio < 0) ctx.fail("output sizes must be positive and sampling_ratio >= 0");
  struct Grid {
    int64_t gh, gw;
  };
  std::vector<Grid> grids(static_cast<std::size_t>(nr));
  int64_t samples = 1;  // the most samples of any bin: bins with fewer are padded
  const auto offset = half_pixel ? 0.5 : 0.0;
  for (int64_t r = 0; r < nr; ++r) {
    const double* b = &rois[static_cast<std::size_t>(r * 4)];
    double rh = b[3] * scale - b[1] * scale, rw = b[2] * scale - b[0] * scale;
    if (!half_pixel) rh = std::max(rh, 1.0), rw = std::max(rw, 1.0);
    const int64_t gh = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / double(oh)));
    const int64_t gw = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / double(ow)));
    if (gh < 0 || gw < 0 || gh * gw > 4096) ctx.fail("a region needs more than 4096 samples per bin");
    grids[static_cast<std::size_t>(r)] = {gh, gw};
    samples = std::max(samples, gh * gw);
  }
  const int64_t taps = nr * oh * ow * samples * 4;
  if (taps > (int64_t{1} << 24)) ctx.fail(fmt::format("{} samples are too many", taps / 4));
  std::vector<int64_t> idx(static_cast<std::size_t>(taps), 0);
  std::vector<double> wt(static_cast<std::size_t>(taps), 0.0);
  for (int64_t r = 0; r < nr; ++r) {
    const int64_t bi = batch[static_cast<std::size_t>(r)];
    if (bi < 0 || bi >= nb) ctx.fail(fmt::format("batch index {} is outside 0..{}", bi, nb - 1));
    const double* b = &rois[static_cast<std::size_t>(r * 4)];
    const double y0 = b[1] * scale - offset, x0 = b[0] * scale - offset;
    double rh = b[3] * scale - offset - y0, rw = b[2] * scale - offset - x0;
    if (!half_pixel) rh = std::max(rh, 1.0), rw = std::max(rw, 1.0);
    const auto [gh, gw] = grids[static_cast<std::size_t>(r)];
    const double bh = rh / double(oh), bw = rw / double(ow);
    const double count = double(std::max<int64_t>(gh * gw, 1));
    for (int64_t ph = 0; ph < oh; ++ph)
      for (int64_t pw = 0; pw < ow; ++pw) {
        const int64_t bin = (r * oh + ph) * ow + pw;
        for (int64_t k = 0; k < samples; ++k) {
          // Padded samples repeat sample 0 (the max is unchanged) with weight 0 when averaging.
          const int64_t s = k < gh * gw ? k : 0;
          double y = y0 + double(ph) * bh + (double(s / std::max<int64_t>(gw, 1)) + 0.5) * bh / double(gh);
          double xx = x0 + double(pw) * bw + (double(s % std::max<int64_t>(gw, 1)) + 0.5) * bw / double(gw);
          const std::size_t at = static_cast<std::size_t>((bin * samples + k) * 4);
          if (gh * gw == 0 || y < -1.0 || y > double(h) || xx < -1.0 || xx > double(w)) continue;  // reads 0
          y = std::max(y, 0.0), xx = std::max(xx, 0.0);
          int64_t yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(xx), yh = yl + 1, xh = xl + 1;
          if (yl >= h - 1) yl = yh = h - 1, y = double(yl);
          if (xl >= w - 1) xl = xh = w - 1, xx = double(xl);
          const double ly = y - double(yl), lx = xx - double(xl), hy = 1 - ly, hx = 1 - lx;
          const double norm = max_mode ? 1.0 : k >= gh * gw ? 0.0 : 1.0 / count;
          const int64_t base = bi * h * w;
          const int64_t pos[4] = {base + yl * w + xl, base + yl * w + xh, base + yh * w + xl, base + yh * w + xh};
          const double wv[4] = {hy * hx, hy * lx, ly * hx, ly * lx};
          for (int t = 0; t < 4; ++t) {
            idx[at + static_cast<std::size_t>(t)] = pos[t];
            wt[at + static_cast<std::size_t>(t)] = wv[t] * norm;
          }
        }
      }
  }
  const DynTensor pixels = capi::reshape(capi::permute(x, {0, 2, 3, 1}), {nb * h * w, c});
  const DynTensor weights =
      capi::from_data(ctx.device, TensorData::from_vec<double>(wt, Shape{taps, 1}).convert(capi::dtype(x)));
  const DynTensor v = capi::binary(capi::index_select(pixels, 0, index_tensor(ctx, idx)), weights, BinaryOp::Mul);
  const DynTensor pooled = capi::reduce(capi::reshape(v, {nr * oh * ow, samples * 4, c}),
                                        max_mode ? ReduceOp::Max : ReduceOp::Sum, 1, false);
  return {capi::permute(capi::reshape(pooled, {nr, oh, ow, c}), {0, 3, 1, 2})};
}

}  // namespace

void register_shape_grid_ops(OpRegistry& r) {
  r.add("GridSample", grid_sample_op, 16);
  r.add("RoiAlign", roi_align_op, 10);
}

}  // namespace ember::onnx_import
