// 2-D convolution as im2col + GEMM (shaders/im2col.comp, gemm.hpp), matching backends/cpu/conv.cpp.
//  * forward: the bias is broadcast into the output first (conv_bias.comp FILL) and the GEMM accumulates onto it;
//    the column buffer is laid out per image ([n][g][K][H_out*W_out]) so one batched GEMM over (image, group)
//    writes NCHW directly, with no transposing copy. A 1x1 / stride 1 / unpadded kernel uses x itself as columns.
//  * backward: grad_weight needs a sum over images, so the columns are laid out per group ([g][K][n, H_out*W_out])
//    and grad is permuted to [g][C_out/g][n, H_out*W_out]: grad_w_g = grad_g @ col_g^T is one GEMM per group with
//    the images in K. grad_col_g = w_g^T @ grad_g reuses the column buffer, and col2im.comp gathers it back into
//    grad_x (each input pixel sums its own taps: no atomics). grad_bias is a per-channel reduction of grad.
// Column buffers cover as many images as fit kColumnBudget; bigger batches run in chunks of images.
#include <algorithm>
#include <optional>

#include "backends/vulkan/gemm.hpp"
#include "backends/vulkan/launch.hpp"
#include "engine/backend/conv_geometry.hpp"

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kIm2col)
#include "im2col.spv.inc"
;
EMBER_SHADER_DEF(kIm2col)
EMBER_SHADER_WORDS(kCol2im)
#include "col2im.spv.inc"
;
EMBER_SHADER_DEF(kCol2im)
EMBER_SHADER_WORDS(kConvBiasFill)
#include "conv_bias_fill.spv.inc"
;
EMBER_SHADER_DEF(kConvBiasFill)
EMBER_SHADER_WORDS(kConvBiasGrad)
#include "conv_bias_grad.spv.inc"
;
EMBER_SHADER_DEF(kConvBiasGrad)

// Column buffer elements per chunk (64 MiB of f32), further capped by what one shader binding can address.
constexpr int64_t kColumnBudget = int64_t{1} << 24;

using Geom = Conv2dGeometry;

// Images per column-buffer chunk (at least one).
int64_t images_per_chunk(const Context& ctx, const Geom& g) {
  const int64_t budget =
      std::min<int64_t>(kColumnBudget, static_cast<int64_t>(ctx.info().max_storage_buffer_range / sizeof(float)));
  return std::clamp<int64_t>(budget / std::max<int64_t>(1, g.col_per_image()), 1, std::max<int64_t>(1, g.n));
}

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

struct Im2colPush {
  uint32_t total, n0, nc, c, h, w, cg, groups, kh, kw, sh, sw;
  int32_t ph, pw;
  uint32_t dh, dw, ho, wo, per_group;
};

void im2col(const FloatT& x, const Geom& g, int64_t n0, int64_t nc, bool per_group, const FloatT& col) {
  const int64_t total = nc * g.col_per_image();
  const Im2colPush p{u32(total), u32(n0), u32(nc), u32(g.c), u32(g.h), u32(g.w), u32(g.cg), u32(g.groups),
                     u32(g.kh), u32(g.kw), u32(g.sh), u32(g.sw), static_cast<int32_t>(g.ph),
                     static_cast<int32_t>(g.pw), u32(g.dh), u32(g.dw), u32(g.ho), u32(g.wo), per_group ? 1u : 0u};
  launch(*x.ctx, kIm2col, {in(x), out(col)}, p, static_cast<uint64_t>(total));
}

struct Col2imPush {
  uint32_t total, n0, nc, c, h, w, cg, kh, kw, sh, sw;
  int32_t ph, pw;
  uint32_t dh, dw, ho, wo;
};

// gx images [n0, n0 + nc) from a per-group gradient column buffer.
void col2im(const FloatT& gcol, const Geom& g, int64_t n0, int64_t nc, const FloatT& gx) {
  const int64_t total = nc * g.c * g.h * g.w;
  const Col2imPush p{u32(total), u32(n0), u32(nc), u32(g.c), u32(g.h), u32(g.w), u32(g.cg), u32(g.kh), u32(g.kw),
                     u32(g.sh), u32(g.sw), static_cast<int32_t>(g.ph), static_cast<int32_t>(g.pw), u32(g.dh),
                     u32(g.dw), u32(g.ho), u32(g.wo)};
  launch(*gx.ctx, kCol2im, {in(gcol), out(gx)}, p, static_cast<uint64_t>(total));
}

struct BiasPush {
  uint32_t n, cout, plane;
};

}  // namespace

FloatT conv2d(const FloatT& x, const FloatT& w, const FloatT* bias, const Conv2dOptions& o) {
  const Geom g = conv2d_geometry(x.shape, w.shape, o);
  auto y = empty<float>(x.ctx, Shape{g.n, g.cout, g.ho, g.wo});
  if (y.numel() == 0) return y;
  Context& ctx = *x.ctx;
  const int64_t plane = g.plane(), k = g.k();
  const BiasPush bp{u32(g.n), u32(g.cout), u32(plane)};
  if (bias) launch(ctx, kConvBiasFill, {in(*bias), out(y)}, bp, static_cast<uint64_t>(y.numel()));

  // A 1x1 kernel with unit stride and no padding reads every pixel once, in place: x already is the per-image
  // column buffer [n][g][C/g][H*W].
  const bool pointwise = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
  const int64_t chunk = pointwise ? g.n : images_per_chunk(ctx, g);
  std::optional<FloatT> col;
  if (!pointwise) col = empty<float>(x.ctx, Shape{chunk * g.col_per_image()});

  for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
    const int64_t nc = std::min(chunk, g.n - n0);
    if (!pointwise) im2col(x, g, n0, nc, false, *col);
    const FloatT& cols = pointwise ? x : *col;
    Gemm mm;
    mm.m = g.cog, mm.n = plane, mm.k = k;
    mm.beta = bias ? 1.0f : 0.0f;
    mm.a = {w.alloc, 0, k, false};
    mm.b = {cols.alloc, pointwise ? n0 * g.col_per_image() : 0, plane, false};
    mm.c = {y.alloc, n0 * g.cout * plane, plane, false};
    // outer: images (w shared), inner: groups.
    mm.batch[0] = {nc, {0, g.col_per_image(), g.cout * plane}};
    mm.batch[1] = {g.groups, {g.cog * k, k * plane, g.cog * plane}};
    gemm(ctx, mm);
  }
  return y;
}

Conv2dGrads<FloatT> conv2d_backward(const FloatT& x, const FloatT& w, const FloatT& grad, bool has_bias,
                                    const Conv2dOptions& o) {
  const Geom g = conv2d_geometry(x.shape, w.shape, o);
  Context& ctx = *x.ctx;
  const int64_t plane = g.plane(), k = g.k(), np = g.n * plane;

  std::optional<FloatT> gb;
  if (has_bias) {
    gb = empty<float>(x.ctx, Shape{g.cout});
    const BiasPush bp{u32(g.n), u32(g.cout), u32(plane)};
    const std::array<uint32_t, 3> groups{u32(std::min<int64_t>(g.cout, 65535)), 1, 1};
    if (g.cout > 0) launch_grid(ctx, kConvBiasGrad, {in(grad), out(*gb)}, bp, groups, {kWorkgroup, 0, 0, 0});
  }
  if (np == 0) {  // no output pixels: nothing flows back
    return {full<float>(x.ctx, x.shape, 0.0), full<float>(x.ctx, w.shape, 0.0), std::move(gb)};
  }

  auto gx = empty<float>(x.ctx, x.shape);
  auto gw = empty<float>(x.ctx, w.shape);
  // grad [n][g][C_out/g][plane] -> [g][C_out/g][n][plane]: each group's rows then span all images contiguously.
  const FloatT gperm =
      g.n == 1 ? grad : permute(reshape(grad, Shape{g.n, g.groups, g.cog, plane}), {1, 2, 0, 3});
  const int64_t chunk = images_per_chunk(ctx, g);
  auto col = empty<float>(x.ctx, Shape{chunk * g.col_per_image()});

  for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
    const int64_t nc = std::min(chunk, g.n - n0), ncp = nc * plane;
    im2col(x, g, n0, nc, true, col);

    // grad_w_g (+)= grad_g[:, chunk] @ col_g^T, accumulating over chunks.
    Gemm dw;
    dw.m = g.cog, dw.n = k, dw.k = ncp;
    dw.beta = n0 == 0 ? 0.0f : 1.0f;
    dw.a = {gperm.alloc, n0 * plane, np, false};
    dw.b = {col.alloc, 0, ncp, true};
    dw.c = {gw.alloc, 0, k, false};
    dw.batch[1] = {g.groups, {g.cog * np, k * ncp, g.cog * k}};
    gemm(ctx, dw);

    // grad_col_g = w_g^T @ grad_g[:, chunk], into the column buffer (the stream orders it after dw's reads).
    Gemm dc;
    dc.m = k, dc.n = ncp, dc.k = g.cog;
    dc.a = {w.alloc, 0, k, true};
    dc.b = {gperm.alloc, n0 * plane, np, false};
    dc.c = {col.alloc, 0, ncp, false};
    dc.batch[1] = {g.groups, {g.cog * k, g.cog * np, k * ncp}};
    gemm(ctx, dc);

    col2im(col, g, n0, nc, gx);
  }
  return {std::move(gx), std::move(gw), std::move(gb)};
}

}  // namespace ember::vk
