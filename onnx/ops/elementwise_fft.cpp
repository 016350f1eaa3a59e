// ONNX's Fourier operators of opset 17 (h-onnx-math): DFT and STFT on the runtime's fft (complex values are a
// trailing dim of 2 in both ONNX and Ember), so they run on every backend and differentiate.
#include "onnx/ops/math_util.hpp"

namespace ember::onnx_import::math {
namespace {

// x [..., 1] (real) or [..., 2] (complex) as complex [..., 2]: a zero imaginary part is appended to real input.
DynTensor as_complex(const OpContext& ctx, const DynTensor& x) {
  const Shape s = capi::shape(x);
  if (s.rank() < 2 || (s[s.rank() - 1] != 1 && s[s.rank() - 1] != 2))
    ctx.fail(fmt::format("the signal must end in a dim of 1 (real) or 2 (complex), got {}", s.to_string()));
  if (s[s.rank() - 1] == 2) return x;
  const DynTensor zeros = capi::full(capi::device(x), capi::dtype(x), s, 0.0);
  return capi::cat({&x, &zeros}, static_cast<int64_t>(s.rank()) - 1);
}

// The first n / 2 + 1 bins along `dim` (the others mirror them for a real signal).
DynTensor one_sided(const DynTensor& y, int64_t dim, int64_t n) {
  std::vector<checks::SliceArg> r(static_cast<std::size_t>(dim) + 1, checks::SliceArg{0, std::nullopt});
  r.back() = checks::SliceArg{0, n / 2 + 1};
  return capi::slice(y, r);
}

Outs dft(OpContext& ctx) {
  const DynTensor x = as_complex(ctx, ctx.input(0));
  const std::size_t rank = capi::shape(x).rank();
  const int64_t axis = norm_axis(ctx, ctx.node.attr_int("axis", 1), rank);
  if (axis == static_cast<int64_t>(rank) - 1) ctx.fail("axis must not be the last (complex) dim");
  int64_t n = capi::shape(x)[static_cast<std::size_t>(axis)];
  if (ctx.has_input(1)) {
    const std::vector<int64_t> len = ctx.ints(1);
    if (len.size() != 1 || len[0] < 1) ctx.fail("dft_length must be one positive value");
    n = len[0];
  }
  const bool inverse = ctx.node.attr_int("inverse", 0) != 0;
  const DynTensor y = capi::fft(x, inverse ? FftOp::Ifft : FftOp::Fft, n, axis, capi::FftNorm::Backward);
  return one(ctx.node.attr_int("onesided", 0) != 0 ? one_sided(y, axis, n) : y);
}

// STFT: frames of frame_length every frame_step samples of signal [batch, length, 1 | 2], each times the window
// (when given), transformed: [batch, frames, bins, 2], bins = frame_length / 2 + 1 when onesided (the default).
Outs stft(OpContext& ctx) {
  const DynTensor x = as_complex(ctx, ctx.input(0));
  const Shape s = capi::shape(x);
  if (s.rank() != 3) ctx.fail(fmt::format("signal must be [batch, length, 1 | 2], got {}", s.to_string()));
  const std::vector<int64_t> step = ctx.ints(1);
  if (step.size() != 1 || step[0] < 1) ctx.fail("frame_step must be one positive value");
  int64_t length = 0;
  if (ctx.has_input(3)) {
    const std::vector<int64_t> l = ctx.ints(3);
    if (l.size() != 1) ctx.fail("frame_length must be one value");
    length = l[0];
  }
  if (ctx.has_input(2)) {
    const int64_t wl = capi::shape(ctx.input(2)).num_elements();
    if (length != 0 && length != wl) ctx.fail("frame_length differs from the window's length");
    length = wl;
  }
  if (length < 1 || length > s[1]) ctx.fail(fmt::format("frame length {} does not fit the signal {}", length, s[1]));
  const int64_t frames = (s[1] - length) / step[0] + 1;
  if (frames > 4096) ctx.fail(fmt::format("{} frames is above the 4096 this composition unrolls", frames));
  std::vector<DynTensor> parts;
  for (int64_t f = 0; f < frames; ++f) {
    const int64_t at = f * step[0];
    const DynTensor frame =
        capi::slice(x, {checks::SliceArg{0, std::nullopt}, checks::SliceArg{at, at + length}});  // [b, L, 2]
    parts.push_back(capi::reshape(frame, {s[0], 1, length, 2}));
  }
  std::vector<const DynTensor*> ptrs;
  for (const DynTensor& p : parts) ptrs.push_back(&p);
  DynTensor y = capi::cat(ptrs, 1);  // [b, frames, L, 2]
  if (ctx.has_input(2)) y = capi::binary(y, capi::reshape(ctx.input(2), {1, 1, length, 1}), BinaryOp::Mul);
  y = capi::fft(y, FftOp::Fft, length, 2, capi::FftNorm::Backward);
  return one(ctx.node.attr_int("onesided", 1) != 0 ? one_sided(y, 2, length) : y);
}

}  // namespace

void register_fft_ops(OpRegistry& r) {
  r.add("DFT", dft, 17);
  r.add("STFT", stft, 17);
}

}  // namespace ember::onnx_import::math
