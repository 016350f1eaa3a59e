// AVX-512 max pooling forward (max_pool_vec.hpp). Compiled with a per-function target attribute and chosen at run
// time, so the library still runs on any x86-64 CPU (and builds elsewhere) without -march flags.
#include "backends/cpu/max_pool_vec.hpp"

#include <algorithm>
#include <atomic>
#include <limits>

#include "backends/cpu/cpu_features.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define EMBER_MAX_POOL_AVX512 1
#endif

namespace ember::cpu {
namespace {

std::atomic<bool> g_on{true};

}  // namespace

void set_max_pool_vectorized(bool on) { g_on.store(on, std::memory_order_relaxed); }

bool max_pool_vectorized_usable(const Pool2dGeometry& g) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  return g_on.load(std::memory_order_relaxed) && cpu_has_avx512f() && g.h * g.w <= kMax && g.ho * g.wo <= kMax &&
         g.ho > 0 && g.wo > 0;
}

MaxPoolWindows max_pool_windows(const Pool2dGeometry& g) {
  MaxPoolWindows w;
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) w.taps.push_back(static_cast<int32_t>(i * g.dh * g.w + j * g.dw));
  const int64_t span_h = (g.kh - 1) * g.dh, span_w = (g.kw - 1) * g.dw;
  // Every inner row holds the same inner columns: ow with 0 <= ow * sw - pw and ow * sw - pw + span_w < w.
  const int64_t first = (g.pw + g.sw - 1) / g.sw, last = g.w - 1 - span_w + g.pw >= 0 ? (g.w - 1 - span_w + g.pw) / g.sw : -1;
  const int64_t run = std::max<int64_t>(0, std::min(last, g.wo - 1) - first + 1);
  if ((g.sw == 1 || g.sw == 2) && run >= 16) {
    w.row_run = run;
    w.stride = g.sw;
  }
  for (int64_t oh = 0; oh < g.ho; ++oh) {
    const int64_t h0 = oh * g.sh - g.ph;
    const bool rows_in = h0 >= 0 && h0 + span_h < g.h;
    for (int64_t ow = 0; ow < g.wo; ++ow) {
      const int64_t w0 = ow * g.sw - g.pw;
      const auto q = static_cast<int32_t>(oh * g.wo + ow);
      if (rows_in && w0 >= 0 && w0 + span_w < g.w) {
        w.inner.push_back(q);
        w.origin.push_back(static_cast<int32_t>(h0 * g.w + w0));
      } else {
        w.border.push_back(q);
      }
    }
  }
  return w;
}

#ifdef EMBER_MAX_POOL_AVX512
namespace {
__attribute__((target("avx512f"))) inline __m256i low_half(__m512i v) { return _mm512_maskz_extracti64x4_epi64(0xF, v, 0); }
__attribute__((target("avx512f"))) inline __m256i high_half(__m512i v) { return _mm512_maskz_extracti64x4_epi64(0xF, v, 1); }

// 16 (or m < 16) consecutive outputs' values and first-tap offsets, stored at q (contiguous) or scattered.
__attribute__((target("avx512f"))) inline void store_block(float* dst, int64_t* idx, const int32_t* q, int64_t m,
                                                           __mmask16 k, __m512 best, __m512i arg) {
  // The zero-masking forms: GCC 12's plain ones start from _mm512_undefined and warn (-Wmaybe-uninitialized).
  const __m512i arg_lo = _mm512_maskz_cvtepi32_epi64(0xFF, low_half(arg));
  const __m512i arg_hi = _mm512_maskz_cvtepi32_epi64(0xFF, high_half(arg));
  const int32_t q0 = q[0];
  if (q[m - 1] - q0 == m - 1) {  // increasing and unique, so contiguous: plain (masked) stores
    _mm512_mask_storeu_ps(dst + q0, k, best);
    _mm512_mask_storeu_epi64(idx + q0, static_cast<__mmask8>(k & 0xFF), arg_lo);
    _mm512_mask_storeu_epi64(idx + q0 + 8, static_cast<__mmask8>(k >> 8), arg_hi);
  } else {  // a block spanning rows around border outputs
    const __m512i qv = _mm512_maskz_loadu_epi32(k, q);
    _mm512_mask_i32scatter_ps(dst, k, qv, best, 4);
    _mm512_mask_i32scatter_epi64(idx, static_cast<__mmask8>(k & 0xFF), low_half(qv), arg_lo, 8);
    _mm512_mask_i32scatter_epi64(idx, static_cast<__mmask8>(k >> 8), high_half(qv), arg_hi, 8);
  }
}

inline __mmask16 first_lanes(int64_t m) { return static_cast<__mmask16>(m >= 16 ? 0xFFFFu : (1u << m) - 1u); }

// The scalar kernel's rule for one tap over a block: a value that beats the running best, or a NaN, wins.
__attribute__((target("avx512f"))) inline void take_tap(__m512 v, __m512i at, __mmask16 k, __m512& best,
                                                        __m512i& arg) {
  const __mmask16 take = (_mm512_cmp_ps_mask(v, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)) & k;
  best = _mm512_mask_mov_ps(best, take, v);
  arg = _mm512_mask_mov_epi32(arg, take, at);
}

// p[0], p[s], ..., p[(m - 1) s] for s = 1 or 2 in the first m lanes, by (masked, so never past the plane)
// contiguous loads: 2 loads and a permute instead of a 16-lane gather.
__attribute__((target("avx512f"))) inline __m512 load_strided(const float* p, int64_t m, int64_t s, __m512i even) {
  if (s == 1) return _mm512_maskz_loadu_ps(first_lanes(m), p);
  const int64_t need = 2 * m - 1;
  const __m512 lo = _mm512_maskz_loadu_ps(first_lanes(std::min<int64_t>(need, 16)), p);
  const __m512 hi = _mm512_maskz_loadu_ps(first_lanes(std::max<int64_t>(need - 16, 0)), p + 16);
  return _mm512_permutex2var_ps(lo, even, hi);
}

}  // namespace

__attribute__((target("avx512f"))) void max_pool_inner_avx512(const float* src, float* dst, int64_t* idx,
                                                              const MaxPoolWindows& w) {
  const int64_t n = static_cast<int64_t>(w.inner.size()), ntaps = static_cast<int64_t>(w.taps.size());
  const int32_t* q = w.inner.data();
  const int32_t* origin = w.origin.data();
  const __m512 minus_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  if (w.row_run > 0) {  // rows of >= 16 inner outputs at stride 1 or 2: contiguous loads along each row
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i even = _mm512_slli_epi32(iota, 1);
    const __m512i lane_step = _mm512_mullo_epi32(iota, _mm512_set1_epi32(static_cast<int32_t>(w.stride)));
    for (int64_t r = 0; r < n; r += w.row_run) {
      for (int64_t c = 0; c < w.row_run; c += 16) {
        const int64_t m = std::min<int64_t>(16, w.row_run - c);
        const __mmask16 k = first_lanes(m);
        const int32_t o = origin[r + c];
        __m512 best = minus_inf;
        __m512i arg = _mm512_add_epi32(_mm512_set1_epi32(o), lane_step);
        for (int64_t t = 0; t < ntaps; ++t) {
          const int32_t at = o + w.taps[t];
          take_tap(load_strided(src + at, m, w.stride, even), _mm512_add_epi32(_mm512_set1_epi32(at), lane_step), k,
                   best, arg);
        }
        store_block(dst, idx, q + r + c, m, k, best, arg);
      }
    }
    return;
  }
  for (int64_t b = 0; b < n; b += 16) {  // any geometry: 16 inner outputs at a time, one gather per tap
    const int64_t m = std::min<int64_t>(16, n - b);
    const __mmask16 k = first_lanes(m);
    const __m512i org = _mm512_maskz_loadu_epi32(k, origin + b);
    __m512 best = minus_inf;
    __m512i arg = org;  // the first tap is the origin: the answer when no tap beats -inf
    for (int64_t t = 0; t < ntaps; ++t) {
      const __m512i at = _mm512_add_epi32(org, _mm512_set1_epi32(w.taps[t]));
      take_tap(_mm512_mask_i32gather_ps(minus_inf, k, at, src, 4), at, k, best, arg);
    }
    store_block(dst, idx, q + b, m, k, best, arg);
  }
}
#else
void max_pool_inner_avx512(const float*, float*, int64_t*, const MaxPoolWindows&) {}  // never usable here
#endif

}  // namespace ember::cpu
