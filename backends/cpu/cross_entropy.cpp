// Fused cross entropy on the CPU. The composed default (log_softmax, gather, neg: a max, two subtractions, an exp,
// a sum and a log forward; a scatter for the one-hot and four elementwise ops backward) allocates and walks the
// [N, C] logits ~6 times each way and records as many autodiff nodes; for a classifier's [64, 10] logits those
// fixed costs were a few percent of a whole MLP training step. Here each row is read twice forward (its max, then
// the sum of exp(x - max)) and once backward, rows split over threads.
//
// The exp is the one the CPU's float_unary uses (vec_math.hpp for f32, libm for f64); the row loops are compiled
// for AVX-512, AVX2 and baseline x86-64 like layer_norm.cpp's.
#include "backends/cpu/cross_entropy.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include <fmt/format.h>

#include "backends/cpu/lane_sum.hpp"
#include "backends/cpu/parallel.hpp"
#include "backends/cpu/vec_math.hpp"
#include "backends/cpu/vector_clones.hpp"
#include "engine/tensor/error.hpp"

namespace ember::cpu {
namespace {

template <class T>
[[gnu::always_inline]] inline T fexp(T x) {
  if constexpr (std::is_same_v<T, float>) return vm::exp(x);
  else return std::exp(x);
}

template <class T>
EMBER_CPU_CLONES void forward_rows(const T* __restrict x, const int64_t* __restrict t, T* __restrict loss,
                                   T* __restrict lse, int64_t r0, int64_t r1, int64_t c) {
  for (int64_t r = r0; r < r1; ++r) {
    const T* __restrict xr = x + r * c;
    const T m = lane_max(xr, c);
    const T ls = std::log(lane_sum<T>(c, [&](int64_t j) { return fexp(xr[j] - m); }));
    // -(log_softmax's (x_t - m) - ls), the composed default's rounding.
    loss[r] = ls - (xr[t[r]] - m);
    lse[r] = m + ls;
  }
}

template <class T>
EMBER_CPU_CLONES void backward_rows(const T* __restrict x, const int64_t* __restrict t, const T* __restrict lse,
                                    const T* __restrict g, T* __restrict dx, int64_t r0, int64_t r1, int64_t c) {
  for (int64_t r = r0; r < r1; ++r) {
    const T* __restrict xr = x + r * c;
    T* __restrict dr = dx + r * c;
    const T l = lse[r], gr = g[r];
    for (int64_t j = 0; j < c; ++j) dr[j] = fexp(xr[j] - l) * gr;
    dr[t[r]] = (fexp(xr[t[r]] - l) - T(1)) * gr;  // (softmax - one_hot) * g
  }
}

void check(const Shape& logits, const CpuTensor<int64_t>& targets) {
  if (logits.rank() != 2 || targets.shape.rank() != 1 || targets.shape[0] != logits[0])
    throw ShapeError(fmt::format("cross_entropy: logits {} and targets {} must be [N, C] and [N]",
                                 logits.to_string(), targets.shape.to_string()));
  const int64_t classes = logits[1];
  for (const int64_t v : targets.span())
    if (v < 0 || v >= classes) throw IndexError(fmt::format("cross_entropy: target class out of range [0, {})", classes));
}

int64_t row_grain(int64_t c) { return std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(1, c)); }

}  // namespace

template <class T>
CrossEntropyForward<CpuTensor<T>> cross_entropy_forward(const CpuTensor<T>& logits, const CpuTensor<int64_t>& targets) {
  check(logits.shape, targets);
  const int64_t n = logits.shape[0], c = logits.shape[1];
  CrossEntropyForward<CpuTensor<T>> r{CpuTensor<T>(Shape{n}), CpuTensor<T>(Shape{n})};
  if (n == 0) return r;
  const T* px = logits.data();
  const int64_t* pt = targets.data();
  T *pl = r.loss.data(), *ps = r.lse.data();
  parallel_for(n, row_grain(c), [&](int64_t lo, int64_t hi) { forward_rows<T>(px, pt, pl, ps, lo, hi, c); });
  return r;
}

template <class T>
CpuTensor<T> cross_entropy_backward(const CpuTensor<T>& logits, const CpuTensor<int64_t>& targets,
                                    const CpuTensor<T>& lse, const CpuTensor<T>& g) {
  check(logits.shape, targets);
  const int64_t n = logits.shape[0], c = logits.shape[1];
  CpuTensor<T> dx(logits.shape);
  const T *px = logits.data(), *ps = lse.data(), *pg = g.data();
  const int64_t* pt = targets.data();
  T* pd = dx.data();
  parallel_for(n, row_grain(c), [&](int64_t lo, int64_t hi) { backward_rows<T>(px, pt, ps, pg, pd, lo, hi, c); });
  return dx;
}

template CrossEntropyForward<CpuTensor<float>> cross_entropy_forward<float>(const CpuTensor<float>&,
                                                                            const CpuTensor<int64_t>&);
template CrossEntropyForward<CpuTensor<double>> cross_entropy_forward<double>(const CpuTensor<double>&,
                                                                              const CpuTensor<int64_t>&);
template CpuTensor<float> cross_entropy_backward<float>(const CpuTensor<float>&, const CpuTensor<int64_t>&,
                                                        const CpuTensor<float>&, const CpuTensor<float>&);
template CpuTensor<double> cross_entropy_backward<double>(const CpuTensor<double>&, const CpuTensor<int64_t>&,
                                                          const CpuTensor<double>&, const CpuTensor<double>&);

}  // namespace ember::cpu
