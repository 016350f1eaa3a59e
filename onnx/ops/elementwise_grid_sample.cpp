// ONNX's GridSample (opset 16, 2-D; h-onnx-math): X [N, C, H, W] sampled at grid [N, Ho, Wo, 2] (x, y in
// [-1, 1]) with bilinear, nearest or bicubic interpolation and zeros / border / reflection padding, as torch's
// grid_sample.
// Composed from runtime ops: the taps' flat indices (computed on the device, cast to int) gather from X viewed as
// [N, C, H * W], weighted by the fractional parts, so gradients reach both X and the grid.
#include "onnx/ops/math_util.hpp"

namespace ember::onnx_import::math {
namespace {

DynTensor mul_s(const DynTensor& x, double s) { return capi::scalar(x, ScalarOp::Mul, s); }
DynTensor add_s(const DynTensor& x, double s) { return capi::scalar(x, ScalarOp::Add, s); }
DynTensor clamp(const DynTensor& x, double lo, double hi) {
  return capi::scalar(capi::scalar(x, ScalarOp::ClampMin, lo), ScalarOp::ClampMax, hi);
}

// x reflected into [lo, hi] (torch's reflect_coordinates): folded by the span, mirrored on odd folds.
DynTensor reflect(const DynTensor& x, double lo, double hi) {
  const double span = hi - lo;
  if (span <= 0) return capi::full(capi::device(x), capi::dtype(x), capi::shape(x), 0.0);
  const DynTensor d = capi::unary(add_s(x, -lo), UnaryOp::Abs);
  const DynTensor extra = capi::scalar(d, ScalarOp::Remainder, span);
  const DynTensor flips = capi::unary(mul_s(d, 1.0 / span), UnaryOp::Floor);
  const DynTensor odd = capi::compare_scalar(capi::scalar(flips, ScalarOp::Remainder, 2.0), CompareOp::Eq, 1.0);
  return capi::where(odd, capi::scalar(extra, ScalarOp::RSub, hi), add_s(extra, lo));
}

// A pixel coordinate folded into a dim of `size` by the padding mode (zeros leaves it: its taps outside read 0).
DynTensor fold(const DynTensor& c, int64_t size, bool align, const std::string& padding) {
  const double n = static_cast<double>(size);
  if (padding == "border") return clamp(c, 0.0, n - 1);
  if (padding == "reflection") return clamp(align ? reflect(c, 0.0, n - 1) : reflect(c, -0.5, n - 0.5), 0.0, n - 1);
  return c;
}

// A grid coordinate in [-1, 1] as a pixel coordinate along a dim of `size` (not yet folded).
DynTensor unnormalize(const DynTensor& g, int64_t size, bool align) {
  const double n = static_cast<double>(size);
  return align ? mul_s(add_s(g, 1.0), (n - 1) / 2) : mul_s(add_s(mul_s(add_s(g, 1.0), n), -1.0), 0.5);
}

// The cubic convolution weights (A = -0.75, as torch) of the taps at offsets -1, 0, 1, 2 from floor(x), t = x - floor.
std::vector<DynTensor> cubic_weights(const DynTensor& t) {
  constexpr double a = -0.75;
  const auto far = [&](const DynTensor& d) {  // for 1 < d < 2: ((a d - 5a) d + 8a) d - 4a
    return add_s(
        capi::binary(add_s(capi::binary(add_s(mul_s(d, a), -5 * a), d, BinaryOp::Mul), 8 * a), d, BinaryOp::Mul),
        -4 * a);
  };
  const auto near = [&](const DynTensor& d) {  // for d <= 1: ((a + 2) d - (a + 3)) d d + 1
    return add_s(capi::binary(capi::binary(add_s(mul_s(d, a + 2), -(a + 3)), d, BinaryOp::Mul), d, BinaryOp::Mul), 1.0);
  };
  const DynTensor u = capi::scalar(t, ScalarOp::RSub, 1.0);
  return {far(add_s(t, 1.0)), near(t), near(u), far(add_s(u, 1.0))};
}

Outs grid_sample(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const DynTensor& grid = ctx.input(1);
  const Shape xs = capi::shape(x), gs = capi::shape(grid);
  if (xs.rank() != 4 || gs.rank() != 4 || gs[0] != xs[0] || gs[3] != 2)
    ctx.fail(
        fmt::format("X must be [N, C, H, W] and grid [N, Ho, Wo, 2], got {} and {}", xs.to_string(), gs.to_string()));
  const std::string mode = ctx.node.attr_string("mode", "bilinear");
  const std::string padding = ctx.node.attr_string("padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    ctx.fail(fmt::format("mode '{}' is not bilinear, nearest or bicubic", mode));
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    ctx.fail(fmt::format("padding_mode '{}' is not zeros, border or reflection", padding));
  const bool align = ctx.node.attr_int("align_corners", 0) != 0;
  const int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], points = gs[1] * gs[2];

  const DynTensor flat_grid = capi::reshape(grid, {n, points, 2});
  const DynTensor gx = capi::select(flat_grid, 2, 0), gy = capi::select(flat_grid, 2, 1);  // [N, P]
  const DynTensor ux = unnormalize(gx, w, align), uy = unnormalize(gy, h, align);
  const DynTensor px = fold(ux, w, align, padding), py = fold(uy, h, align, padding);
  const DynTensor image = capi::reshape(x, {n, c, h * w});

  // X at integer pixel (ix, iy) [N, P] for every channel, 0 outside the image (zeros padding; the other modes
  // folded the coordinates inside already).
  const auto tap = [&](const DynTensor& ix, const DynTensor& iy) {
    const DynTensor inside =
        capi::logical(capi::logical(capi::compare_scalar(ix, CompareOp::Ge, 0.0),
                                    capi::compare_scalar(ix, CompareOp::Le, w - 1.0), LogicOp::And),
                      capi::logical(capi::compare_scalar(iy, CompareOp::Ge, 0.0),
                                    capi::compare_scalar(iy, CompareOp::Le, h - 1.0), LogicOp::And),
                      LogicOp::And);
    const DynTensor flat =
        capi::binary(mul_s(clamp(iy, 0, h - 1.0), static_cast<double>(w)), clamp(ix, 0, w - 1.0), BinaryOp::Add);
    const DynTensor idx = capi::expand(capi::reshape(capi::cast(flat, DType::I64), {n, 1, points}), {n, c, points});
    const DynTensor v = capi::gather(image, 2, idx);  // [N, C, P]
    return capi::binary(v, capi::reshape(capi::cast(inside, capi::dtype(x)), {n, 1, points}), BinaryOp::Mul);
  };

  const auto weighted = [&](const DynTensor& v, const DynTensor& wgt) {
    return capi::binary(v, capi::reshape(wgt, {n, 1, points}), BinaryOp::Mul);
  };
  DynTensor y;
  if (mode == "bicubic") {
    // 4 x 4 taps around the unfolded coordinate, each tap folded by the padding mode on its own (as torch).
    const DynTensor x0 = capi::unary(ux, UnaryOp::Floor), y0 = capi::unary(uy, UnaryOp::Floor);
    const std::vector<DynTensor> wx = cubic_weights(capi::binary(ux, x0, BinaryOp::Sub));
    const std::vector<DynTensor> wy = cubic_weights(capi::binary(uy, y0, BinaryOp::Sub));
    for (int j = 0; j < 4; ++j) {
      const DynTensor cy = fold(add_s(y0, j - 1.0), h, align, padding);
      for (int i = 0; i < 4; ++i) {
        const DynTensor cx = fold(add_s(x0, i - 1.0), w, align, padding);
        const DynTensor term = weighted(
            tap(cx, cy), capi::binary(wx[static_cast<std::size_t>(i)], wy[static_cast<std::size_t>(j)], BinaryOp::Mul));
        y = i == 0 && j == 0 ? term : capi::binary(y, term, BinaryOp::Add);
      }
    }
  } else if (mode == "nearest") {
    y = tap(capi::unary(px, UnaryOp::Round), capi::unary(py, UnaryOp::Round));
  } else {
    const DynTensor x0 = capi::unary(px, UnaryOp::Floor), y0 = capi::unary(py, UnaryOp::Floor);
    const DynTensor x1 = add_s(x0, 1.0), y1 = add_s(y0, 1.0);
    const DynTensor fx = capi::binary(px, x0, BinaryOp::Sub), fy = capi::binary(py, y0, BinaryOp::Sub);
    const DynTensor gx0 = capi::scalar(fx, ScalarOp::RSub, 1.0), gy0 = capi::scalar(fy, ScalarOp::RSub, 1.0);
    const auto weight = [&](const DynTensor& a, const DynTensor& b) {
      return capi::reshape(capi::binary(a, b, BinaryOp::Mul), {n, 1, points});
    };
    y = capi::binary(tap(x0, y0), weight(gx0, gy0), BinaryOp::Mul);
    y = capi::binary(y, capi::binary(tap(x1, y0), weight(fx, gy0), BinaryOp::Mul), BinaryOp::Add);
    y = capi::binary(y, capi::binary(tap(x0, y1), weight(gx0, fy), BinaryOp::Mul), BinaryOp::Add);
    y = capi::binary(y, capi::binary(tap(x1, y1), weight(fx, fy), BinaryOp::Mul), BinaryOp::Add);
  }
  return one(capi::reshape(y, {n, c, gs[1], gs[2]}));
}

}  // namespace

void register_grid_sample_ops(OpRegistry& r) { r.add("GridSample", grid_sample, 16); }

}  // namespace ember::onnx_import::math
