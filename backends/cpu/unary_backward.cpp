// Fused backward steps of the common activations: one pass computing g * f'(x) instead of the 3-8 elementwise
// ops (each a full read and write) that autodiff would otherwise run. Autodiff uses this through the optional
// Backend op float_unary_backward; ops not listed here fall back to the generic composition.
#include <cmath>
#include <optional>
#include <type_traits>

#include "backends/cpu/gelu_avx512.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "backends/cpu/vec_math.hpp"
#include "backends/cpu/vector_clones.hpp"

namespace ember::cpu {
namespace {

// The float path uses the vectorizable approximations, the double path libm (it is the reference).
struct MathF {
  static float exp(float v) { return vm::exp(v); }
  static float erf(float v) { return vm::erf(v); }
  static float tanh(float v) { return vm::tanh(v); }
};
struct MathD {
  static double exp(double v) { return std::exp(v); }
  static double erf(double v) { return std::erf(v); }
  static double tanh(double v) { return std::tanh(v); }
};

// The float GELU step on restrict-qualified pointers, multi-versioned like elementwise.cpp's unary_f32, so that the
// compiler vectorizes vm::erf / vm::exp: through map3's lambda (pointers that may alias) it stayed scalar and took
// ~13 % of a small transformer's training step (bench/lm).
EMBER_CPU_CLONES
void gelu_backward_f32(const float* __restrict x, const float* __restrict g, float* __restrict o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float xv = x[i];
    const float cdf = 0.5f * (1.0f + vm::erf(xv * 0.70710678118654752440f));
    const float pdf = vm::exp(-0.5f * xv * xv) * 0.39894228040143267794f;
    o[i] = g[i] * (cdf + xv * pdf);
  }
}

// ReLU's step, vectorized by the compiler only through restrict pointers: a data-dependent branch per element
// (what map3's lambda compiled to) mispredicts on half of a layer's signs.
EMBER_CPU_CLONES
void relu_backward_f32(const float* __restrict x, const float* __restrict g, float* __restrict o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = x[i] > 0.0f ? g[i] : 0.0f;
}

template <class T, class F>
CpuTensor<T> map3(const CpuTensor<T>& x, const CpuTensor<T>& y, const CpuTensor<T>& g, F f) {
  CpuTensor<T> out(g.shape);
  const T *px = x.data(), *py = y.data(), *pg = g.data();
  T* po = out.data();
  parallel_for(g.numel(), kParallelThreshold, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) po[i] = f(px[i], py[i], pg[i]);
  });
  return out;
}

}  // namespace

// The GELU step over flat arrays (kernels.hpp): the eager op below and Fusion's GeluBackward instruction
// (fused_chain.cpp) both run it, so their gradients have the same bits.
template <class T>
void gelu_backward_span(const T* x, const T* g, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    if (gelu_avx512_usable()) gelu_backward_f32_avx512(x, g, out, n);
    else gelu_backward_f32(x, g, out, n);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const T xv = x[i];
      const T cdf = T(0.5) * (T(1) + MathD::erf(xv * T(0.70710678118654752440)));
      const T pdf = MathD::exp(T(-0.5) * xv * xv) * T(0.39894228040143267794);
      out[i] = g[i] * (cdf + xv * pdf);
    }
  }
}
template void gelu_backward_span<float>(const float*, const float*, float*, int64_t);
template void gelu_backward_span<double>(const double*, const double*, double*, int64_t);

template <class T>
void relu_backward_span(const T* x, const T* g, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    relu_backward_f32(x, g, out, n);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] > T(0) ? g[i] : T(0);
  }
}
template void relu_backward_span<float>(const float*, const float*, float*, int64_t);
template void relu_backward_span<double>(const double*, const double*, double*, int64_t);

// out[i] = kernel(x, g) over contiguous spans split over the pool: the kernels written on raw spans (vectorized
// without map3's lambda; see above).
namespace {
template <class T>
CpuTensor<T> over_spans(const CpuTensor<T>& x, const CpuTensor<T>& g,
                        void (*kernel)(const T*, const T*, T*, int64_t)) {
  CpuTensor<T> out(g.shape);
  const T *px = x.data(), *pg = g.data();
  T* po = out.data();
  parallel_for(g.numel(), kParallelThreshold, [&](int64_t b, int64_t e) { kernel(px + b, pg + b, po + b, e - b); });
  return out;
}
}  // namespace

template <class T>
std::optional<CpuTensor<T>> unary_backward(UnaryOp op, const CpuTensor<T>& x, const CpuTensor<T>& y,
                                           const CpuTensor<T>& g) {
  using M = std::conditional_t<std::is_same_v<T, float>, MathF, MathD>;
  switch (op) {
    case UnaryOp::Relu: return over_spans(x, g, relu_backward_span<T>);
    case UnaryOp::Exp: return map3(x, y, g, [](T, T yv, T gv) { return gv * yv; });
    case UnaryOp::Tanh: return map3(x, y, g, [](T, T yv, T gv) { return gv * (T(1) - yv * yv); });
    case UnaryOp::Sigmoid: return map3(x, y, g, [](T, T yv, T gv) { return gv * yv * (T(1) - yv); });
    case UnaryOp::Gelu: return over_spans(x, g, gelu_backward_span<T>);  // Phi(x) + x phi(x)
    case UnaryOp::GeluTanh:  // 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2), t = tanh(c (x + a x^3))
      return map3(x, y, g, [](T xv, T, T gv) {
        const T c = T(0.79788456080286535588), a = T(0.044715);
        const T t = M::tanh(c * (xv + a * xv * xv * xv));
        return gv * (T(0.5) * (T(1) + t) + T(0.5) * xv * (T(1) - t * t) * c * (T(1) + T(3) * a * xv * xv));
      });
    default: return std::nullopt;
  }
}

template std::optional<CpuTensor<float>> unary_backward<float>(UnaryOp, const CpuTensor<float>&,
                                                               const CpuTensor<float>&, const CpuTensor<float>&);
template std::optional<CpuTensor<double>> unary_backward<double>(UnaryOp, const CpuTensor<double>&,
                                                                 const CpuTensor<double>&, const CpuTensor<double>&);

}  // namespace ember::cpu
