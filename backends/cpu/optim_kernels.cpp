// Fused optimizer updates. Adam composed from tensor ops reads and writes the whole parameter ~12 times per step;
// this does it in one pass, with the same operation order as engine/optim/adam.hpp so results match it.
#include "backends/cpu/denormals.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "backends/cpu/scalar_divisor.hpp"
#include "backends/cpu/vector_clones.hpp"

#include <cmath>
#include <type_traits>

namespace ember::cpu {

namespace {

// The branches are template parameters so that each variant's loop vectorizes (sqrt and division per element
// would otherwise run at scalar speed). f32 divides by sqrt(bias_correction2) with ScalarDivisor: the same bits
// without the divider, which bounds this loop (the digits MLP epoch went from 7.87-7.92 to 7.68-7.75 ms here). f64 is
// not hot and keeps the division (its baseline build has no FMA instruction).
template <class T, int kDecay, bool kFirst>  // kDecay: 0 none, 1 L2 (Adam), 2 decoupled (AdamW)
[[gnu::always_inline]] inline void adam_loop(int64_t b, int64_t e, const T* __restrict pw, const T* __restrict pg,
                                             const T* __restrict pm, const T* __restrict pv, T* __restrict ow,
                                             T* __restrict om, T* __restrict ov, T decay, T wd, T b1, T one_b1, T b2,
                                             T one_b2, T sqrt_bc2, T eps, T step) {
  [[maybe_unused]] const ScalarDivisor<T> by_sqrt_bc2(sqrt_bc2);
  for (int64_t i = b; i < e; ++i) {
    T wi = pw[i], gi = pg[i];
    if constexpr (kDecay == 2) wi = wi * decay;
    if constexpr (kDecay == 1) gi = gi + wi * wd;
    T mi, vi;
    const T gg = gi * gi * one_b2;
    if constexpr (kFirst) {
      mi = gi * one_b1;
      vi = gg;
    } else {
      mi = pm[i] * b1 + gi * one_b1;
      vi = pv[i] * b2 + gg;
    }
    T denom;
    if constexpr (std::is_same_v<T, float>) denom = by_sqrt_bc2.divide(std::sqrt(vi)) + eps;
    else denom = std::sqrt(vi) / sqrt_bc2 + eps;
    om[i] = mi;
    ov[i] = vi;
    ow[i] = wi - mi / denom * step;
  }
}

// The f32 loops compiled for AVX-512, AVX2 and baseline x86-64 and picked at load time (as elementwise.cpp's unary
// loops): the per-element sqrt and division ran 4 wide on baseline SSE, 16% of the digits MLP epoch. Contraction
// into FMAs is off so every clone rounds as the baseline and the composed Adam do (optional_ops_test compares them);
// ScalarDivisor's FMAs are explicit. An AVX2-only build of this loop measured 1-2 % slower on the epoch than AVX-512
// here (Zen 4, whose divider runs 512-bit vectors as two halves), so both clones stay.
EMBER_CPU_CLONES_NO_CONTRACT
void adam_loop_f32(int mode, bool first, int64_t b, int64_t e, const float* __restrict pw, const float* __restrict pg,
                   const float* __restrict pm, const float* __restrict pv, float* __restrict ow, float* __restrict om,
                   float* __restrict ov, float decay, float wd, float b1, float one_b1, float b2, float one_b2,
                   float sqrt_bc2, float eps, float step) {
  auto run = [&](auto loop) {
    loop(b, e, pw, pg, pm, pv, ow, om, ov, decay, wd, b1, one_b1, b2, one_b2, sqrt_bc2, eps, step);
  };
  if (first) {
    if (mode == 0) run(adam_loop<float, 0, true>);
    else if (mode == 1) run(adam_loop<float, 1, true>);
    else run(adam_loop<float, 2, true>);
  } else {
    if (mode == 0) run(adam_loop<float, 0, false>);
    else if (mode == 1) run(adam_loop<float, 1, false>);
    else run(adam_loop<float, 2, false>);
  }
}

}  // namespace

template <class T>
AdamStepResult<CpuTensor<T>> adam_step(const CpuTensor<T>& w, const CpuTensor<T>& g, const CpuTensor<T>* m,
                                       const CpuTensor<T>* v, const AdamStepArgs& a) {
  AdamStepResult<CpuTensor<T>> r{CpuTensor<T>(w.shape), CpuTensor<T>(w.shape), CpuTensor<T>(w.shape)};
  const T decay = static_cast<T>(1 - a.lr * a.weight_decay), wd = static_cast<T>(a.weight_decay);
  const T b1 = static_cast<T>(a.beta1), one_b1 = static_cast<T>(1 - a.beta1), b2 = static_cast<T>(a.beta2),
          one_b2 = static_cast<T>(1 - a.beta2);
  const T sqrt_bc2 = static_cast<T>(std::sqrt(a.bias_correction2)), eps = static_cast<T>(a.eps);
  const T step = static_cast<T>(a.lr / a.bias_correction1);
  const int mode = a.weight_decay == 0 ? 0 : (a.decoupled ? 2 : 1);
  const bool first = m == nullptr || v == nullptr;
  const T *pw = w.data(), *pg = g.data(), *pm = first ? nullptr : m->data(), *pv = first ? nullptr : v->data();
  T *ow = r.param.data(), *om = r.exp_avg.data(), *ov = r.exp_avg_sq.data();
  parallel_for(w.numel(), kParallelThreshold, [&](int64_t b, int64_t e) {
    const FlushDenormals ftz;  // per worker thread: MXCSR is thread state (denormals.hpp says why)
    if constexpr (std::is_same_v<T, float>) {
      adam_loop_f32(mode, first, b, e, pw, pg, pm, pv, ow, om, ov, decay, wd, b1, one_b1, b2, one_b2, sqrt_bc2, eps,
                    step);
      return;
    }
    auto run = [&](auto loop) {
      loop(b, e, pw, pg, pm, pv, ow, om, ov, decay, wd, b1, one_b1, b2, one_b2, sqrt_bc2, eps, step);
    };
    if (first) {
      if (mode == 0) run(adam_loop<T, 0, true>);
      else if (mode == 1) run(adam_loop<T, 1, true>);
      else run(adam_loop<T, 2, true>);
    } else {
      if (mode == 0) run(adam_loop<T, 0, false>);
      else if (mode == 1) run(adam_loop<T, 1, false>);
      else run(adam_loop<T, 2, false>);
    }
  });
  return r;
}

template AdamStepResult<CpuTensor<float>> adam_step<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                                           const CpuTensor<float>*, const CpuTensor<float>*,
                                                           const AdamStepArgs&);
template AdamStepResult<CpuTensor<double>> adam_step<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                                             const CpuTensor<double>*, const CpuTensor<double>*,
                                                             const AdamStepArgs&);

}  // namespace ember::cpu
