#pragma once
// The geometry of 2-D pooling over NCHW input (max, average and adaptive average): sizes, options, the output's
// spatial size, and the windows an output element reads, shared by every backend's pooling kernels (on CUDA also
// inside device code) and by the tensor layer's shape checks.
#include <array>
#include <cstdint>

#include "engine/backend/host_device.hpp"
#include "engine/backend/ops.hpp"
#include "engine/backend/sliding_window.hpp"
#include "engine/tensor/shape.hpp"

namespace ember {

struct Pool2dGeometry {
  int64_t n, c, h, w;   // input
  int64_t ho, wo;       // output spatial size
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool count_include_pad;
  EMBER_HOST_DEVICE int64_t planes() const { return n * c; }  // independent (n, c) planes
  EMBER_HOST_DEVICE int64_t in_plane() const { return h * w; }
  EMBER_HOST_DEVICE int64_t out_plane() const { return ho * wo; }
  Shape out_shape() const { return Shape{n, c, ho, wo}; }
};

// The output size of pooling x ([N, C, H, W]) with options o. Average pooling has dilation 1 (the tensor layer
// refuses any other), so the same rule serves both.
inline std::array<int64_t, 2> pool2d_out_hw(const Shape& x, const Pool2dOptions& o) {
  return {window_out_size(x[2], o.kernel[0], o.stride[0], o.padding[0], o.dilation[0]),
          window_out_size(x[3], o.kernel[1], o.stride[1], o.padding[1], o.dilation[1])};
}

// Geometry for an output of ho x wo: a backward pass takes it from the gradient's shape, adaptive pooling from the
// requested size (its windows come from adaptive_start/adaptive_end, not from o).
inline Pool2dGeometry pool2d_geometry(const Shape& x, const Pool2dOptions& o, int64_t ho, int64_t wo) {
  return {x[0],         x[1],         x[2],         x[3],          ho,           wo,           o.kernel[0],
          o.kernel[1],  o.stride[0],  o.stride[1],  o.padding[0],  o.padding[1], o.dilation[0], o.dilation[1],
          o.count_include_pad};
}
inline Pool2dGeometry pool2d_geometry(const Shape& x, const Pool2dOptions& o) {
  const auto hw = pool2d_out_hw(x, o);
  return pool2d_geometry(x, o, hw[0], hw[1]);
}

// PyTorch's average window for output (oh, ow), clipped to the image: [h0, h1) x [w0, w1). The divisor counts
// padding (but not overhang past it) when count_include_pad, else only the in-image part.
struct AvgPoolWindow {
  int64_t h0, h1, w0, w1, divisor;
};
EMBER_HOST_DEVICE inline AvgPoolWindow avg_pool_window(const Pool2dGeometry& g, int64_t oh, int64_t ow) {
  int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
  int64_t h1 = h0 + g.kh < g.h + g.ph ? h0 + g.kh : g.h + g.ph;
  int64_t w1 = w0 + g.kw < g.w + g.pw ? w0 + g.kw : g.w + g.pw;
  const int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = h0 > 0 ? h0 : 0, w0 = w0 > 0 ? w0 : 0;
  h1 = h1 < g.h ? h1 : g.h, w1 = w1 < g.w ? w1 : g.w;
  return {h0, h1, w0, w1, g.count_include_pad ? padded : (h1 - h0) * (w1 - w0)};
}

// Adaptive pooling's window for output i of `out` over an input of `in`: [floor(i*in/out), ceil((i+1)*in/out)).
EMBER_HOST_DEVICE constexpr int64_t adaptive_start(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
EMBER_HOST_DEVICE constexpr int64_t adaptive_end(int64_t i, int64_t in, int64_t out) {
  return ((i + 1) * in + out - 1) / out;
}

}  // namespace ember
