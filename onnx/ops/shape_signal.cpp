// ONNX's MelWeightMatrix (opset 17; h-onnx-shape): triangular mel filters made on the host from the scalars.
// (DFT / STFT and the window generators are h-onnx-math's.)
#include <cmath>

#include "onnx/ops/shape_util.hpp"

namespace ember::onnx_import {
namespace {

using namespace shape_detail;

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters between mel-spaced edges, computed on the
// host from the scalars (the arithmetic of ONNX's reference function, edges floored to whole bins).
Outputs mel_weight_matrix_op(OpContext& ctx) {
  const int64_t bins = ctx.ints(0).at(0), dft_length = ctx.ints(1).at(0), rate = ctx.ints(2).at(0);
  const double lo = host_scalar(ctx, 3), hi = host_scalar(ctx, 4);
  if (bins <= 0 || bins > 4096 || dft_length <= 0 || dft_length > (int64_t{1} << 20) || rate <= 0 || !(lo >= 0) ||
      !(hi >= lo))
    ctx.fail("num_mel_bins, dft_length and sample_rate must be positive and 0 <= lower_edge <= upper_edge");
  const DType dtype = onnx_elem_dtype(ctx, ctx.node.attr_int("output_datatype", 1));
  const int64_t spectrum = dft_length / 2 + 1;
  const auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double lo_mel = mel(lo), step = (mel(hi) - lo_mel) / double(bins + 2);
  std::vector<int64_t> edge(static_cast<std::size_t>(bins + 2));
  for (std::size_t i = 0; i < edge.size(); ++i) {
    const double hz = 700.0 * (std::pow(10.0, (double(i) * step + lo_mel) / 2595.0) - 1.0);
    edge[i] = static_cast<int64_t>(std::floor(double(dft_length + 1) * hz / double(rate)));
  }
  std::vector<double> w(static_cast<std::size_t>(spectrum * bins), 0.0);
  const auto set = [&](int64_t j, int64_t i, double v) {
    if (j >= 0 && j < spectrum) w[static_cast<std::size_t>(j * bins + i)] = v;
  };
  for (int64_t i = 0; i < bins; ++i) {
    const int64_t l = edge[static_cast<std::size_t>(i)], c = edge[static_cast<std::size_t>(i + 1)],
                  h = edge[static_cast<std::size_t>(i + 2)];
    if (c == l)
      set(c, i, 1.0);
    else
      for (int64_t j = l; j <= c; ++j) set(j, i, double(j - l) / double(c - l));
    for (int64_t j = c; j < h; ++j) set(j, i, double(h - j) / double(h - c));
  }
  return {upload(ctx.device, TensorData::from_vec<double>(w, Shape{spectrum, bins}).convert(dtype))};
}

}  // namespace

void register_shape_signal_ops(OpRegistry& r) { r.add("MelWeightMatrix", mel_weight_matrix_op, 17); }

}  // namespace ember::onnx_import
