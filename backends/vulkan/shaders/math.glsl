// Float helpers shared by the elementwise shaders. GLSL leaves tanh/exp accuracy and NaN handling of min/max to
// the driver, so the ops whose results the op suite checks tightly use explicit, portable formulas: the same
// rational approximations as the CPU backend (backends/cpu/vec_math.hpp), NaN tests with isnan().
#define F_INF uintBitsToFloat(0x7f800000u)
#define F_NAN uintBitsToFloat(0x7fc00000u)

float ember_tanh(float x) {
  if (isnan(x)) return x;
  const float c = 7.90531110763549805;
  float xc = clamp(x, -c, c);
  float x2 = xc * xc;
  float p = -2.76076847742355e-16;
  p = p * x2 + 2.00018790482477e-13;
  p = p * x2 + -8.60467152213735e-11;
  p = p * x2 + 5.12229709037114e-08;
  p = p * x2 + 1.48572235717979e-05;
  p = p * x2 + 6.37261928875436e-04;
  p = p * x2 + 4.89352455891786e-03;
  p = p * xc;
  float q = 1.19825839466702e-06;
  q = q * x2 + 1.18534705686654e-04;
  q = q * x2 + 2.26843463243900e-03;
  q = q * x2 + 4.89352518554385e-03;
  return abs(x) < 0.0004 ? x : p / q;
}

float ember_erf(float x) {
  if (isnan(x)) return x;
  float xc = clamp(x, -4.0, 4.0);
  float x2 = xc * xc;
  float p = -2.72614225801306e-10;
  p = p * x2 + 2.77068142495902e-08;
  p = p * x2 + -2.10102402082508e-06;
  p = p * x2 + -5.69250639462346e-05;
  p = p * x2 + -7.34990630326855e-04;
  p = p * x2 + -2.95459980854025e-03;
  p = p * x2 + -1.60960333262415e-02;
  p = p * xc;
  float q = -1.45660718464996e-05;
  q = q * x2 + -2.13374055278905e-04;
  q = q * x2 + -1.68282697438203e-03;
  q = q * x2 + -7.37332916720468e-03;
  q = q * x2 + -1.42647390514189e-02;
  return abs(x) < 1e-10 ? x * 1.12837916709551257 : p / q;
}

// exp and log: the CPU backend's Cephes polynomials (backends/cpu/vec_math.hpp) with explicit range reduction,
// accurate to ~1 ulp. GLSL's exp/log are only required to be within 3 + 2|x| ulp, and drivers use exp2(x log2 e),
// whose error grows with |x| (lavapipe: 30 ulp near -87), which the op suite's ulp bounds reject.
float ember_exp(float x) {
  if (isnan(x)) return x;
  if (x > 88.7228391) return F_INF;
  if (x < -103.972084) return 0.0;
  const float xc = max(x, -87.3365448);
  const float n = roundEven(xc * 1.44269504088896341);
  precise float r = xc - n * 0.693359375;
  r = r - n * -2.12194440e-4;
  precise float p = 1.9875691500E-4;
  p = p * r + 1.3981999507E-3;
  p = p * r + 8.3334519073E-3;
  p = p * r + 4.1665795894E-2;
  p = p * r + 1.6666665459E-1;
  p = p * r + 5.0000001201E-1;
  p = p * r * r + r + 1.0;
  const int ni = int(n);
  const int n1 = ni >> 1, n2 = ni - n1;
  precise float y = p * uintBitsToFloat(uint(n1 + 127) << 23) * uintBitsToFloat(uint(n2 + 127) << 23);
  if (x < -87.3365448) y = exp2(x * 1.44269504088896341);  // subnormal results: absolute error < 1e-45
  return y;
}

float ember_log(float x) {
  if (isnan(x) || x < 0.0) return F_NAN;
  if (x == 0.0) return -F_INF;
  if (isinf(x)) return x;
  int e;
  precise float m = frexp(x, e);  // x = m 2^e, m in [0.5, 1)
  if (m < 0.707106781186547524) {
    e -= 1;
    m = m + m - 1.0;
  } else {
    m = m - 1.0;
  }
  precise float z = m * m;
  precise float y = 7.0376836292E-2;
  y = y * m - 1.1514610310E-1;
  y = y * m + 1.1676998740E-1;
  y = y * m - 1.2420140846E-1;
  y = y * m + 1.4249322787E-1;
  y = y * m - 1.6668057665E-1;
  y = y * m + 2.0000714765E-1;
  y = y * m - 2.4999993993E-1;
  y = y * m + 3.3333331174E-1;
  y = y * m * z;
  const float fe = float(e);
  y += -2.12194440e-4 * fe;
  y += -0.5 * z;
  return m + y + 0.693359375 * fe;
}

float ember_log1p(float x) {
  // log1p(x) = log(u) * x / (u - 1) with u = 1 + x (Goldberg): exact where 1 + x rounds.
  precise float u = 1.0 + x;
  if (u == 1.0) return x;
  if (isinf(u) || u <= 0.0) return ember_log(u);
  return ember_log(u) * x / (u - 1.0);
}


float ember_sqrt(float x) {
  if (isnan(x) || x < 0.0) return F_NAN;
  return sqrt(x);
}

// 2^x for x in [-0.5, 0.5] (Cephes exp2f polynomial, ~1 ulp).
float ember_exp2_reduced(float x) {
  precise float p = 1.535336188319500E-4;
  p = p * x + 1.339887440266574E-3;
  p = p * x + 9.618437357674640E-3;
  p = p * x + 5.550332471162809E-2;
  p = p * x + 2.402264791363012E-1;
  p = p * x + 6.931472028550421E-1;
  precise float r = 1.0 + p * x;
  return r;
}

// |x|^y for finite x != 0 and finite y, as 2^(y log2|x|) with the exponent carried in two parts so that its large
// integer part (y * e for |x| = m 2^e) loses nothing: y*e is split exactly with an fma, only y*log2(m) (|log2 m| <=
// 0.5) carries rounding error. Within a few ulp for moderate |y| (libm is ~1).
float ember_pow_abs(float ax, float y) {
  int e;
  precise float m = frexp(ax, e);
  if (m < 0.707106781186547524) {
    m = m + m;
    e -= 1;
  }
  precise float lm = ember_log(m) * 1.44269504088896341;  // log2(m), |lm| <= 0.5
  precise float fe = float(e);
  precise float p = y * fe;
  precise float perr = fma(y, fe, -p);  // exact: y*e = p + perr
  precise float ip = roundEven(p);
  precise float frac = (p - ip) + perr + y * lm;
  precise float i2 = roundEven(frac);
  precise float r = frac - i2;
  const float k = ip + i2;
  if (k > 260.0) return F_INF;
  if (k < -300.0) return 0.0;
  // Two steps so that neither scale factor overflows before the product settles.
  const int ki = int(k);
  const int k1 = ki / 2, k2 = ki - k1;
  return ldexp(ldexp(ember_exp2_reduced(r), k1), k2);
}

// pow following C's rules for the special cases the op suite checks (0^0 = 1, x^0 = 1, 1^y = 1, negative bases
// with integer exponents).
float ember_pow(float x, float y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (isnan(x) || isnan(y)) return F_NAN;
  if (y == 1.0) return x;
  if (y == 2.0) return x * x;
  if (y == 0.5 && x >= 0.0) return sqrt(x);
  float ax = abs(x);
  bool odd = false;
  if (x < 0.0) {
    if (floor(y) != y) return F_NAN;  // negative base, fractional exponent
    odd = mod(abs(y), 2.0) == 1.0;
  }
  float r;
  if (ax == 0.0) r = y < 0.0 ? F_INF : 0.0;
  else if (isinf(ax)) r = y < 0.0 ? 0.0 : F_INF;
  else if (isinf(y)) r = (ax == 1.0) ? 1.0 : ((ax > 1.0) == (y > 0.0) ? F_INF : 0.0);
  else r = ember_pow_abs(ax, y);
  return odd ? -r : r;
}
