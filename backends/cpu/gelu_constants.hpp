#pragma once
// The f32 constants of GELU's erf and exp (vec_math.hpp's coefficients), shared by the AVX-512 kernels
// (gelu_avx512.cpp) and the fused chains' code generator (fused_jit.cpp), which must emit the very same arithmetic:
// a fused chain is bit-identical to the eager ops.
namespace ember::cpu::gelu_constants {

inline constexpr float kErfClamp = 4.0f;  // |x| where erf rounds to +-1
// erf(x) = x P(x^2) / Q(x^2), P highest degree first
inline constexpr float kErfP[7] = {-2.72614225801306e-10f, 2.77068142495902e-08f,  -2.10102402082508e-06f,
                                   -5.69250639462346e-05f, -7.34990630326855e-04f, -2.95459980854025e-03f,
                                   -1.60960333262415e-02f};
inline constexpr float kErfQ[5] = {-1.45660718464996e-05f, -2.13374055278905e-04f, -1.68282697438203e-03f,
                                   -7.37332916720468e-03f, -1.42647390514189e-02f};
inline constexpr float kSqrtHalf = 0.70710678118654752440f;   // 1 / sqrt 2
inline constexpr float kInvSqrt2Pi = 0.39894228040143267794f;  // 1 / sqrt(2 pi)
// exp(t): t clamped below at kExpLo (where vm::exp flushes to 0), n = round(t log2 e), r = t - n ln2 in two parts,
// exp(r) by a degree-6 polynomial (Cephes), highest degree first, then 2^n.
inline constexpr float kExpLo = -87.3365448f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr float kExpP[6] = {1.9875691500E-4f, 1.3981999507E-3f, 8.3334519073E-3f,
                                   4.1665795894E-2f, 1.6666665459E-1f, 5.0000001201E-1f};

}  // namespace ember::cpu::gelu_constants
