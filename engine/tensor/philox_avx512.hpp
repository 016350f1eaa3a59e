#pragma once
// Philox4x32-10 Bernoulli words 16 blocks at a time in AVX-512 registers (random.hpp's fill_bernoulli asks it before
// philox_avx2.hpp when the CPU has AVX-512F): twice the lanes of the AVX2 path, and fewer ops per round (masked
// shuffles, three-way XORs, unrolled rounds). A 262 144-float mask on one core of an Emerald Rapids Xeon took
// 132-144 us against AVX2's 326 (2026-11-29; 187 us before the op savings). Same words as Philox4x32::block (the
// tests compare them).
#include <cstddef>
#include <cstdint>

#include "engine/tensor/philox_avx2.hpp"

#if defined(EMBER_PHILOX_AVX2)
#define EMBER_PHILOX_AVX512 1

// GCC 12's AVX-512 intrinsics pass an undefined vector as the pass-through of their all-lanes mask, which its
// -Wmaybe-uninitialized reports inside its own header (hundreds of lines per build) wherever they are inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace ember::philox_avx512 {

inline bool available() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2");
  return has;
}

// hi / lo 32 bits of a * m per 32-bit lane. One multiply gives the even lanes' 64-bit products, another the odd
// lanes'; each result half is then one masked in-lane shuffle (vpshufd) of the two, where a shift and a blend took
// two ops. A Philox round is port-bound on 512-bit ops, so ops saved are time saved.
__attribute__((target("avx512f"))) inline void mulhilo(__m512i a, __m512i m, __m512i& hi, __m512i& lo) {
  const __m512i even = _mm512_mul_epu32(a, m);                        // lanes 2i, 2i + 1: lo, hi of a[2i] * m
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);  // lanes 2i, 2i + 1: lo, hi of a[2i + 1] * m
  hi = _mm512_mask_shuffle_epi32(odd, 0x5555, even, _MM_PERM_DDBB);   // lane 2i takes even's lane 2i + 1
  lo = _mm512_mask_shuffle_epi32(even, 0xAAAA, odd, _MM_PERM_CCAA);   // lane 2i + 1 takes odd's lane 2i
}

// out[64 g + 4 l + j] = word j of block first_block + 16 g + l < threshold ? hit : 0, for g < pairs; first_block a
// multiple of 8 (a pair of philox_avx2 groups).
__attribute__((target("avx512f"))) inline void bernoulli_f32(float* out, uint64_t first_block, std::size_t pairs,
                                                             uint64_t key, uint32_t threshold, float hit) {
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(Philox4x32::kMul0));
  const __m512i m1 = _mm512_set1_epi32(static_cast<int>(Philox4x32::kMul1));
  const __m512i t = _mm512_set1_epi32(static_cast<int>(threshold));
  const __m512 h = _mm512_set1_ps(hit);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  // The round keys are the same for every group: computed once, read by each round's three-way XOR from memory (a
  // broadcast from a general register would cost a shuffle-port op per round).
  uint32_t rk0[10], rk1[10];
  for (int r = 0; r < 10; ++r) {
    rk0[r] = static_cast<uint32_t>(key) + static_cast<uint32_t>(r) * Philox4x32::kWeyl0;
    rk1[r] = static_cast<uint32_t>(key >> 32) + static_cast<uint32_t>(r) * Philox4x32::kWeyl1;
  }
  for (std::size_t g = 0; g < pairs; ++g) {
    const uint64_t b0 = first_block + 16 * g;
    float* o = out + 64 * g;
    if (static_cast<uint32_t>(b0) > 0xFFFFFFFFu - 15) {
      // The 16 blocks cross a 2^32-block boundary (the counter's high word changes inside): the AVX2 path's two
      // groups of 8, each within one high word (b0 is a multiple of 8).
      philox_avx2::bernoulli_f32(o, b0, 2, key, threshold, hit);
      continue;
    }
    __m512i c0 = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(b0))), lane);
    __m512i c1 = _mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(b0 >> 32)));
    __m512i c2 = _mm512_setzero_si512(), c3 = _mm512_setzero_si512();
    // Unrolled, the rounds' renamings (c1 = l1, ...) are free and each round key an operand in memory.
#pragma GCC unroll 10
    for (int r = 0; r < 10; ++r) {
      __m512i h0, l0, h1, l1;
      mulhilo(c0, m0, h0, l0);
      mulhilo(c2, m1, h1, l1);
      // 0x96: a ^ b ^ c in one vpternlogd.
      const __m512i n0 = _mm512_ternarylogic_epi32(h1, c1, _mm512_set1_epi32(static_cast<int>(rk0[r])), 0x96);
      const __m512i n2 = _mm512_ternarylogic_epi32(h0, c3, _mm512_set1_epi32(static_cast<int>(rk1[r])), 0x96);
      c1 = l1;
      c3 = l0;
      c0 = n0;
      c2 = n2;
    }
    // f[j] lane l: word j of block l, as hit or 0 (unsigned compare); then transposed to the blocks' order in memory.
    const __m512i c[4] = {c0, c1, c2, c3};
    __m512 f[4];
    for (int j = 0; j < 4; ++j) f[j] = _mm512_maskz_mov_ps(_mm512_cmplt_epu32_mask(c[j], t), h);
    // Within each 128-bit lane L (blocks 4L .. 4L + 3), as in the AVX2 path: r_k holds block 4L + k's four words.
    const __m512d a01l = _mm512_castps_pd(_mm512_unpacklo_ps(f[0], f[1]));
    const __m512d a01h = _mm512_castps_pd(_mm512_unpackhi_ps(f[0], f[1]));
    const __m512d a23l = _mm512_castps_pd(_mm512_unpacklo_ps(f[2], f[3]));
    const __m512d a23h = _mm512_castps_pd(_mm512_unpackhi_ps(f[2], f[3]));
    const __m512 r0 = _mm512_castpd_ps(_mm512_unpacklo_pd(a01l, a23l));  // blocks 0, 4, 8, 12
    const __m512 r1 = _mm512_castpd_ps(_mm512_unpackhi_pd(a01l, a23l));  // blocks 1, 5, 9, 13
    const __m512 r2 = _mm512_castpd_ps(_mm512_unpacklo_pd(a01h, a23h));  // blocks 2, 6, 10, 14
    const __m512 r3 = _mm512_castpd_ps(_mm512_unpackhi_pd(a01h, a23h));  // blocks 3, 7, 11, 15
    // A 4 x 4 transpose of 128-bit lanes.
    const __m512 t0 = _mm512_shuffle_f32x4(r0, r1, 0x44);  // blocks 0, 4, 1, 5
    const __m512 t1 = _mm512_shuffle_f32x4(r2, r3, 0x44);  // blocks 2, 6, 3, 7
    const __m512 t2 = _mm512_shuffle_f32x4(r0, r1, 0xEE);  // blocks 8, 12, 9, 13
    const __m512 t3 = _mm512_shuffle_f32x4(r2, r3, 0xEE);  // blocks 10, 14, 11, 15
    _mm512_storeu_ps(o, _mm512_shuffle_f32x4(t0, t1, 0x88));       // blocks 0 .. 3
    _mm512_storeu_ps(o + 16, _mm512_shuffle_f32x4(t0, t1, 0xDD));  // blocks 4 .. 7
    _mm512_storeu_ps(o + 32, _mm512_shuffle_f32x4(t2, t3, 0x88));  // blocks 8 .. 11
    _mm512_storeu_ps(o + 48, _mm512_shuffle_f32x4(t2, t3, 0xDD));  // blocks 12 .. 15
  }
  // As philox_avx2.hpp says: without it, SSE code after a mask pays for the dirty upper halves (the tests' -O0 build).
  _mm256_zeroupper();
}

}  // namespace ember::philox_avx512

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif
