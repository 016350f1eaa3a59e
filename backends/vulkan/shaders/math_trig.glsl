// Inverse trigonometric and hyperbolic functions, atan2 and the float remainder for the elementwise shaders.
// GLSL's builtins (asin, atan, sinh, asinh, ...) have no precision the Vulkan spec pins down (lavapipe's are tens
// of ulp off near the domain edges), so these follow Cephes' single-precision routines (the polynomials of
// asinf / atanf) and, for the inverse hyperbolics, log1p forms that stay accurate near 0 and 1. Needs math.glsl.
#define F_PI_2 1.57079632679489661923
#define F_PI 3.14159265358979323846
#define F_LN2 0.693147180559945309417

// asin(x) for |x| <= 0.5 (Cephes asinf polynomial, ~1 ulp).
float ember_asin_small(float a) {
  if (abs(a) < 1e-4) return a;
  const float z = a * a;
  precise float p = 4.2163199048E-2;
  p = p * z + 2.4181311049E-2;
  p = p * z + 4.5470025998E-2;
  p = p * z + 7.4953002686E-2;
  p = p * z + 1.6666752422E-1;
  return p * z * a + a;
}

float ember_asin(float x) {
  const float a = abs(x);
  if (isnan(x) || a > 1.0) return F_NAN;
  if (a <= 0.5) return ember_asin_small(x);
  // asin(a) = pi/2 - 2 asin(sqrt((1 - a) / 2)); 1 - a is exact here.
  const float r = F_PI_2 - 2.0 * ember_asin_small(sqrt(0.5 * (1.0 - a)));
  return x < 0.0 ? -r : r;
}

float ember_acos(float x) {
  if (isnan(x) || abs(x) > 1.0) return F_NAN;
  if (x < -0.5) return F_PI - 2.0 * ember_asin_small(sqrt(0.5 * (1.0 + x)));
  if (x > 0.5) return 2.0 * ember_asin_small(sqrt(0.5 * (1.0 - x)));
  return F_PI_2 - ember_asin_small(x);
}

// Cephes atanf: reduce |x| to [0, tan(pi/8)] with pi/4 or pi/2 offsets, then an odd polynomial (~1-2 ulp).
float ember_atan(float x) {
  if (isnan(x)) return x;
  float a = abs(x);
  float base = 0.0;
  if (a > 2.414213562373095) {
    base = F_PI_2;
    a = -1.0 / a;
  } else if (a > 0.4142135623730950) {
    base = 0.785398163397448309616;
    a = (a - 1.0) / (a + 1.0);
  }
  const float z = a * a;
  precise float p = 8.05374449538e-2;
  p = p * z - 1.38776856032E-1;
  p = p * z + 1.99777106478E-1;
  p = p * z - 3.33329491539E-1;
  const float r = base + (p * z * a + a);
  return x < 0.0 ? -r : r;
}

// C's atan2(y, x), special cases included (signed zeros and infinities, as NumPy and PyTorch return them).
float ember_atan2(float y, float x) {
  if (isnan(x) || isnan(y)) return F_NAN;
  const bool y_neg = (floatBitsToUint(y) >> 31) != 0u;
  const bool x_neg = (floatBitsToUint(x) >> 31) != 0u;
  const float pi_y = y_neg ? -F_PI : F_PI;
  if (y == 0.0) return x_neg ? pi_y : y;  // atan2(+-0, -0 or x < 0) = +-pi, atan2(+-0, +0 or x > 0) = +-0
  if (isinf(x)) {
    if (isinf(y)) return x_neg ? 0.75 * pi_y : 0.25 * pi_y;
    return x_neg ? pi_y : (y_neg ? -0.0 : 0.0);
  }
  if (x == 0.0 || isinf(y)) return 0.5 * pi_y;
  const float r = ember_atan(y / x);
  return x_neg ? r + pi_y : r;
}

float ember_sinh(float x) {
  if (isnan(x)) return x;
  const float a = abs(x);
  float r;
  if (a > 88.0) {  // e^a overflows before sinh does: e^(a/2) squared
    const float e = ember_exp(0.5 * a);
    r = (0.5 * e) * e;
  } else if (a > 1.0) {
    const float e = ember_exp(a);
    r = 0.5 * e - 0.5 / e;
  } else {  // Cephes sinhf polynomial: no cancellation near 0
    const float z = a * a;
    precise float p = 2.03721912945E-4;
    p = p * z + 8.33028376239E-3;
    p = p * z + 1.66667160211E-1;
    r = p * z * a + a;
  }
  return x < 0.0 ? -r : r;
}

float ember_cosh(float x) {
  if (isnan(x)) return x;
  const float a = abs(x);
  if (a > 88.0) {
    const float e = ember_exp(0.5 * a);
    return (0.5 * e) * e;
  }
  const float e = ember_exp(a);
  return 0.5 * e + 0.5 / e;
}

// asinh(a) = log1p(a + a^2 / (1 + sqrt(1 + a^2))): no cancellation for small a; log(2a) once 1/a^2 is below an ulp.
float ember_asinh(float x) {
  if (isnan(x) || isinf(x)) return x;
  const float a = abs(x);
  float r;
  if (a < 1e-4) return x;
  if (a > 4096.0) {
    r = ember_log(a) + F_LN2;
  } else {
    const float a2 = a * a;
    r = ember_log1p(a + a2 / (1.0 + sqrt(1.0 + a2)));
  }
  return x < 0.0 ? -r : r;
}

// acosh(x) = log1p(t + sqrt(2t + t^2)), t = x - 1 (exact for x in [1, 2]); log(2x) for large x.
float ember_acosh(float x) {
  if (isnan(x) || x < 1.0) return F_NAN;
  if (isinf(x)) return x;
  if (x > 4096.0) return ember_log(x) + F_LN2;
  const float t = x - 1.0;
  return ember_log1p(t + sqrt(t * (t + 2.0)));
}

// atanh(a) = log1p(2a / (1 - a)) / 2: accurate near 0, +-inf at +-1, NaN beyond.
float ember_atanh(float x) {
  const float a = abs(x);
  if (isnan(x) || a > 1.0) return F_NAN;
  if (a < 1e-4) return x;
  const float r = 0.5 * ember_log1p(2.0 * a / (1.0 - a));
  return x < 0.0 ? -r : r;
}

// fmod(a, b) for finite a and finite b != 0, exactly: subtract the largest b 2^k <= |a| while |a| >= |b|. Each
// subtraction is exact (Sterbenz), and there are at most as many as the exponents differ (< 280).
float ember_fmod_exact(float a, float b) {
  float r = abs(a);
  const float m = abs(b);
  int eb;
  frexp(m, eb);
  for (int i = 0; i < 300 && r >= m; ++i) {
    int er;
    frexp(r, er);
    float t = ldexp(m, er - eb);
    if (t > r) t *= 0.5;
    r -= t;
  }
  return a < 0.0 ? -r : r;
}

// torch.remainder for floats: the exact fmod moved into the divisor's sign, like the CPU backend.
float ember_remainder(float a, float b) {
  if (isnan(a) || isnan(b) || isinf(a) || b == 0.0) return F_NAN;
  if (isinf(b)) return (a == 0.0 || (a < 0.0) == (b < 0.0)) ? a : b;
  float r = ember_fmod_exact(a, b);
  if (r != 0.0 && ((b < 0.0) != (r < 0.0))) r += b;
  return r;
}
