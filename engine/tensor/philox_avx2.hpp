#pragma once
// Philox4x32-10 Bernoulli words 8 blocks at a time in AVX2 registers (random.hpp's fill_bernoulli asks it when the CPU
// has AVX2): compilers do not vectorize the rounds' 32 x 32 -> 64-bit products by themselves below AVX-512, and the
// scalar rounds cost ~4.7 ns per float of a mask against ~1.7 ns here. Same words as Philox4x32::block (the tests
// compare them), so the mask is the same whichever path made it.
#include <cstddef>
#include <cstdint>

#include "engine/tensor/philox.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define EMBER_PHILOX_AVX2 1

namespace ember::philox_avx2 {

inline bool available() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

// hi / lo 32 bits of a * m per 32-bit lane.
__attribute__((target("avx2"))) inline void mulhilo(__m256i a, __m256i m, __m256i& hi, __m256i& lo) {
  const __m256i even = _mm256_mul_epu32(a, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

// out[32 g + 4 l + j] = word j of block first_block + 8 g + l < threshold ? hit : 0, for g < groups; first_block a
// multiple of 8.
__attribute__((target("avx2"))) inline void bernoulli_f32(float* out, uint64_t first_block, std::size_t groups,
                                                           uint64_t key, uint32_t threshold, float hit) {
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(Philox4x32::kMul0));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(Philox4x32::kMul1));
  const __m256i sign = _mm256_set1_epi32(static_cast<int>(0x80000000u));
  // Unsigned x < t as a signed compare of both with the top bit flipped.
  const __m256i t = _mm256_set1_epi32(static_cast<int>(threshold ^ 0x80000000u));
  const __m256 h = _mm256_set1_ps(hit);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (std::size_t g = 0; g < groups; ++g) {
    const uint64_t b0 = first_block + 8 * g;
    // Counter words 0 and 1: the block index's low and high halves (b0 is a multiple of 8, so b0 + 7 has b0's high
    // half).
    __m256i c0 = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(b0))), lane);
    __m256i c1 = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(b0 >> 32)));
    __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
    uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
    for (int r = 0; r < 10; ++r) {
      __m256i h0, l0, h1, l1;
      mulhilo(c0, m0, h0, l0);
      mulhilo(c2, m1, h1, l1);
      const __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(h1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
      const __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(h0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
      c1 = l1;
      c3 = l0;
      c0 = n0;
      c2 = n2;
      k0 += Philox4x32::kWeyl0;
      k1 += Philox4x32::kWeyl1;
    }
    // f[j] lane l: word j of block l, as hit or 0; then transposed to the blocks' order in memory.
    __m256 f[4];
    const __m256i c[4] = {c0, c1, c2, c3};
    for (int j = 0; j < 4; ++j)
      f[j] = _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(t, _mm256_xor_si256(c[j], sign))), h);
    const __m256d a01l = _mm256_castps_pd(_mm256_unpacklo_ps(f[0], f[1]));
    const __m256d a01h = _mm256_castps_pd(_mm256_unpackhi_ps(f[0], f[1]));
    const __m256d a23l = _mm256_castps_pd(_mm256_unpacklo_ps(f[2], f[3]));
    const __m256d a23h = _mm256_castps_pd(_mm256_unpackhi_ps(f[2], f[3]));
    const __m256 r0 = _mm256_castpd_ps(_mm256_unpacklo_pd(a01l, a23l));  // blocks 0 and 4
    const __m256 r1 = _mm256_castpd_ps(_mm256_unpackhi_pd(a01l, a23l));  // blocks 1 and 5
    const __m256 r2 = _mm256_castpd_ps(_mm256_unpacklo_pd(a01h, a23h));  // blocks 2 and 6
    const __m256 r3 = _mm256_castpd_ps(_mm256_unpackhi_pd(a01h, a23h));  // blocks 3 and 7
    float* o = out + 32 * g;
    _mm256_storeu_ps(o, _mm256_permute2f128_ps(r0, r1, 0x20));
    _mm256_storeu_ps(o + 8, _mm256_permute2f128_ps(r2, r3, 0x20));
    _mm256_storeu_ps(o + 16, _mm256_permute2f128_ps(r0, r1, 0x31));
    _mm256_storeu_ps(o + 24, _mm256_permute2f128_ps(r2, r3, 0x31));
  }
  // Compilers add this on the way out of optimized AVX code, but not at -O0 (the tests' build), and the linker keeps
  // one copy of an inline function for the whole program: without it, SSE code after a mask ran ~19x slower on this
  // Xeon (the ScalarDivisor sweep: 5 s -> 97 s), paying for the dirty upper halves of the vector registers.
  _mm256_zeroupper();
}

}  // namespace ember::philox_avx2
#endif
