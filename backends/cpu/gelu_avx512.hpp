#pragma once
// GELU (exact, erf form) and its backward step for f32 in AVX-512 intrinsics. elementwise.cpp's unary_f32 and
// unary_backward.cpp's gelu_backward_span ask these first, so the eager ops and Fusion's chains (which run tiles
// through those same functions) keep computing the same bits as each other.
//
// Why not the compiler's vectorization of vec_math.hpp: GCC if-converts vm::erf's and vm::exp's clamps and selects
// into masked copies of the polynomials, and GELU's backward came to ~85 512-bit ops per 16 elements. Here the
// clamps are min / max, exp's 2^n is one vscalefps and erf's tiny-argument branch is left out (it cannot change
// 1 + erf(x)), ~40 ops: 273 -> 175 us for the backward over 262 144 floats in L1 on one Emerald Rapids core, 121 -> 88
// us for the forward (2026-11-29, bench/README.md). Same coefficients as vec_math.hpp: the forward has the bits of its
// AVX-512 clone (one exact division, the same FMAs); the backward differs from it in the last bits where exp's
// contraction does (within the ulp bounds of tests/ops/elementwise_approx_test.cpp).
//
// Tails are done with masked loads and stores in the same arithmetic, so an element's result does not depend on
// where a span starts or ends (the fused chains' tiles and the eager ops' thread ranges cut arrays differently).
#include <cstdint>

namespace ember::cpu {

// True when built for x86-64, the CPU has AVX-512F, and it is not turned off (set_gelu_avx512(false): the
// tests check the portable path on the same machine).
bool gelu_avx512_usable();
void set_gelu_avx512(bool on);

// y = x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)).
void gelu_f32_avx512(const float* x, float* y, int64_t n);
// out = g (Phi(x) + x phi(x)).
void gelu_backward_f32_avx512(const float* x, const float* g, float* out, int64_t n);

}  // namespace ember::cpu
