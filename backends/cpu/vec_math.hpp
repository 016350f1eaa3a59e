#pragma once
// Branch-free float approximations of exp, tanh, sigmoid and erf that GCC vectorizes (libm's scalar calls do
// not vectorize and run ~10x slower on 16M-element tensors). Accuracy is a few ulp over the whole range;
// tests/ops/elementwise_approx_test.cpp checks them against libm. Double precision keeps libm: f64 is the reference path.
#include <cmath>
#include <cstdint>
#include <cstring>

namespace ember::cpu::vm {

inline float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// exp(x) = 2^n * exp(r), r = x - n ln2 in [-ln2/2, ln2/2]; degree-6 polynomial (Cephes expf coefficients).
// 2^n is applied as two factors 2^(n/2) so that n up to 128 stays representable; results that would be subnormal
// flush to 0 (absolute error below 1.2e-38).
// Always inlined: called out of line, it is compiled for the baseline ISA (nearbyintf through the PLT) instead of
// the caller's vector clone, and every exp of unary_f32 ran scalar.
[[gnu::always_inline]] inline float exp(float x) {
  const float hi = 88.7228391f, lo = -87.3365448f;
  float xc = x > hi ? hi : x;
  xc = xc >= lo ? xc : lo;  // NaN too: n below must be finite (a NaN to int32 is UB); the result is x for NaN anyway
  const float n = std::nearbyint(xc * 1.44269504088896341f);
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500E-4f;
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  p = p * r * r + r + 1.0f;
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  float y = p * bits_to_float(static_cast<uint32_t>(n1 + 127) << 23) * bits_to_float(static_cast<uint32_t>(n2 + 127) << 23);
  y = x > hi ? INFINITY : y;
  y = x < lo ? 0.0f : y;
  return x != x ? x : y;
}

// Rational minimax tanh (as in Eigen's generic_fast_tanh_float), clamped where tanh rounds to ±1.
inline float tanh(float x) {
  const float c = 7.90531110763549805f;
  float xc = x > c ? c : x;
  xc = xc < -c ? -c : xc;
  const float x2 = xc * xc;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  p = p * xc;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  const float y = p / q;
  return std::fabs(x) < 0.0004f ? x : y;
}

inline float sigmoid(float x) { return 1.0f / (1.0f + vm::exp(-x)); }

// Rational minimax erf (as in Eigen's generic_fast_erf_float), clamped at |x| = 4 where erf rounds to ±1.
inline float erf(float x) {
  float xc = x > 4.0f ? 4.0f : x;
  xc = xc < -4.0f ? -4.0f : xc;
  const float x2 = xc * xc;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 + -2.10102402082508e-06f;
  p = p * x2 + -5.69250639462346e-05f;
  p = p * x2 + -7.34990630326855e-04f;
  p = p * x2 + -2.95459980854025e-03f;
  p = p * x2 + -1.60960333262415e-02f;
  p = p * xc;
  float q = -1.45660718464996e-05f;
  q = q * x2 + -2.13374055278905e-04f;
  q = q * x2 + -1.68282697438203e-03f;
  q = q * x2 + -7.37332916720468e-03f;
  q = q * x2 + -1.42647390514189e-02f;
  // Below ~1e-36 p is subnormal and loses bits (11 ulp at 1.2e-38); there erf(x) = 2x/sqrt(pi) to the last bit.
  return std::fabs(x) < 1e-10f ? x * 1.12837916709551257f : p / q;
}

// GELU, exact form: x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)).
inline float gelu(float x) { return 0.5f * x * (1.0f + vm::erf(x * 0.70710678118654752f)); }
// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
inline float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + vm::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

}  // namespace ember::cpu::vm
