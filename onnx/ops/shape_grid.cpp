// ONNX's GridSample (opset 16, PyTorch's grid_sample; h-onnx-shape): X [N, C, H, W] sampled at grid [N, Ho, Wo, 2]
// with bilinear, nearest or bicubic interpolation and zeros, border or reflection padding. Composed on the device:
// the grid's coordinates are unnormalised and padded with elementwise ops, every tap is a gather of the flattened
// input at floor-ed positions, weighted by a function of the fractional part, so the gradient reaches both X and the
// grid (through the weights), as in PyTorch.
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

}  // namespace

void register_shape_grid_ops(OpRegistry& r) { r.add("GridSample", grid_sample_op, 16); }

}  // namespace ember::onnx_import
