// RoiAlign (opsets 10..17, mode avg) (h-onnx-nn).
//
// The regions are small integer-like inputs of a detector (a few boxes), read to the host like Resize's sizes; the
// image is not. Each output bin averages bilinear samples of the image: the sample positions and their four tap
// weights are computed on the host (ONNX's reference algorithm), then applied on the device as one index_select of
// every tap over the flattened image and a weighted sum, so the gradient reaches X.
#include <fmt/format.h>

#include <cmath>

#include "onnx/ops/nn_common.hpp"

namespace ember::onnx_import::nn_ops {
namespace {

Outputs roi_align(OpContext& ctx) {
  const DynTensor& x = float_input(ctx, 0);
  const std::vector<int64_t> xd = dims_of(x);
  if (xd.size() != 4) ctx.fail(fmt::format("X must be [N, C, H, W], got rank {}", xd.size()));
  const DynTensor& rois_t = float_input(ctx, 1);
  const std::vector<int64_t> rd = dims_of(rois_t);
  if (rd.size() != 2 || rd[1] != 4) ctx.fail("rois must be [num_rois, 4]");
  const int64_t num = rd[0];
  if (num > (int64_t{1} << 16)) ctx.fail(fmt::format("{} rois is too many", num));
  const std::vector<double> rois = capi::to_data(rois_t).to_vec<double>();
  const std::vector<int64_t> batch = ctx.ints(2);
  if (static_cast<int64_t>(batch.size()) != num) ctx.fail("batch_indices needs one value per roi");
  if (ctx.node.attr_string("mode", "avg") != "avg") ctx.fail("only mode 'avg' is supported");
  const int64_t ph = ctx.node.attr_int("output_height", 1), pw = ctx.node.attr_int("output_width", 1);
  const int64_t ratio = ctx.node.attr_int("sampling_ratio", 0);
  const double scale = ctx.node.attr_float("spatial_scale", 1.0);
  const bool half_pixel =
      ctx.opset >= 16 && ctx.node.attr_string("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  if (ph < 1 || pw < 1 || ph > 4096 || pw > 4096 || ratio < 0 || ratio > 64)
    ctx.fail("output_height / output_width must be in 1..4096 and sampling_ratio in 0..64");
  const int64_t n = xd[0], c = xd[1], h = xd[2], w = xd[3];

  // Per output bin (roi, ph, pw): taps (flat index into N * H * W, weight / count); bins padded to the same count.
  std::vector<std::vector<std::pair<int64_t, double>>> bins(static_cast<std::size_t>(num * ph * pw));
  std::size_t most = 1;
  for (int64_t r = 0; r < num; ++r) {
    if (batch[r] < 0 || batch[r] >= n) ctx.fail(fmt::format("batch index {} is outside 0..{}", batch[r], n - 1));
    const double off = half_pixel ? 0.5 : 0.0;
    const double x1 = rois[r * 4] * scale - off, y1 = rois[r * 4 + 1] * scale - off;
    double rw = rois[r * 4 + 2] * scale - off - x1, rh = rois[r * 4 + 3] * scale - off - y1;
    if (!half_pixel) {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    if (!std::isfinite(rw) || !std::isfinite(rh) || std::abs(rw) > 1e7 || std::abs(rh) > 1e7)
      ctx.fail("a roi is not finite or too large");
    const double bh = rh / static_cast<double>(ph), bw = rw / static_cast<double>(pw);
    const int64_t gh = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / static_cast<double>(ph)));
    const int64_t gw = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / static_cast<double>(pw)));
    if (gh > 64 || gw > 64) ctx.fail("a roi needs more than 64 samples per bin side");
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    for (int64_t py = 0; py < ph; ++py)
      for (int64_t px = 0; px < pw; ++px) {
        auto& taps = bins[(r * ph + py) * pw + px];
        for (int64_t iy = 0; iy < gh; ++iy)
          for (int64_t ix = 0; ix < gw; ++ix) {
            double yy = y1 + py * bh + (iy + 0.5) * bh / static_cast<double>(gh);
            double xx = x1 + px * bw + (ix + 0.5) * bw / static_cast<double>(gw);
            if (yy < -1.0 || yy > static_cast<double>(h) || xx < -1.0 || xx > static_cast<double>(w)) continue;
            yy = std::max(yy, 0.0);
            xx = std::max(xx, 0.0);
            int64_t y0 = static_cast<int64_t>(yy), x0 = static_cast<int64_t>(xx), y_1 = y0 + 1, x_1 = x0 + 1;
            if (y0 >= h - 1) y0 = y_1 = h - 1, yy = static_cast<double>(y0);
            if (x0 >= w - 1) x0 = x_1 = w - 1, xx = static_cast<double>(x0);
            const double ly = yy - static_cast<double>(y0), lx = xx - static_cast<double>(x0);
            const int64_t base = batch[r] * h * w;
            taps.push_back({base + y0 * w + x0, (1 - ly) * (1 - lx) / count});
            taps.push_back({base + y0 * w + x_1, (1 - ly) * lx / count});
            taps.push_back({base + y_1 * w + x0, ly * (1 - lx) / count});
            taps.push_back({base + y_1 * w + x_1, ly * lx / count});
          }
        most = std::max(most, taps.size());
      }
  }
  const int64_t k = static_cast<int64_t>(most), nbins = num * ph * pw;
  if (nbins * k > (int64_t{1} << 26)) ctx.fail("the rois need too many samples");
  std::vector<int64_t> idx(static_cast<std::size_t>(nbins * k), 0);
  std::vector<double> wt(idx.size(), 0.0);
  for (int64_t b = 0; b < nbins; ++b)
    for (std::size_t t = 0; t < bins[b].size(); ++t) {
      idx[b * k + t] = bins[b][t].first;
      wt[b * k + t] = bins[b][t].second;
    }
  // X as [C, N * H * W]: every tap of every bin in one index_select, weighted, summed per bin.
  const DynTensor flat = capi::reshape(capi::permute(x, {1, 0, 2, 3}), {c, n * h * w});
  const DynTensor taps = capi::index_select(
      flat, 1, capi::from_data(capi::device(x), TensorData::from_vec<int64_t>(idx, Shape{nbins * k})));
  const DynTensor weights =
      capi::from_data(capi::device(x), TensorData::from_vec<double>(wt, Shape{1, nbins * k}).convert(capi::dtype(x)));
  const DynTensor sums = capi::reduce(capi::reshape(capi::binary(taps, weights, BinaryOp::Mul), {c, nbins, k}),
                                      ReduceOp::Sum, 2, false);
  return {capi::permute(capi::reshape(sums, {c, num, ph, pw}), {1, 0, 2, 3})};
}

}  // namespace

void register_roi_align(OpRegistry& r) { r.add("RoiAlign", roi_align, 10); }

}  // namespace ember::onnx_import::nn_ops
