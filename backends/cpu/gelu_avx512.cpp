// GELU forward and backward in AVX-512 (gelu_avx512.hpp). Per-function target attributes, chosen at run time, so
// the library still runs on any x86-64 CPU (and builds elsewhere) without -march flags.
#include "backends/cpu/gelu_avx512.hpp"

#include <atomic>

#include "backends/cpu/cpu_features.hpp"
#include "backends/cpu/gelu_constants.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define EMBER_GELU_AVX512 1
#endif

namespace ember::cpu {
namespace {

std::atomic<bool> g_on{true};

}  // namespace

// cpu_has_avx512f() is false wherever EMBER_GELU_AVX512 is not defined (the same condition).
bool gelu_avx512_usable() { return g_on.load(std::memory_order_relaxed) && cpu_has_avx512f(); }
void set_gelu_avx512(bool on) { g_on.store(on, std::memory_order_relaxed); }

#ifdef EMBER_GELU_AVX512

// GCC 12's AVX-512 intrinsics pass an undefined vector as the pass-through of their all-lanes mask, which its
// -Wmaybe-uninitialized reports inside its own header wherever they are inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {

#define EMBER_AVX512 __attribute__((target("avx512f"))) inline

EMBER_AVX512 __m512 splat(float v) { return _mm512_set1_ps(v); }

// erf(u): vec_math.hpp's rational minimax (Eigen's), u clamped to [-4, 4], without its tiny-|u| branch (callers add
// erf to 1, which that branch cannot change). min / max with the constant first keep a NaN u (the second operand
// wins there), so NaN goes through as NaN.
EMBER_AVX512 __m512 erf_clamped(__m512 u) {
  using namespace gelu_constants;
  const __m512 xc = _mm512_min_ps(splat(kErfClamp), _mm512_max_ps(splat(-kErfClamp), u));
  const __m512 x2 = _mm512_mul_ps(xc, xc);
  __m512 p = splat(kErfP[0]);
  for (int i = 1; i < 7; ++i) p = _mm512_fmadd_ps(p, x2, splat(kErfP[i]));
  p = _mm512_mul_ps(p, xc);
  __m512 q = splat(kErfQ[0]);
  for (int i = 1; i < 5; ++i) q = _mm512_fmadd_ps(q, x2, splat(kErfQ[i]));
  // The exact division: an approximate reciprocal and a Newton step measured no faster (the ports, not the divider,
  // bound this loop) and would round differently from vm::erf.
  return _mm512_div_ps(p, q);
}

// exp(t) for t <= 0 (or NaN): vm::exp's reduction and polynomial, 2^n applied by vscalefps. Below vm::exp's lower
// limit the result is 0, as there (vm::exp flushes what would be subnormal).
EMBER_AVX512 __m512 exp_nonpositive(__m512 t) {
  using namespace gelu_constants;
  const __m512 lo = splat(kExpLo);
  const __mmask16 under = _mm512_cmp_ps_mask(t, lo, _CMP_LT_OQ);
  const __m512 tc = _mm512_max_ps(lo, t);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(tc, splat(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, splat(kLn2Hi), tc);
  r = _mm512_fnmadd_ps(n, splat(kLn2Lo), r);
  __m512 p = splat(kExpP[0]);
  for (int i = 1; i < 6; ++i) p = _mm512_fmadd_ps(p, r, splat(kExpP[i]));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, splat(1.0f)));
  return _mm512_mask_mov_ps(_mm512_scalef_ps(p, n), under, _mm512_setzero_ps());
}

EMBER_AVX512 __m512 gelu_of(__m512 x) {
  const __m512 e = erf_clamped(_mm512_mul_ps(x, splat(gelu_constants::kSqrtHalf)));
  return _mm512_mul_ps(_mm512_mul_ps(splat(0.5f), x), _mm512_add_ps(splat(1.0f), e));
}

EMBER_AVX512 __m512 gelu_step_of(__m512 x, __m512 g) {
  const __m512 e = erf_clamped(_mm512_mul_ps(x, splat(gelu_constants::kSqrtHalf)));
  const __m512 cdf = _mm512_mul_ps(splat(0.5f), _mm512_add_ps(splat(1.0f), e));
  const __m512 t = _mm512_mul_ps(_mm512_mul_ps(splat(-0.5f), x), x);
  const __m512 pdf = _mm512_mul_ps(exp_nonpositive(t), splat(gelu_constants::kInvSqrt2Pi));
  return _mm512_mul_ps(g, _mm512_fmadd_ps(x, pdf, cdf));
}

EMBER_AVX512 __mmask16 first_lanes(int64_t m) { return static_cast<__mmask16>((1u << m) - 1u); }

#undef EMBER_AVX512

}  // namespace

__attribute__((target("avx512f"))) void gelu_f32_avx512(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, gelu_of(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 k = first_lanes(n - i);
    _mm512_mask_storeu_ps(y + i, k, gelu_of(_mm512_maskz_loadu_ps(k, x + i)));
  }
}

__attribute__((target("avx512f"))) void gelu_backward_f32_avx512(const float* x, const float* g, float* out,
                                                                          int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, gelu_step_of(_mm512_loadu_ps(x + i), _mm512_loadu_ps(g + i)));
  if (i < n) {
    const __mmask16 k = first_lanes(n - i);
    _mm512_mask_storeu_ps(out + i, k, gelu_step_of(_mm512_maskz_loadu_ps(k, x + i), _mm512_maskz_loadu_ps(k, g + i)));
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#else
void gelu_f32_avx512(const float*, float*, int64_t) {}                        // never usable here
void gelu_backward_f32_avx512(const float*, const float*, float*, int64_t) {}  // never usable here
#endif

}  // namespace ember::cpu
