#pragma once
// Flush-to-zero / denormals-are-zero for one kernel's loop, restored on scope exit.
//
// Why: Adam's first moment of a parameter whose gradient stays 0 (a dead ReLU unit's weights) decays by beta1 = 0.9
// per step and reaches the float denormal range (< 1.2e-38) after ~800 steps. Every multiply on a denormal then
// takes a microcode assist (~100+ cycles), and the digits MLP epoch measured 2.5x slower after a few dozen epochs
// than in its first ones (bench/README.md, "h-gemm"). A denormal moment's contribution to the update,
// m / (sqrt(v) + eps) * lr with eps >= 1e-8, is below 1e-30: far under one ulp of any weight it is added to, so
// flushing it changes no result that the tests or the pinned training losses can see.
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace ember::cpu {

class FlushDenormals {
 public:
#if defined(__SSE__) || defined(__x86_64__)
  // MXCSR bit 15 is FTZ (denormal results become 0), bit 6 DAZ (denormal operands read as 0); AVX-512 obeys both.
  static constexpr unsigned kFtzDaz = 0x8040u;
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFtzDaz); }
  ~FlushDenormals() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#else
  FlushDenormals() = default;  // other architectures: the loop runs with the thread's own mode
#endif
 public:
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;
};

}  // namespace ember::cpu
