#pragma once
// Backward steps of the discrete Fourier transforms (float_fft; layouts in FftOp), written with backend ops only
// (float_fft, slice, cat, slice_assign, scale) so that they run wherever the forward runs.
//
// L is a real function of the input's real numbers, so a complex input element's gradient is the pair
// (dL/d re, dL/d im). Read that pair, and the output gradient g, as complex numbers: for a complex-linear map
// y = A x, dL = Re(g^H A dx) = Re((A^H g)^H dx), so the input gradient is A^H g. With F the DFT matrix
// (fft(x) = F x, ifft(x) = conj(F) x / n) and m = n/2 + 1:
//  * Fft:   A = F,           A^H g = conj(F) g = n * ifft(g)
//  * Ifft:  A = conj(F) / n, A^H g = F g / n   = fft(g) / n
//  * Rfft:  A = the first m rows of F acting on a real x, so only the real part of A^H g counts:
//           dL/dx = Re(conj(F) pad(g)) = n * Re(ifft(g zero-padded to n bins))
//  * Irfft: y_j = (1/n) [Re z_0 + 2 sum_{0<k<n/2} Re(z_k e^{2 pi i jk/n}) + (even n) Re z_{n/2} (-1)^j], hence
//           dL/d re z_k = (c_k/n) sum_j g_j cos(2 pi jk/n), dL/d im z_k = -(c_k/n) sum_j g_j sin(2 pi jk/n), i.e.
//           (c_k/n) rfft(g)_k with c_k = 2, except c = 1 at bin 0 and (even n) bin n/2, whose imaginary parts
//           irfft ignores and which therefore get a zero imaginary gradient.
#include <vector>

#include "engine/autodiff/grad_ops.hpp"
#include "engine/tensor/error.hpp"

namespace ember::autodiff {

namespace fft_detail {

// Full ranges over every dim of `s`, for slice / slice_assign to narrow.
inline std::vector<Range> whole(const Shape& s) {
  std::vector<Range> r;
  for (auto d : s.dims) r.push_back({0, d});
  return r;
}

// Rfft: g [..., m, 2] -> dL/dx [..., n].
template <class B>
typename B::FloatPrimitive rfft_backward(int64_t n, const typename B::FloatPrimitive& g) {
  using H = G<B>;
  const Shape gs = H::shape(g);
  const std::size_t signal = gs.rank() - 2;
  typename B::FloatPrimitive padded = g;
  if (const int64_t missing = n - gs[signal]; missing > 0) {  // the bins above n/2 were never output
    Shape zs = gs;
    zs[signal] = missing;
    padded = B::template cat<Float>({g, H::zeros(zs, g)}, signal);
  }
  const auto spectrum = B::float_fft(padded, FftOp::Ifft, n);  // [..., n, 2]
  auto re = whole(H::shape(spectrum));
  re.back() = {0, 1};
  Shape out = gs;
  out.dims.pop_back();
  out[signal] = n;
  return H::scale(B::template reshape<Float>(B::template slice<Float>(spectrum, re), out), static_cast<double>(n));
}

// Irfft: g [..., n] -> dL/dz [..., m, 2].
template <class B>
typename B::FloatPrimitive irfft_backward(int64_t n, const typename B::FloatPrimitive& g) {
  using H = G<B>;
  const auto spectrum = B::float_fft(g, FftOp::Rfft, n);  // [..., m, 2]
  auto grad = H::scale(spectrum, 2.0 / static_cast<double>(n));
  const Shape ss = H::shape(spectrum);
  const std::size_t signal = ss.rank() - 2;
  // Bins that are their own mirror image: counted once, and real.
  std::vector<int64_t> self_mirrored{0};
  if (n % 2 == 0) self_mirrored.push_back(n / 2);
  for (int64_t k : self_mirrored) {
    auto re = whole(ss);
    re[signal] = {k, k + 1};
    re.back() = {0, 1};
    const auto real = H::scale(B::template slice<Float>(spectrum, re), 1.0 / static_cast<double>(n));
    auto bin = whole(ss);
    bin[signal] = {k, k + 1};
    grad = B::template slice_assign<Float>(grad, bin, B::template cat<Float>({real, H::zeros_like(real)}, ss.rank() - 1));
  }
  return grad;
}

}  // namespace fft_detail

// g: the output's gradient; n: the signal length passed to the forward float_fft.
template <class B>
typename B::FloatPrimitive fft_backward(FftOp op, int64_t n, const typename B::FloatPrimitive& g) {
  using H = G<B>;
  const double dn = static_cast<double>(n);
  switch (op) {
    case FftOp::Fft: return H::scale(B::float_fft(g, FftOp::Ifft, n), dn);
    case FftOp::Ifft: return H::scale(B::float_fft(g, FftOp::Fft, n), 1.0 / dn);
    case FftOp::Rfft: return fft_detail::rfft_backward<B>(n, g);
    case FftOp::Irfft: return fft_detail::irfft_backward<B>(n, g);
  }
  throw ArgumentError("autodiff: unknown fft op");
}

}  // namespace ember::autodiff
