// 2-D pooling over contiguous NCHW input, matching backends/cpu/pool.cpp (PyTorch semantics, ceil_mode false;
// the tensor layer validates the options). Forward passes run one invocation per output element; backward passes
// are in gather form (one invocation per input pixel sums the outputs that reach it, in the CPU's order), so they
// need no atomics and are deterministic. max_pool2d_backward only gets the argmax indices, not the window
// geometry, so it first derives from them which output rows / columns can reach each input row / column.
#include "backends/vulkan/launch.hpp"
#include "engine/backend/pool_geometry.hpp"

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kMaxPool2d)
#include "max_pool2d.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kMaxPool2d)
#include "max_pool2d_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kMaxPool2d)
EMBER_SHADER_WORDS(kMaxPool2dBackwardBounds)
#include "max_pool2d_backward_bounds.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kMaxPool2dBackwardBounds)
#include "max_pool2d_backward_bounds_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kMaxPool2dBackwardBounds)
EMBER_SHADER_WORDS(kMaxPool2dBackwardRanges)
#include "max_pool2d_backward_ranges.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kMaxPool2dBackwardRanges)
#include "max_pool2d_backward_ranges_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kMaxPool2dBackwardRanges)
EMBER_SHADER_WORDS(kMaxPool2dBackward)
#include "max_pool2d_backward.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kMaxPool2dBackward)
#include "max_pool2d_backward_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kMaxPool2dBackward)
EMBER_SHADER_WORDS(kAvgPool2d)
#include "avg_pool2d.spv.inc"
;
EMBER_SHADER_DEF(kAvgPool2d)
EMBER_SHADER_WORDS(kAvgPool2dBackward)
#include "avg_pool2d_backward.spv.inc"
;
EMBER_SHADER_DEF(kAvgPool2dBackward)
EMBER_SHADER_WORDS(kAdaptiveAvgPool2d)
#include "adaptive_avg_pool2d.spv.inc"
;
EMBER_SHADER_DEF(kAdaptiveAvgPool2d)
EMBER_SHADER_WORDS(kAdaptiveAvgPool2dBackward)
#include "adaptive_avg_pool2d_backward.spv.inc"
;
EMBER_SHADER_DEF(kAdaptiveAvgPool2dBackward)

// Plane sizes shared by every pooling push block: n work items, input H x W, output Ho x Wo.
struct Planes {
  uint32_t n;
  int32_t H, W, Ho, Wo;
};
Planes planes(int64_t n, const Shape& in, const Shape& out) {
  return {static_cast<uint32_t>(n), static_cast<int32_t>(in[2]), static_cast<int32_t>(in[3]),
          static_cast<int32_t>(out[2]), static_cast<int32_t>(out[3])};
}

struct MaxPoolPush {
  Planes s;
  int32_t kh, kw, sh, sw, ph, pw, dh, dw;
};
struct AvgPoolPush {
  Planes s;
  int32_t kh, kw, sh, sw, ph, pw;
  uint32_t count_include_pad;
};
int32_t i32(int64_t v) { return static_cast<int32_t>(v); }
AvgPoolPush avg_push(const Planes& s, const Pool2dGeometry& g) {
  return {s, i32(g.kh), i32(g.kw), i32(g.sh), i32(g.sw), i32(g.ph), i32(g.pw), g.count_include_pad ? 1u : 0u};
}

}  // namespace

MaxPoolResult<FloatT, Index> max_pool2d(const FloatT& x, const Pool2dOptions& o) {
  const Pool2dGeometry g = pool2d_geometry(x.shape, o);
  const Shape shape = g.out_shape();
  auto y = empty<float>(x.ctx, shape);
  auto indices = empty<int64_t>(x.ctx, shape);
  const MaxPoolPush p{planes(y.numel(), x.shape, shape), i32(g.kh), i32(g.kw), i32(g.sh), i32(g.sw), i32(g.ph),
                      i32(g.pw), i32(g.dh), i32(g.dw)};
  launch(*x.ctx, kMaxPool2d, {in(x), out(y), out(indices)}, p, y.numel());
  return {std::move(y), std::move(indices)};
}

FloatT max_pool2d_backward(const FloatT& x, const FloatT& grad, const Index& indices) {
  if (grad.numel() == 0) return full<float>(x.ctx, x.shape, 0.0);
  Context& ctx = *x.ctx;
  const int64_t lines = grad.shape[2] + grad.shape[3], items = x.shape[2] + x.shape[3];
  // bounds / ranges hold (first, last) int32 pairs: two 32-bit words per line / item.
  auto bounds = empty<uint32_t>(x.ctx, Shape{2 * lines});
  auto ranges = empty<uint32_t>(x.ctx, Shape{2 * items});
  const Planes setup = planes(x.shape[0] * x.shape[1], x.shape, grad.shape);
  launch_grid(ctx, kMaxPool2dBackwardBounds, {in(indices), out(bounds)}, setup,
              {static_cast<uint32_t>(std::min<int64_t>(lines, 65535)), 1, 1}, {kWorkgroup, 0, 0, 0});
  launch(ctx, kMaxPool2dBackwardRanges, {in(indices), in(bounds), out(ranges)}, setup, items);
  auto gx = empty<float>(x.ctx, x.shape);
  launch(ctx, kMaxPool2dBackward, {in(grad), in(indices), in(ranges), out(gx)},
         planes(x.numel(), x.shape, grad.shape), x.numel());
  return gx;
}

FloatT avg_pool2d(const FloatT& x, const Pool2dOptions& o) {
  const Pool2dGeometry g = pool2d_geometry(x.shape, o);
  auto y = empty<float>(x.ctx, g.out_shape());
  launch(*x.ctx, kAvgPool2d, {in(x), out(y)}, avg_push(planes(y.numel(), x.shape, y.shape), g), y.numel());
  return y;
}

FloatT avg_pool2d_backward(const FloatT& x, const FloatT& grad, const Pool2dOptions& o) {
  auto gx = empty<float>(x.ctx, x.shape);
  const Pool2dGeometry g = pool2d_geometry(x.shape, o, grad.shape[2], grad.shape[3]);
  launch(*x.ctx, kAvgPool2dBackward, {in(grad), out(gx)}, avg_push(planes(gx.numel(), x.shape, grad.shape), g),
         gx.numel());
  return gx;
}

FloatT adaptive_avg_pool2d(const FloatT& x, std::array<int64_t, 2> out_hw) {
  auto y = empty<float>(x.ctx, Shape{x.shape[0], x.shape[1], out_hw[0], out_hw[1]});
  launch(*x.ctx, kAdaptiveAvgPool2d, {in(x), out(y)}, planes(y.numel(), x.shape, y.shape), y.numel());
  return y;
}

FloatT adaptive_avg_pool2d_backward(const FloatT& x, const FloatT& grad) {
  auto gx = empty<float>(x.ctx, x.shape);
  launch(*x.ctx, kAdaptiveAvgPool2dBackward, {in(grad), out(gx)}, planes(gx.numel(), x.shape, grad.shape),
         gx.numel());
  return gx;
}

}  // namespace ember::vk
