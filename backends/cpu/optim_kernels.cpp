// Fused optimizer updates. Adam composed from tensor ops reads and writes the whole parameter ~12 times per step;
// this does it in one pass, with the same operation order as engine/optim/adam.hpp so results match it.
#include "backends/cpu/denormals.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/parallel.hpp"

#include <cmath>

namespace ember::cpu {

namespace {

// The branches are template parameters so that each variant's loop vectorizes (sqrt and division per element
// would otherwise run at scalar speed).
template <class T, int kDecay, bool kFirst>  // kDecay: 0 none, 1 L2 (Adam), 2 decoupled (AdamW)
void adam_loop(int64_t b, int64_t e, const T* __restrict pw, const T* __restrict pg, const T* __restrict pm,
               const T* __restrict pv, T* __restrict ow, T* __restrict om, T* __restrict ov, T decay, T wd, T one_b1,
               T b2, T one_b2, T sqrt_bc2, T eps, T step) {
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
      mi = pm[i] + (gi - pm[i]) * one_b1;
      vi = pv[i] * b2 + gg;
    }
    const T denom = std::sqrt(vi) / sqrt_bc2 + eps;
    om[i] = mi;
    ov[i] = vi;
    ow[i] = wi - mi / denom * step;
  }
}

}  // namespace

template <class T>
AdamStepResult<CpuTensor<T>> adam_step(const CpuTensor<T>& w, const CpuTensor<T>& g, const CpuTensor<T>* m,
                                       const CpuTensor<T>* v, const AdamStepArgs& a) {
  AdamStepResult<CpuTensor<T>> r{CpuTensor<T>(w.shape), CpuTensor<T>(w.shape), CpuTensor<T>(w.shape)};
  const T decay = static_cast<T>(1 - a.lr * a.weight_decay), wd = static_cast<T>(a.weight_decay);
  const T one_b1 = static_cast<T>(1 - a.beta1), b2 = static_cast<T>(a.beta2), one_b2 = static_cast<T>(1 - a.beta2);
  const T sqrt_bc2 = static_cast<T>(std::sqrt(a.bias_correction2)), eps = static_cast<T>(a.eps);
  const T step = static_cast<T>(a.lr / a.bias_correction1);
  const int mode = a.weight_decay == 0 ? 0 : (a.decoupled ? 2 : 1);
  const bool first = m == nullptr || v == nullptr;
  const T *pw = w.data(), *pg = g.data(), *pm = first ? nullptr : m->data(), *pv = first ? nullptr : v->data();
  T *ow = r.param.data(), *om = r.exp_avg.data(), *ov = r.exp_avg_sq.data();
  parallel_for(w.numel(), kParallelThreshold, [&](int64_t b, int64_t e) {
    const FlushDenormals ftz;  // per worker thread: MXCSR is thread state (denormals.hpp says why)
    auto run = [&](auto loop) { loop(b, e, pw, pg, pm, pv, ow, om, ov, decay, wd, one_b1, b2, one_b2, sqrt_bc2, eps, step); };
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
