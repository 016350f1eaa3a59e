// Finite-difference gradient checks (f64) for fft, ifft, rfft and irfft, with complex values as (re, im) pairs:
// even, odd and prime lengths, batches, irfft's even and odd output lengths (whose bin 0 and bin n/2 imaginary
// parts are ignored by the forward and so must get exactly zero gradient), and chains through nonlinear ops.
#include <gtest/gtest.h>

#include "tests/grad/grad_check.hpp"

namespace ember::gradcheck {
namespace fft_grads {

TEST(GradCheckFft, FftEvenOddAndPrimeLengths) {
  for (int64_t n : {1, 2, 5, 8, 13}) {
    EXPECT_TRUE(check_grad([](const T<2>& x) { return fft(x); }, uniform<2>({n, 2}, -1, 1, 100 + n))) << "n = " << n;
  }
}

TEST(GradCheckFft, FftBatched) {
  EXPECT_TRUE(check_grad([](const T<3>& x) { return fft(x); }, uniform<3>({3, 6, 2}, -1, 1, 1)));
  EXPECT_TRUE(check_grad([](const T<4>& x) { return fft(x); }, uniform<4>({2, 2, 7, 2}, -1, 1, 2)));
}

TEST(GradCheckFft, IfftEvenOddAndPrimeLengths) {
  for (int64_t n : {1, 2, 5, 8, 13}) {
    EXPECT_TRUE(check_grad([](const T<2>& x) { return ifft(x); }, uniform<2>({n, 2}, -1, 1, 200 + n))) << "n = " << n;
  }
  EXPECT_TRUE(check_grad([](const T<3>& x) { return ifft(x); }, uniform<3>({2, 9, 2}, -1, 1, 3)));
}

TEST(GradCheckFft, RfftEvenOddAndPrimeLengths) {
  for (int64_t n : {1, 2, 3, 6, 8, 13}) {
    EXPECT_TRUE(check_grad([](const T<1>& x) { return rfft(x); }, uniform<1>({n}, -1, 1, 300 + n))) << "n = " << n;
  }
  EXPECT_TRUE(check_grad([](const T<2>& x) { return rfft(x); }, uniform<2>({3, 10}, -1, 1, 4)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return rfft(x); }, uniform<3>({2, 2, 7}, -1, 1, 5)));
}

TEST(GradCheckFft, IrfftEvenAndOddOutputLengths) {
  // n and the m = n/2 + 1 bins it consumes; 13 is prime.
  for (int64_t n : {1, 2, 3, 4, 7, 8, 13, 16}) {
    const int64_t m = n / 2 + 1;
    EXPECT_TRUE(check_grad([n](const T<2>& z) { return irfft(z, n); }, uniform<2>({m, 2}, -1, 1, 400 + n)))
        << "n = " << n;
  }
  EXPECT_TRUE(check_grad([](const T<3>& z) { return irfft(z, 9); }, uniform<3>({3, 5, 2}, -1, 1, 6)));
  EXPECT_TRUE(check_grad([](const T<3>& z) { return irfft(z); }, uniform<3>({2, 5, 2}, -1, 1, 7)));  // n = 8
}

// The forward ignores the imaginary parts of bin 0 and (even n) bin n/2, so their gradient is zero exactly,
// not merely small.
TEST(GradCheckFft, IrfftIgnoredImaginaryPartsGetZeroGradient) {
  for (int64_t n : {8, 9}) {
    const auto z = uniform<2>({n / 2 + 1, 2}, -1, 1, 500 + n).require_grad();
    const auto y = irfft(z, n);
    const auto w = uniform<1>({n}, 0.5, 1.5, 600 + n);
    const auto grads = y.mul(w).sum().backward();
    const auto g = detail::vals(z.grad(grads)->into_data());
    EXPECT_EQ(g[1], 0.0) << "bin 0, n = " << n;
    if (n % 2 == 0) EXPECT_EQ(g[2 * (n / 2) + 1], 0.0) << "bin n/2, n = " << n;
    else EXPECT_NE(g[2 * (n / 2) + 1], 0.0) << "the last bin of an odd length is an ordinary one";
  }
}

// Backward through an empty batch gives empty gradients of the input's shape.
TEST(GradCheckFft, EmptyBatchBackward) {
  const auto x = T<3>::zeros({0, 5, 2}).require_grad();
  const auto r = T<2>::zeros({0, 7}).require_grad();
  const auto loss = fft(x).sum().add(ifft(x).sum()).add(irfft(x, 9).sum()).add(rfft(r).sum());
  const auto grads = loss.backward();
  ASSERT_TRUE(x.grad(grads).has_value());
  EXPECT_EQ(x.grad(grads)->shape(), (Shape{0, 5, 2}));
  ASSERT_TRUE(r.grad(grads).has_value());
  EXPECT_EQ(r.grad(grads)->shape(), (Shape{0, 7}));
}

// Transforms inside larger graphs: a power spectrum, a spectral filter, and a complex round trip.
TEST(GradCheckFft, Chains) {
  EXPECT_TRUE(check_grad(
      [](const T<2>& x) {
        const auto s = rfft(x);
        return s.mul(s).sum_dim(2);  // |X_k|^2
      },
      uniform<2>({2, 9}, -1, 1, 8)));
  EXPECT_TRUE(check_grad([](const T<2>& x, const T<3>& filter) { return irfft(rfft(x).mul(filter), 12).tanh(); },
                         uniform<2>({2, 12}, -1, 1, 9), uniform<3>({1, 7, 2}, -1, 1, 10)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return ifft(fft(x).sin()); }, uniform<3>({2, 5, 2}, -1, 1, 11)));
}

}  // namespace fft_grads
}  // namespace ember::gradcheck
