// FFT ops (fft, ifft, rfft, irfft) against NumPy references (tests/reference/gen_fft_reference.py writes
// tests/reference/fft_reference.hpp), plus round trips, empty batches, a batch big enough to be split over threads,
// and argument errors.
#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <typeinfo>
#include <vector>

#include "tests/reference/fft_reference.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace fft_cases {

template <class B>
class FftOps : public ::testing::Test {};
TYPED_TEST_SUITE(FftOps, TestBackends, BackendNames);

// Each output sums n rounded products; in f32 the normalized error grows like log(n) * 6e-8.
template <class B>
constexpr double kFftTol = Tol<B>::f64 ? 1e-12 : 1e-5;

std::vector<double> vec(std::span<const double> s) { return {s.begin(), s.end()}; }
Shape shape_of(std::span<const int64_t> s) { return Shape(std::vector<int64_t>(s.begin(), s.end())); }
template <std::size_t D>
std::array<int64_t, D> dims_of(std::span<const int64_t> s) {
  std::array<int64_t, D> a{};
  std::copy(s.begin(), s.end(), a.begin());
  return a;
}

// One reference case at its input's rank D (a compile-time parameter of Tensor). The input requires grad so that
// Autodiff backends run their recording path.
template <class B, std::size_t D>
::testing::AssertionResult run_at_rank(const ref::FftCase& c, bool default_n) {
  const auto x = make<B, D>(vec(c.in), dims_of<D>(c.in_shape)).require_grad();
  const std::string op = c.op;
  const Shape want_shape = shape_of(c.out_shape);
  if (op == "rfft") return matches(rfft(x), want_shape, vec(c.out), kFftTol<B>);
  if constexpr (D >= 2) {
    if (op == "fft") return matches(fft(x), want_shape, vec(c.out), kFftTol<B>);
    if (op == "ifft") return matches(ifft(x), want_shape, vec(c.out), kFftTol<B>);
    if (op == "irfft") return matches(default_n ? irfft(x) : irfft(x, c.n), want_shape, vec(c.out), kFftTol<B>);
  }
  return ::testing::AssertionFailure() << "no runner for " << op << " at rank " << D;
}

template <class B>
::testing::AssertionResult run_case(const ref::FftCase& c, bool default_n = false) {
  switch (c.in_shape.size()) {
    case 1: return run_at_rank<B, 1>(c, default_n);
    case 2: return run_at_rank<B, 2>(c, default_n);
    case 3: return run_at_rank<B, 3>(c, default_n);
    case 4: return run_at_rank<B, 4>(c, default_n);
  }
  return ::testing::AssertionFailure() << "unsupported input rank " << c.in_shape.size();
}

// Runs every reference case of `op`; there must be some.
template <class B>
void check_reference_cases(const std::string& op) {
  int ran = 0;
  for (const auto& c : ref::fft_cases) {
    if (c.op != op) continue;
    EXPECT_TRUE(run_case<B>(c)) << c.name;
    ++ran;
  }
  EXPECT_GT(ran, 8) << op;
}

TYPED_TEST(FftOps, FftMatchesNumpy) { check_reference_cases<TypeParam>("fft"); }
TYPED_TEST(FftOps, IfftMatchesNumpy) { check_reference_cases<TypeParam>("ifft"); }
TYPED_TEST(FftOps, RfftMatchesNumpy) { check_reference_cases<TypeParam>("rfft"); }
// The reference spectra have nonzero imaginary parts in bin 0 and bin n/2, which irfft must ignore.
TYPED_TEST(FftOps, IrfftMatchesNumpy) { check_reference_cases<TypeParam>("irfft"); }

TYPED_TEST(FftOps, IrfftDefaultLengthIsTwiceBinsMinusOne) {
  int ran = 0;
  for (const auto& c : ref::fft_cases) {
    if (std::string(c.op) != "irfft" || c.n % 2 != 0) continue;  // the default length is always even
    EXPECT_TRUE(run_case<TypeParam>(c, /*default_n=*/true)) << c.name;
    ++ran;
  }
  EXPECT_GT(ran, 4);
}

// Closed forms, independent of the references: the spectrum of an impulse is flat, that of a constant is a
// single bin, and a pure tone lands in its own bin.
TYPED_TEST(FftOps, ImpulseConstantAndTone) {
  using B = TypeParam;
  const auto impulse = make<B, 2>({1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {5, 2});
  EXPECT_TRUE(matches(fft(impulse), Shape{5, 2}, {1, 0, 1, 0, 1, 0, 1, 0, 1, 0}, Tol<B>::exact));
  EXPECT_TRUE(matches(ifft(impulse), Shape{5, 2}, {.2, 0, .2, 0, .2, 0, .2, 0, .2, 0}, Tol<B>::exact));
  const auto constant = Tensor<B, 1>::full({6}, 2.0);
  EXPECT_TRUE(matches(rfft(constant), Shape{4, 2}, {12, 0, 0, 0, 0, 0, 0, 0}, Tol<B>::exact));
  // cos(2 pi j / 4) = [1, 0, -1, 0]: bins 1 and 3 of the full spectrum, n/2 = 2 each.
  const auto tone = make<B, 1>({1, 0, -1, 0}, {4});
  EXPECT_TRUE(matches(rfft(tone), Shape{3, 2}, {0, 0, 2, 0, 0, 0}, Tol<B>::exact));
  EXPECT_TRUE(matches(irfft(rfft(tone)), Shape{4}, {1, 0, -1, 0}, Tol<B>::exact));
}

TYPED_TEST(FftOps, ComplexRoundTrips) {
  using B = TypeParam;
  Rng rng(7);
  for (int64_t n : {1, 2, 7, 16, 97, 128}) {
    const auto x = Tensor<B, 3>::random({3, n, 2}, Normal{0.0, 1.0}, rng);
    EXPECT_TRUE(matches(ifft(fft(x)), x.shape(), values(x), kFftTol<B>)) << "ifft(fft(x)), n = " << n;
    EXPECT_TRUE(matches(fft(ifft(x)), x.shape(), values(x), kFftTol<B>)) << "fft(ifft(x)), n = " << n;
  }
}

TYPED_TEST(FftOps, RealRoundTripsForEvenAndOddLengths) {
  using B = TypeParam;
  Rng rng(11);
  for (int64_t n : {1, 2, 3, 8, 9, 13, 97, 128}) {
    const auto x = Tensor<B, 2>::random({2, n}, Normal{0.0, 1.0}, rng);
    const auto spectrum = rfft(x);
    EXPECT_EQ(spectrum.shape(), (Shape{2, n / 2 + 1, 2})) << "n = " << n;
    EXPECT_TRUE(matches(irfft(spectrum, n), x.shape(), values(x), kFftTol<B>)) << "irfft(rfft(x), n), n = " << n;
    if (n % 2 == 0) {  // only an even length is recovered by the default
      EXPECT_TRUE(matches(irfft(spectrum), x.shape(), values(x), kFftTol<B>)) << "irfft(rfft(x)), n = " << n;
    }
  }
}

TYPED_TEST(FftOps, EmptyBatchGivesEmptyOutput) {
  using B = TypeParam;
  EXPECT_TRUE(matches(fft(Tensor<B, 3>::zeros({0, 8, 2})), Shape{0, 8, 2}, {}, 0.0));
  EXPECT_TRUE(matches(ifft(Tensor<B, 4>::zeros({2, 0, 5, 2})), Shape{2, 0, 5, 2}, {}, 0.0));
  EXPECT_TRUE(matches(rfft(Tensor<B, 2>::zeros({0, 6})), Shape{0, 4, 2}, {}, 0.0));
  EXPECT_TRUE(matches(rfft(Tensor<B, 3>::zeros({3, 0, 7})), Shape{3, 0, 4, 2}, {}, 0.0));
  EXPECT_TRUE(matches(irfft(Tensor<B, 3>::zeros({0, 5, 2}), 9), Shape{0, 9}, {}, 0.0));
  EXPECT_TRUE(matches(irfft(Tensor<B, 3>::zeros({0, 5, 2})), Shape{0, 8}, {}, 0.0));
}

// Hundreds of prime-length signals: enough work for the CPU thread pool to split the batch (kissfft's generic
// butterfly for primes keeps scratch state in the plan, so shared plans would race). Each row must equal the
// transform of that row alone.
TYPED_TEST(FftOps, LargeBatchMatchesRowByRow) {
  using B = TypeParam;
  constexpr int64_t rows = 600, n = 97;
  Rng rng(3);
  const auto x = Tensor<B, 3>::random({rows, n, 2}, Normal{0.0, 1.0}, rng);
  const auto y = fft(x);
  const auto spectra = rfft(x.narrow(2, 0, 1).template squeeze<2>(2));
  const auto back = irfft(spectra, n);
  for (int64_t r = 0; r < rows; ++r) {
    const auto row = x.narrow(0, r, 1);
    ASSERT_TRUE(close(values(y.narrow(0, r, 1)), values(fft(row)), Tol<B>::exact)) << "fft row " << r;
    const auto spectrum_row = spectra.narrow(0, r, 1);
    ASSERT_TRUE(close(values(spectrum_row), values(rfft(row.narrow(2, 0, 1).template squeeze<2>(2))), Tol<B>::exact))
        << "rfft row " << r;
    ASSERT_TRUE(close(values(back.narrow(0, r, 1)), values(irfft(spectrum_row, n)), Tol<B>::exact))
        << "irfft row " << r;
  }
}

// f must throw exactly an E whose message holds every string in `parts`.
template <class E, class F>
::testing::AssertionResult raises(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
  } catch (const E& e) {
    const std::string m = e.what();
    for (auto& p : parts)
      if (m.find(p) == std::string::npos)
        return ::testing::AssertionFailure() << "message '" << m << "' lacks '" << p << "'";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw " << typeid(e).name() << " (" << e.what() << ")";
  }
  return ::testing::AssertionFailure() << "did not throw";
}

TYPED_TEST(FftOps, ComplexInputsNeedATrailingPairAndASignal) {
  using B = TypeParam;
  const auto not_complex = Tensor<B, 2>::ones({4, 3});
  EXPECT_TRUE(raises<ShapeError>([&] { fft(not_complex); }, {"fft", "[4, 3]", "last dim 2"}));
  EXPECT_TRUE(raises<ShapeError>([&] { ifft(not_complex); }, {"ifft", "[4, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { irfft(not_complex); }, {"irfft", "[4, 3]"}));
  const auto no_signal = Tensor<B, 3>::ones({3, 0, 2});
  EXPECT_TRUE(raises<ShapeError>([&] { fft(no_signal); }, {"fft", "empty", "[3, 0, 2]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { ifft(no_signal); }, {"ifft", "empty", "[3, 0, 2]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { irfft(no_signal, 4); }, {"irfft", "empty", "[3, 0, 2]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { rfft(Tensor<B, 2>::ones({3, 0})); }, {"rfft", "empty", "[3, 0]"}));
}

TYPED_TEST(FftOps, IrfftLengthMustMatchTheBins) {
  using B = TypeParam;
  const auto five_bins = Tensor<B, 2>::ones({5, 2});  // n = 8 or 9
  EXPECT_TRUE(raises<ShapeError>([&] { irfft(five_bins, 10); }, {"irfft", "n = 10", "6 bins", "got 5", "[5, 2]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { irfft(five_bins, 7); }, {"irfft", "n = 7", "4 bins", "got 5"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { irfft(five_bins, 0); }, {"irfft", ">= 1", "got 0"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { irfft(five_bins, -3); }, {"irfft", "got -3"}));
  // One bin: the default 2*(m-1) = 0 is no length; n = 1 is.
  const auto one_bin = make<B, 2>({3, 4}, {1, 2});
  EXPECT_TRUE(raises<ArgumentError>([&] { irfft(one_bin); }, {"irfft", "got 0", "n = 1"}));
  EXPECT_TRUE(matches(irfft(one_bin, 1), Shape{1}, {3}, Tol<B>::exact));  // bin 0's imaginary part is ignored
}

}  // namespace fft_cases
}  // namespace ember::test
