// ONNX's RoiAlign (h-onnx-shape). (GridSample is h-onnx-nn's / h-onnx-math's.)
#include <cmath>

#include "onnx/ops/shape_util.hpp"

namespace ember::onnx_import {
namespace {

using namespace shape_detail;

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

void register_shape_roi_align_ops(OpRegistry& r) { r.add("RoiAlign", roi_align_op, 10); }

}  // namespace ember::onnx_import
