// ONNX's signal operators of opset 17 (h-onnx-shape): DFT and STFT on the runtime's fft (its complex tensors are,
// like ONNX's, float tensors with a trailing dim of 2), framed by index_select and windowed by a multiply, so they
// are differentiable; MelWeightMatrix, made on the host from its scalars. (The window generators HannWindow /
// HammingWindow / BlackmanWindow are h-onnx-math's.)
#include <cmath>

#include "onnx/ops/shape_util.hpp"

namespace ember::onnx_import {
namespace {

using namespace shape_detail;

// x's DFT along `axis` (a dim of x's signal layout, the trailing re/im or real dim excluded) with n points: complex
// [..., 2] in and out, or a real [..., 1] input whose onesided transform has n / 2 + 1 bins.
DynTensor dft(const OpContext& ctx, const DynTensor& x, int64_t axis, int64_t n, bool inverse, bool onesided) {
  std::vector<int64_t> s = capi::shape(x).dims;
  if (s.size() < 2 || (s.back() != 1 && s.back() != 2))
    ctx.fail(fmt::format("input must end in a dim of 1 (real) or 2 (complex), got {}", text(s)));
  const bool real = s.back() == 1;
  if (onesided) {
    if (inverse || !real) ctx.fail("a onesided transform needs a real forward input");
    s.pop_back();
    return capi::fft(capi::reshape(x, s), FftOp::Rfft, n, axis, capi::FftNorm::Backward);
  }
  DynTensor c = x;
  if (real) {  // imaginary parts of zero
    const DynTensor zeros = capi::full(ctx.device, capi::dtype(x), Shape(s), 0.0);
    c = capi::cat({&x, &zeros}, -1);
  }
  return capi::fft(c, inverse ? FftOp::Ifft : FftOp::Fft, n, axis, capi::FftNorm::Backward);
}

Outputs dft_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const int64_t r = rank_of(x);
  const int64_t axis = norm_axis(ctx, ctx.node.attr_int("axis", 1), r - 1);
  const int64_t n = ctx.has_input(1) ? ctx.ints(1).at(0) : capi::shape(x).dims[static_cast<std::size_t>(axis)];
  if (n <= 0) ctx.fail(fmt::format("dft_length {} must be positive", n));
  return {dft(ctx, x, axis, n, ctx.node.attr_int("inverse", 0) != 0, ctx.node.attr_int("onesided", 0) != 0)};
}

// STFT: the signal [batch, length, 1 or 2] cut into frames [batch, frames, frame_length, c] by one index_select,
// multiplied by the window, transformed along the frame.
Outputs stft_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> s = capi::shape(x).dims;
  if (s.size() != 3) ctx.fail(fmt::format("signal must be [batch, length, 1 or 2], got {}", text(s)));
  const int64_t step = ctx.ints(1).at(0);
  int64_t len = ctx.has_input(3) ? ctx.ints(3).at(0) : -1;
  if (ctx.has_input(2)) {
    const int64_t wl = capi::shape(ctx.input(2)).num_elements();
    if (len >= 0 && len != wl) ctx.fail(fmt::format("window of {} for frame_length {}", wl, len));
    len = wl;
  }
  if (len <= 0 || len > s[1] || step <= 0)
    ctx.fail(fmt::format("frame_length {} and frame_step {} for a signal of {}", len, step, s[1]));
  const int64_t frames = (s[1] - len) / step + 1;
  std::vector<int64_t> idx;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < len; ++j) idx.push_back(f * step + j);
  DynTensor y = capi::reshape(capi::index_select(x, 1, index_tensor(ctx, idx)), {s[0], frames, len, s[2]});
  if (ctx.has_input(2)) y = capi::binary(y, capi::reshape(ctx.input(2), {len, 1}), BinaryOp::Mul);
  const bool onesided = ctx.node.attr_int("onesided", 1) != 0 && s[2] == 1;
  return {dft(ctx, y, 2, len, false, onesided)};
}

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters between mel-spaced edges, computed on the
// host from the scalars (the arithmetic of ONNX's reference function, edges floored to whole bins).
Outputs mel_weight_matrix_op(OpContext& ctx) {
  const int64_t bins = ctx.ints(0).at(0), dft_length = ctx.ints(1).at(0), rate = ctx.ints(2).at(0);
  const double lo = host_scalar(ctx, 3), hi = host_scalar(ctx, 4);
  if (bins <= 0 || bins > 4096 || dft_length <= 0 || dft_length > (int64_t{1} << 20) || rate <= 0 || !(lo >= 0) ||
      !(hi >= lo))
    ctx.fail("num_mel_bins, dft_length and sample_rate must be positive and 0 <= lower_edge <= upper_edge");
  const DType dtype = onnx_dtype(ctx, ctx.node.attr_int("output_datatype", 1));
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
  return {capi::from_data(ctx.device, TensorData::from_vec<double>(w, Shape{spectrum, bins}).convert(dtype))};
}

}  // namespace

void register_shape_signal_ops(OpRegistry& r) {
  r.add("DFT", dft_op, 17);
  r.add("STFT", stft_op, 17);
  r.add("MelWeightMatrix", mel_weight_matrix_op, 17);
}

}  // namespace ember::onnx_import
