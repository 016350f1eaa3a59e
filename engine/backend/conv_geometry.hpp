#pragma once
// The geometry of a 2-D convolution (input [N, C, H, W], weight [C_out, C/groups, KH, KW]): sizes, options and the
// output's spatial size, shared by every backend's conv kernels (on CUDA also inside device code).
#include <cstdint>

#include "engine/backend/host_device.hpp"
#include "engine/backend/ops.hpp"
#include "engine/backend/sliding_window.hpp"
#include "engine/tensor/shape.hpp"

namespace ember {

struct Conv2dGeometry {
  int64_t n, c, h, w;               // input
  int64_t cout, groups, cg, cog;    // output channels, groups, input / output channels per group
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t ho, wo;                   // output spatial size
  EMBER_HOST_DEVICE int64_t plane() const { return ho * wo; }
  EMBER_HOST_DEVICE int64_t k() const { return cg * kh * kw; }      // rows of a group's column buffer
  EMBER_HOST_DEVICE int64_t l() const { return n * ho * wo; }       // columns of the whole batch's column buffer
  EMBER_HOST_DEVICE int64_t col_per_image() const { return c * kh * kw * plane(); }
};

inline Conv2dGeometry conv2d_geometry(const Shape& x, const Shape& w, const Conv2dOptions& o) {
  Conv2dGeometry g{};
  g.n = x[0], g.c = x[1], g.h = x[2], g.w = x[3];
  g.cout = w[0], g.groups = o.groups, g.cg = g.c / o.groups, g.cog = g.cout / o.groups;
  g.kh = w[2], g.kw = w[3];
  g.sh = o.stride[0], g.sw = o.stride[1];
  g.ph = o.padding[0], g.pw = o.padding[1];
  g.dh = o.dilation[0], g.dw = o.dilation[1];
  g.ho = window_out_size(g.h, g.kh, g.sh, g.ph, g.dh);
  g.wo = window_out_size(g.w, g.kw, g.sw, g.pw, g.dw);
  return g;
}

}  // namespace ember
