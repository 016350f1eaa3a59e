// 2-D pooling over contiguous NCHW input, matching backends/cpu/pool.cpp (PyTorch semantics, ceil_mode false;
// the tensor layer validates the options). Forward passes run one invocation per output element; backward passes
// are in gather form (one invocation per input pixel sums the outputs that reach it, in the CPU's order), so they
// need no atomics and are deterministic. max_pool2d_backward only gets the argmax indices, not the window
// geometry, so it first derives from them which output rows / columns can reach each input row / column.
#include "backends/vulkan/launch.hpp"

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kMaxPool2d)
#include "max_pool2d.spv.inc"
;
EMBER_SHADER_DEF(kMaxPool2d)
EMBER_SHADER_WORDS(kMaxPool2dBackwardBounds)
#include "max_pool2d_backward_bounds.spv.inc"
;
EMBER_SHADER_DEF(kMaxPool2dBackwardBounds)
EMBER_SHADER_WORDS(kMaxPool2dBackwardRanges)
#include "max_pool2d_backward_ranges.spv.inc"
;
EMBER_SHADER_DEF(kMaxPool2dBackwardRanges)
EMBER_SHADER_WORDS(kMaxPool2dBackward)
#include "max_pool2d_backward.spv.inc"
;
EMBER_SHADER_DEF(kMaxPool2dBackward)
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

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

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
AvgPoolPush avg_push(const Planes& s, const Pool2dOptions& o) {
  return {s,
          static_cast<int32_t>(o.kernel[0]),
          static_cast<int32_t>(o.kernel[1]),
          static_cast<int32_t>(o.stride[0]),
          static_cast<int32_t>(o.stride[1]),
          static_cast<int32_t>(o.padding[0]),
          static_cast<int32_t>(o.padding[1]),
          o.count_include_pad ? 1u : 0u};
}

Shape avg_out_shape(const Shape& x, const Pool2dOptions& o) {
  return Shape{x[0], x[1], out_size(x[2], o.kernel[0], o.stride[0], o.padding[0], 1),
               out_size(x[3], o.kernel[1], o.stride[1], o.padding[1], 1)};
}

}  // namespace

MaxPoolResult<FloatT, Index> max_pool2d(const FloatT& x, const Pool2dOptions& o) {
  const Shape shape{x.shape[0], x.shape[1], out_size(x.shape[2], o.kernel[0], o.stride[0], o.padding[0], o.dilation[0]),
                    out_size(x.shape[3], o.kernel[1], o.stride[1], o.padding[1], o.dilation[1])};
  auto y = empty<float>(x.ctx, shape);
  auto indices = empty<int64_t>(x.ctx, shape);
  const MaxPoolPush p{planes(y.numel(), x.shape, shape),
                      static_cast<int32_t>(o.kernel[0]),
                      static_cast<int32_t>(o.kernel[1]),
                      static_cast<int32_t>(o.stride[0]),
                      static_cast<int32_t>(o.stride[1]),
                      static_cast<int32_t>(o.padding[0]),
                      static_cast<int32_t>(o.padding[1]),
                      static_cast<int32_t>(o.dilation[0]),
                      static_cast<int32_t>(o.dilation[1])};
  launch(*x.ctx, kMaxPool2d, {in(x), out(y), out(indices)}, p, y.numel());
  return {std::move(y), std::move(indices)};
}

FloatT max_pool2d_backward(const FloatT& x, const FloatT& grad, const Index& indices) {
  if (grad.numel() == 0) return full<float>(x.ctx, x.shape, 0.0);
  Context& ctx = *x.ctx;
  const int64_t lines = grad.shape[2] + grad.shape[3], items = x.shape[2] + x.shape[3];
  // bounds / ranges hold (first, last) int32 pairs, one per int64 element.
  auto bounds = empty<int64_t>(x.ctx, Shape{lines});
  auto ranges = empty<int64_t>(x.ctx, Shape{items});
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
  auto y = empty<float>(x.ctx, avg_out_shape(x.shape, o));
  launch(*x.ctx, kAvgPool2d, {in(x), out(y)}, avg_push(planes(y.numel(), x.shape, y.shape), o), y.numel());
  return y;
}

FloatT avg_pool2d_backward(const FloatT& x, const FloatT& grad, const Pool2dOptions& o) {
  auto gx = empty<float>(x.ctx, x.shape);
  launch(*x.ctx, kAvgPool2dBackward, {in(grad), out(gx)}, avg_push(planes(gx.numel(), x.shape, grad.shape), o),
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
