#pragma once
// Discrete Fourier transforms over the last signal dim, with NumPy's semantics and default ("backward") norm:
// the forward transforms are unscaled, the inverse ones scaled by 1/n.
//
// Complex values are Float tensors whose last dim is 2 (re, im), so a complex signal of length n is [..., n, 2]:
//   fft(x), ifft(x)  [..., n, 2] -> [..., n, 2]
//   rfft(x)          real [..., n] -> [..., n/2+1, 2]       (the non-negative frequencies of a real signal)
//   irfft(x, n)      [..., n/2+1, 2] -> real [..., n]       (n defaults to 2*(m-1) for m input bins; the
//                                                            imaginary parts of bin 0 and, for even n, bin n/2
//                                                            are ignored, as in NumPy)
// Leading dims are a batch of independent signals. All four are differentiable under Autodiff<B>.
#include <string>

#include "engine/tensor/tensor.hpp"

namespace ember {

namespace checks {

// A complex tensor [..., n, 2] with n >= 1; returns n.
inline int64_t complex_signal(const char* op, const Shape& s) {
  if (s.rank() < 2 || s[s.rank() - 1] != 2)
    throw ShapeError(std::string(op) + ": expected a complex tensor [..., n, 2] (last dim 2 holds re, im), got " +
                     s.to_string());
  const int64_t n = s[s.rank() - 2];
  if (n < 1) throw ShapeError(std::string(op) + ": the signal dim is empty in " + s.to_string());
  return n;
}

// irfft's output length: the given n, or 2*(m-1) when n is -1; m input bins must equal n/2+1.
inline int64_t irfft_length(const Shape& s, int64_t n) {
  const int64_t m = complex_signal("irfft", s);
  if (n == -1) n = 2 * (m - 1);
  if (n < 1)
    throw ArgumentError("irfft: output length n must be >= 1, got " + std::to_string(n) + " for input " +
                        s.to_string() + (m == 1 ? " (pass n = 1 for a one-bin spectrum)" : ""));
  if (m != n / 2 + 1)
    throw ShapeError("irfft: an output of length n = " + std::to_string(n) + " needs n/2+1 = " +
                     std::to_string(n / 2 + 1) + " bins, got " + std::to_string(m) + " in " + s.to_string());
  return n;
}

}  // namespace checks

template <Backend B, std::size_t D>
Tensor<B, D> fft(const Tensor<B, D>& x) {
  static_assert(D >= 2, "fft: a complex tensor has rank >= 2 ([..., n, 2])");
  const int64_t n = checks::complex_signal("fft", x.shape());
  return Tensor<B, D>(B::float_fft(x.primitive(), FftOp::Fft, n));
}

template <Backend B, std::size_t D>
Tensor<B, D> ifft(const Tensor<B, D>& x) {
  static_assert(D >= 2, "ifft: a complex tensor has rank >= 2 ([..., n, 2])");
  const int64_t n = checks::complex_signal("ifft", x.shape());
  return Tensor<B, D>(B::float_fft(x.primitive(), FftOp::Ifft, n));
}

template <Backend B, std::size_t D>
Tensor<B, D + 1> rfft(const Tensor<B, D>& x) {
  const Shape s = x.shape();
  const int64_t n = s[D - 1];
  if (n < 1) throw ShapeError("rfft: the signal (last) dim is empty in " + s.to_string());
  Shape out = s;
  out[D - 1] = n / 2 + 1;
  out.dims.push_back(2);
  check_dims("rfft", out);  // n = 1 doubles the element count
  return Tensor<B, D + 1>(B::float_fft(x.primitive(), FftOp::Rfft, n));
}

// n = -1: 2*(m-1), the even length whose rfft has the input's m bins (pass n for an odd length).
template <Backend B, std::size_t D>
Tensor<B, D - 1> irfft(const Tensor<B, D>& x, int64_t n = -1) {
  static_assert(D >= 2, "irfft: a complex tensor has rank >= 2 ([..., m, 2])");
  const int64_t length = checks::irfft_length(x.shape(), n);
  return Tensor<B, D - 1>(B::float_fft(x.primitive(), FftOp::Irfft, length));
}

}  // namespace ember
