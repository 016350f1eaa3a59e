#pragma once
// a / c for one divisor c and many dividends, rounded exactly as the division rounds it, without the divider: one
// multiply and two FMAs (Markstein's theorem: with y = RN(1/c) and q = RN(a * y), within one ulp of a / c, the
// remainder r = a - q * c is exact in an FMA and RN(q + r * y) is RN(a / c); Muller et al., Handbook of
// Floating-Point Arithmetic, 2nd ed., section 4.7). Why: Adam divides every element by sqrt(bias_correction2) and
// then divides again; with the sqrt that is three divider operations per element, and the divider is what bounds
// the fused Adam step (9 % of the digits MLP epoch). This keeps PyTorch's bits and frees a third of the divider.
//
// Preconditions, which Adam's use meets (backends/cpu/optim_kernels.cpp): no result or remainder in the subnormal
// range other than 0 (for Adam a = sqrt(v) with v normal or 0, and 0 < c <= 1, so |a / c| >= |a|). An infinite or
// NaN quotient estimate is returned as it is (inf / c is inf, NaN stays NaN), where the FMA correction would have made
// inf - inf = NaN. The tests sweep every significand of several binades against the division
// (tests/cpu_internals_test.cpp, ScalarDivisor.*).
#include <cmath>

namespace ember::cpu {

template <class T>
struct ScalarDivisor {
  T c, y;  // the divisor and its correctly rounded reciprocal
  explicit ScalarDivisor(T divisor) : c(divisor), y(T(1) / divisor) {}

  // Callers compile with fp-contract off (the Adam loops do): q = a * y must round on its own, not fuse.
  [[gnu::always_inline]] T divide(T a) const {
    const T q = a * y;
    const T r = std::fma(-q, c, a);
    const T corrected = std::fma(r, y, q);
    return std::isfinite(q) ? corrected : q;
  }
};

}  // namespace ember::cpu
