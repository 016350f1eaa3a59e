// GridSample (opset 16; torch.nn.functional.grid_sample's semantics) composed from runtime ops (h-onnx-nn).
//
// The sampling positions are data (the grid), so unlike Resize the taps are computed on the device: unnormalized
// coordinates, the padding rule (border clamps, reflection folds them back, zeros masks taps outside), floor /
// round to tap positions, one gather per tap over the flattened image, and the interpolation weights as tensors.
// Gradients reach the image through the gathers and the grid through the weights, like PyTorch's.
#include <fmt/format.h>

#include "onnx/ops/nn_common.hpp"

namespace ember::onnx_import::nn_ops {
namespace {

using T = DynTensor;
T add(const T& a, const T& b) { return capi::binary(a, b, BinaryOp::Add); }
T mul(const T& a, const T& b) { return capi::binary(a, b, BinaryOp::Mul); }
T sadd(const T& a, double s) { return capi::scalar(a, ScalarOp::Add, s); }
T smul(const T& a, double s) { return capi::scalar(a, ScalarOp::Mul, s); }

enum class Padding { Zeros, Border, Reflection };

struct Sampler {
  T image;  // [N, C, H * W]
  int64_t n, c, h, w, ho, wo;
  Padding padding;
  bool align_corners;

  // PyTorch's reflect_coordinates: folds x into [low, high] (twice_low / twice_high given doubled).
  static T reflect(const T& x, double twice_low, double twice_high) {
    if (twice_low == twice_high) return smul(x, 0.0);
    const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
    const T a = capi::unary(sadd(x, -lo), UnaryOp::Abs);
    const T flips = capi::unary(smul(a, 1.0 / span), UnaryOp::Floor);
    const T extra = capi::binary(a, smul(flips, span), BinaryOp::Sub);
    const T odd = capi::scalar(flips, ScalarOp::Remainder, 2.0);
    return sadd(add(extra, mul(odd, capi::scalar(smul(extra, -2.0), ScalarOp::Add, span))), lo);
  }
  T clip(const T& x, int64_t size) const {
    return capi::scalar(capi::scalar(x, ScalarOp::ClampMin, 0.0), ScalarOp::ClampMax, static_cast<double>(size - 1));
  }
  // The padding rule on a coordinate along a dim of `size` (zeros: unchanged, masked at the fetch).
  T pad(const T& x, int64_t size) const {
    if (padding == Padding::Border) return clip(x, size);
    if (padding == Padding::Reflection) {
      const double s = static_cast<double>(size);
      return clip(align_corners ? reflect(x, 0, 2 * (s - 1)) : reflect(x, -1, 2 * s - 1), size);
    }
    return x;
  }
  // The image at integer-valued positions (xi, yi) [N, Ho, Wo] -> [N, C, Ho, Wo]; 0 outside the image.
  T fetch(const T& xi, const T& yi) const {
    const T xc = clip(xi, w), yc = clip(yi, h);
    const T flat = capi::cast(add(smul(yc, static_cast<double>(w)), xc), DType::I64);
    const T idx = capi::expand(capi::reshape(flat, {n, 1, ho * wo}), {n, c, ho * wo});
    T v = capi::reshape(capi::gather(image, 2, idx), {n, c, ho, wo});
    if (padding != Padding::Zeros) return v;
    const auto inside = [](const T& t, const T& clipped) { return capi::compare(t, clipped, CompareOp::Eq); };
    const T ok = capi::logical(inside(xi, xc), inside(yi, yc), LogicOp::And);
    return mul(v, capi::reshape(capi::cast(ok, capi::dtype(v)), {n, 1, ho, wo}));
  }
};

T unsq(const T& t, int64_t n, int64_t ho, int64_t wo) { return capi::reshape(t, {n, 1, ho, wo}); }

// The four cubic convolution weights (A = -0.75) of taps floor - 1 .. floor + 2 for fraction t.
std::vector<T> cubic_weights(const T& t) {
  const double A = -0.75;
  const auto far = [&](const T& u) {  // ((A u - 5A) u + 8A) u - 4A for 1 < u < 2
    return sadd(mul(sadd(mul(sadd(smul(u, A), -5 * A), u), 8 * A), u), -4 * A);
  };
  const auto near = [&](const T& u) {  // ((A + 2) u - (A + 3)) u u + 1 for u <= 1
    return sadd(mul(mul(sadd(smul(u, A + 2), -(A + 3)), u), u), 1.0);
  };
  const T one_minus = capi::scalar(t, ScalarOp::RSub, 1.0);
  return {far(sadd(t, 1.0)), near(t), near(one_minus), far(capi::scalar(t, ScalarOp::RSub, 2.0))};
}

Outputs grid_sample(OpContext& ctx) {
  const T& x = float_input(ctx, 0);
  const T& grid = float_input(ctx, 1);
  const std::vector<int64_t> xd = dims_of(x), gd = dims_of(grid);
  if (xd.size() != 4) ctx.fail(fmt::format("input must be 4-D [N, C, H, W], got rank {}", xd.size()));
  if (gd.size() != 4 || gd[0] != xd[0] || gd[3] != 2) ctx.fail("grid must be [N, H_out, W_out, 2]");
  const std::string mode = ctx.node.attr_string("mode", "bilinear");
  const std::string pm = ctx.node.attr_string("padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") ctx.fail(fmt::format("mode '{}' is unknown", mode));
  if (pm != "zeros" && pm != "border" && pm != "reflection") ctx.fail(fmt::format("padding_mode '{}' is unknown", pm));
  Sampler s{capi::reshape(x, {xd[0], xd[1], xd[2] * xd[3]}), xd[0], xd[1], xd[2], xd[3], gd[1], gd[2],
            pm == "zeros" ? Padding::Zeros : pm == "border" ? Padding::Border : Padding::Reflection,
            ctx.node.attr_int("align_corners", 0) != 0};
  // Unnormalize: -1..1 to the corner pixels' centres (align_corners) or to the image's edges.
  const auto unnormalize = [&](const T& g, int64_t size) {
    const double sz = static_cast<double>(size);
    return s.align_corners ? smul(sadd(g, 1.0), (sz - 1) / 2) : smul(sadd(smul(sadd(g, 1.0), sz), -1.0), 0.5);
  };
  T ix = unnormalize(capi::select(grid, 3, 0), s.w), iy = unnormalize(capi::select(grid, 3, 1), s.h);
  const auto u = [&](const T& t) { return unsq(t, s.n, s.ho, s.wo); };
  if (mode == "nearest") {
    ix = s.pad(ix, s.w);
    iy = s.pad(iy, s.h);
    return {s.fetch(capi::unary(ix, UnaryOp::Round), capi::unary(iy, UnaryOp::Round))};
  }
  if (mode == "bilinear") {
    ix = s.pad(ix, s.w);
    iy = s.pad(iy, s.h);
    const T x0 = capi::unary(ix, UnaryOp::Floor), y0 = capi::unary(iy, UnaryOp::Floor);
    const T x1 = sadd(x0, 1.0), y1 = sadd(y0, 1.0);
    const T wx1 = capi::binary(ix, x0, BinaryOp::Sub), wy1 = capi::binary(iy, y0, BinaryOp::Sub);
    const T wx0 = capi::scalar(wx1, ScalarOp::RSub, 1.0), wy0 = capi::scalar(wy1, ScalarOp::RSub, 1.0);
    T y = mul(s.fetch(x0, y0), u(mul(wx0, wy0)));
    y = add(y, mul(s.fetch(x1, y0), u(mul(wx1, wy0))));
    y = add(y, mul(s.fetch(x0, y1), u(mul(wx0, wy1))));
    return {add(y, mul(s.fetch(x1, y1), u(mul(wx1, wy1))))};
  }
  // bicubic: 4 x 4 taps, the padding rule applied to each tap's position (PyTorch's get_value_bounded).
  const T fx = capi::unary(ix, UnaryOp::Floor), fy = capi::unary(iy, UnaryOp::Floor);
  const std::vector<T> wx = cubic_weights(capi::binary(ix, fx, BinaryOp::Sub));
  const std::vector<T> wy = cubic_weights(capi::binary(iy, fy, BinaryOp::Sub));
  std::optional<T> y;
  for (int j = 0; j < 4; ++j) {
    const T ty = s.pad(sadd(fy, j - 1.0), s.h);
    for (int i = 0; i < 4; ++i) {
      const T term = mul(s.fetch(s.pad(sadd(fx, i - 1.0), s.w), ty), u(mul(wx[i], wy[j])));
      y = y ? add(*y, term) : term;
    }
  }
  return {*y};
}

}  // namespace

void register_grid_sample(OpRegistry& r) { r.add("GridSample", grid_sample, 16); }

}  // namespace ember::onnx_import::nn_ops
