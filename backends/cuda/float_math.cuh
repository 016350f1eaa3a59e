#pragma once
// The f32 math of the elementwise ops, one device function per op family: the eager kernels (elementwise.cu,
// fused.cu) call these, and so does every fused chain NVRTC compiles at run time (fused_chain_cuda.cpp embeds this
// file's text in each chain's source), so a fused chain computes each op with the eager op's formula.
//
// Compiled by nvcc and by NVRTC. Under NVRTC nothing is included (it has no host headers; its math functions are
// built in): the chain's source declares the op enums first, generated from engine/backend/ops.def. Float math uses
// CUDA's accurate libdevice functions (no fast-math), within a few ulp of the CPU backend.
#ifndef __CUDACC_RTC__
#include "engine/backend/ops.hpp"
#endif

namespace ember::cuda {

// torch.remainder for floats: the exact fmod moved into the divisor's sign (the CPU backend's formula).
__host__ __device__ __forceinline__ float float_remainder(float a, float b) {
  float r = fmodf(a, b);
  if (r != 0.0f && ((b < 0.0f) != (r < 0.0f))) r += b;
  return r;
}

template <UnaryOp Op>
__device__ __forceinline__ float unary_f32(float x) {
  if constexpr (Op == UnaryOp::Neg) return -x;
  else if constexpr (Op == UnaryOp::Abs) return fabsf(x);
  else if constexpr (Op == UnaryOp::Exp) return expf(x);
  else if constexpr (Op == UnaryOp::Log) return logf(x);
  else if constexpr (Op == UnaryOp::Log1p) return log1pf(x);
  else if constexpr (Op == UnaryOp::Sqrt) return sqrtf(x);
  else if constexpr (Op == UnaryOp::Sin) return sinf(x);
  else if constexpr (Op == UnaryOp::Cos) return cosf(x);
  else if constexpr (Op == UnaryOp::Tanh) return tanhf(x);
  else if constexpr (Op == UnaryOp::Sigmoid) return 1.0f / (1.0f + expf(-x));
  else if constexpr (Op == UnaryOp::Erf) return erff(x);
  else if constexpr (Op == UnaryOp::Recip) return 1.0f / x;
  else if constexpr (Op == UnaryOp::Sign) return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);  // keeps NaN, -0
  else if constexpr (Op == UnaryOp::Floor) return floorf(x);
  else if constexpr (Op == UnaryOp::Ceil) return ceilf(x);
  else if constexpr (Op == UnaryOp::Round) return rintf(x);  // half to even, like PyTorch
  else if constexpr (Op == UnaryOp::Relu) return x < 0.0f ? 0.0f : x;  // NaN passes through
  else if constexpr (Op == UnaryOp::Gelu) return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  else if constexpr (Op == UnaryOp::GeluTanh)
    return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
  else if constexpr (Op == UnaryOp::Asin) return asinf(x);
  else if constexpr (Op == UnaryOp::Acos) return acosf(x);
  else if constexpr (Op == UnaryOp::Atan) return atanf(x);
  else if constexpr (Op == UnaryOp::Sinh) return sinhf(x);
  else if constexpr (Op == UnaryOp::Cosh) return coshf(x);
  else if constexpr (Op == UnaryOp::Asinh) return asinhf(x);
  else if constexpr (Op == UnaryOp::Acosh) return acoshf(x);
  else return atanhf(x);  // Atanh
}

// v (op) c.
template <ScalarOp Op>
__device__ __forceinline__ float scalar_f32(float v, float c) {
  if constexpr (Op == ScalarOp::Add) return v + c;
  else if constexpr (Op == ScalarOp::Sub) return v - c;
  else if constexpr (Op == ScalarOp::Mul) return v * c;
  else if constexpr (Op == ScalarOp::Div) return v / c;
  else if constexpr (Op == ScalarOp::RSub) return c - v;
  else if constexpr (Op == ScalarOp::RDiv) return c / v;
  else if constexpr (Op == ScalarOp::ClampMin) return v < c ? c : v;  // NaN passes through
  else if constexpr (Op == ScalarOp::ClampMax) return v > c ? c : v;
  else if constexpr (Op == ScalarOp::Remainder) return float_remainder(v, c);
  else return powf(v, c);  // Pow
}

template <BinaryOp Op>
__device__ __forceinline__ float binary_f32(float a, float b) {
  if constexpr (Op == BinaryOp::Add) return a + b;
  else if constexpr (Op == BinaryOp::Sub) return a - b;
  else if constexpr (Op == BinaryOp::Mul) return a * b;
  else if constexpr (Op == BinaryOp::Div) return a / b;
  else if constexpr (Op == BinaryOp::Pow) return powf(a, b);
  else if constexpr (Op == BinaryOp::Max) return (a != a || a > b) ? a : b;  // NaN propagates
  else if constexpr (Op == BinaryOp::Min) return (a != a || a < b) ? a : b;
  else if constexpr (Op == BinaryOp::Atan2) return atan2f(a, b);
  else return float_remainder(a, b);  // Remainder
}

// g * f'(x) for y = f(x): the fused backward step of the activations fused.cu has kernels for.
template <UnaryOp Op>
__device__ __forceinline__ float activation_grad(float x, float y, float g) {
  if constexpr (Op == UnaryOp::Relu) return x > 0.0f ? g : 0.0f;
  else if constexpr (Op == UnaryOp::Exp) return g * y;
  else if constexpr (Op == UnaryOp::Tanh) return g * (1.0f - y * y);
  else if constexpr (Op == UnaryOp::Sigmoid) return g * y * (1.0f - y);
  else if constexpr (Op == UnaryOp::Gelu) {  // Phi(x) + x phi(x)
    const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
    const float pdf = expf(-0.5f * x * x) * 0.39894228040143267794f;
    return g * (cdf + x * pdf);
  } else {  // GeluTanh: 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2), t = tanh(c (x + a x^3))
    const float c = 0.79788456080286535588f, a = 0.044715f;
    const float t = tanhf(c * (x + a * x * x * x));
    return g * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * c * (1.0f + 3.0f * a * x * x));
  }
}

}  // namespace ember::cuda
