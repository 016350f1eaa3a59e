// Unary, scalar and binary math for Float (f32) and Int (int64) tensors. Each op is its own functor so every
// kernel is straight-line code; the host switch picks the instantiation. Float math uses CUDA's accurate libdevice
// functions (no fast-math), within a few ulp of the CPU backend.
#include <string>

#include "backends/cuda/float_math.cuh"
#include "backends/cuda/int_math.cuh"
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/map.cuh"

namespace ember::cuda {
namespace {

template <UnaryOp Op>
struct FloatUnary {
  __device__ float operator()(float x) const { return unary_f32<Op>(x); }
};

template <UnaryOp Op>
struct IntUnary {
  __device__ int64_t operator()(int64_t x) const {
    if constexpr (Op == UnaryOp::Neg) return wrap_neg(x);
    else if constexpr (Op == UnaryOp::Abs) return x < 0 ? wrap_neg(x) : x;
    else return static_cast<int64_t>((x > 0) - (x < 0));  // Sign
  }
};

template <ScalarOp Op, class T>
struct ScalarFn {
  T c;
  __device__ T operator()(T v) const {
    if constexpr (std::is_same_v<T, float>) {
      return scalar_f32<Op>(v, c);
    } else {
      if constexpr (Op == ScalarOp::Add) return wrap_add(v, c);
      else if constexpr (Op == ScalarOp::Sub) return wrap_sub(v, c);
      else if constexpr (Op == ScalarOp::Mul) return wrap_mul(v, c);
      else if constexpr (Op == ScalarOp::Div) return int_div(v, c);
      else if constexpr (Op == ScalarOp::RSub) return wrap_sub(c, v);
      else if constexpr (Op == ScalarOp::RDiv) return int_div(c, v);
      else if constexpr (Op == ScalarOp::ClampMin) return v < c ? c : v;
      else if constexpr (Op == ScalarOp::ClampMax) return v > c ? c : v;
      else if constexpr (Op == ScalarOp::Remainder) return int_remainder(v, c);
      else return int_pow(v, c);  // Pow
    }
  }
};

struct Square {
  __device__ float operator()(float v) const { return v * v; }
};

template <BinaryOp Op, class T>
struct BinaryFn {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, float>) {
      return binary_f32<Op>(a, b);
    } else {
      if constexpr (Op == BinaryOp::Add) return wrap_add(a, b);
      else if constexpr (Op == BinaryOp::Sub) return wrap_sub(a, b);
      else if constexpr (Op == BinaryOp::Mul) return wrap_mul(a, b);
      else if constexpr (Op == BinaryOp::Div) return int_div(a, b);
      else if constexpr (Op == BinaryOp::Pow) return int_pow(a, b);
      else if constexpr (Op == BinaryOp::Max) return a > b ? a : b;
      else if constexpr (Op == BinaryOp::Min) return a < b ? a : b;
      else return int_remainder(a, b);  // Remainder (Atan2 is refused for Int before the launch)
    }
  }
};

// Sets flag[0] if any x[i] == 0.
__global__ void any_zero_kernel(const int64_t* __restrict__ x, int64_t n, unsigned long long* flag) {
  EMBER_CUDA_LOOP(i, n) {
    if (x[i] == 0) flag[0] = 1;
  }
}

// Integer division by zero throws on the CPU backend; check the divisors on the device the same way.
void check_no_zero(const Index& x, const char* op) {
  if (x.numel() == 0) return;
  DeviceContext& ctx = context(x.device());
  device_check(
      ctx,
      [&](unsigned long long* flag) {
        any_zero_kernel<<<grid_for(x.numel(), ctx), kThreads, 0, ctx.stream>>>(x.data(), x.numel(), flag);
        check_launch("any_zero_kernel");
      },
      [op](int64_t) { throw ArgumentError(std::string(op) + ": integer division by zero"); });
}

template <class T>
CudaTensor<T> scalar_op(const CudaTensor<T>& x, ScalarOp op, T c) {
  switch (op) {
    case ScalarOp::Add: return map1<T>(x, ScalarFn<ScalarOp::Add, T>{c});
    case ScalarOp::Sub: return map1<T>(x, ScalarFn<ScalarOp::Sub, T>{c});
    case ScalarOp::Mul: return map1<T>(x, ScalarFn<ScalarOp::Mul, T>{c});
    case ScalarOp::Div: return map1<T>(x, ScalarFn<ScalarOp::Div, T>{c});
    case ScalarOp::Pow: return map1<T>(x, ScalarFn<ScalarOp::Pow, T>{c});
    case ScalarOp::ClampMin: return map1<T>(x, ScalarFn<ScalarOp::ClampMin, T>{c});
    case ScalarOp::ClampMax: return map1<T>(x, ScalarFn<ScalarOp::ClampMax, T>{c});
    case ScalarOp::RSub: return map1<T>(x, ScalarFn<ScalarOp::RSub, T>{c});
    case ScalarOp::RDiv: return map1<T>(x, ScalarFn<ScalarOp::RDiv, T>{c});
    case ScalarOp::Remainder: return map1<T>(x, ScalarFn<ScalarOp::Remainder, T>{c});
  }
  throw ArgumentError("scalar: unknown op");
}

}  // namespace

template <class T>
CudaTensor<T> unary(const CudaTensor<T>& x, UnaryOp op) {
  if constexpr (std::is_same_v<T, float>) {
    switch (op) {
#define EMBER_CASE(OP) \
  case UnaryOp::OP: return map1<float>(x, FloatUnary<UnaryOp::OP>{});
      EMBER_CASE(Neg) EMBER_CASE(Abs) EMBER_CASE(Exp) EMBER_CASE(Log) EMBER_CASE(Log1p) EMBER_CASE(Sqrt)
      EMBER_CASE(Sin) EMBER_CASE(Cos) EMBER_CASE(Tanh) EMBER_CASE(Sigmoid) EMBER_CASE(Erf) EMBER_CASE(Recip)
      EMBER_CASE(Sign) EMBER_CASE(Floor) EMBER_CASE(Ceil) EMBER_CASE(Round) EMBER_CASE(Relu) EMBER_CASE(Gelu)
      EMBER_CASE(GeluTanh) EMBER_CASE(Asin) EMBER_CASE(Acos) EMBER_CASE(Atan) EMBER_CASE(Sinh) EMBER_CASE(Cosh)
      EMBER_CASE(Asinh) EMBER_CASE(Acosh) EMBER_CASE(Atanh)
#undef EMBER_CASE
    }
    throw ArgumentError("unary: unknown op");
  } else {
    switch (op) {
      case UnaryOp::Neg: return map1<T>(x, IntUnary<UnaryOp::Neg>{});
      case UnaryOp::Abs: return map1<T>(x, IntUnary<UnaryOp::Abs>{});
      case UnaryOp::Sign: return map1<T>(x, IntUnary<UnaryOp::Sign>{});
      default: break;
    }
    throw KindError("unary " + std::string(op_name(op)) + ": not defined for Int tensors");
  }
}

template <class T>
CudaTensor<T> scalar(const CudaTensor<T>& x, ScalarOp op, double s) {
  if constexpr (std::is_same_v<T, float>) {
    if (op == ScalarOp::Pow) {  // the CPU backend's exact shortcuts, so both agree bit for bit on these
      if (s == 2.0) return map1<float>(x, Square{});
      if (s == 1.0) return x;
      if (s == 0.5) return unary(x, UnaryOp::Sqrt);
      if (s == -1.0) return unary(x, UnaryOp::Recip);
    }
    return scalar_op<float>(x, op, static_cast<float>(s));
  } else {
    const int64_t c = static_cast<int64_t>(s);
    if ((op == ScalarOp::Div || op == ScalarOp::Remainder) && c == 0)
      throw ArgumentError(std::string(op_name(op)) + ": integer division by zero");
    if (op == ScalarOp::RDiv) check_no_zero(x, "div");
    return scalar_op<int64_t>(x, op, c);
  }
}

template <class T>
CudaTensor<T> binary(const CudaTensor<T>& a, const CudaTensor<T>& b, BinaryOp op) {
  if constexpr (std::is_same_v<T, int64_t>) {
    if (!op_takes_int(op)) throw KindError(std::string(op_name(op)) + ": not defined for Int tensors");
    if ((op == BinaryOp::Div || op == BinaryOp::Remainder) && a.numel() > 0) {
      // Every divisor is used unless the broadcast output is empty.
      if (broadcast_shapes(op_name(op), a.shape, b.shape).num_elements() > 0) check_no_zero(b, op_name(op));
    }
  }
  switch (op) {
    case BinaryOp::Add: return map2<T>(a, b, BinaryFn<BinaryOp::Add, T>{}, "add");
    case BinaryOp::Sub: return map2<T>(a, b, BinaryFn<BinaryOp::Sub, T>{}, "sub");
    case BinaryOp::Mul: return map2<T>(a, b, BinaryFn<BinaryOp::Mul, T>{}, "mul");
    case BinaryOp::Div: return map2<T>(a, b, BinaryFn<BinaryOp::Div, T>{}, "div");
    case BinaryOp::Pow: return map2<T>(a, b, BinaryFn<BinaryOp::Pow, T>{}, "pow");
    case BinaryOp::Max: return map2<T>(a, b, BinaryFn<BinaryOp::Max, T>{}, "maximum");
    case BinaryOp::Min: return map2<T>(a, b, BinaryFn<BinaryOp::Min, T>{}, "minimum");
    case BinaryOp::Atan2:
      if constexpr (std::is_same_v<T, float>) return map2<T>(a, b, BinaryFn<BinaryOp::Atan2, T>{}, "atan2");
      break;
    case BinaryOp::Remainder: return map2<T>(a, b, BinaryFn<BinaryOp::Remainder, T>{}, "remainder");
  }
  throw ArgumentError("binary: unknown op");
}

template CudaTensor<float> unary<float>(const CudaTensor<float>&, UnaryOp);
template CudaTensor<int64_t> unary<int64_t>(const CudaTensor<int64_t>&, UnaryOp);
template CudaTensor<float> scalar<float>(const CudaTensor<float>&, ScalarOp, double);
template CudaTensor<int64_t> scalar<int64_t>(const CudaTensor<int64_t>&, ScalarOp, double);
template CudaTensor<float> binary<float>(const CudaTensor<float>&, const CudaTensor<float>&, BinaryOp);
template CudaTensor<int64_t> binary<int64_t>(const CudaTensor<int64_t>&, const CudaTensor<int64_t>&, BinaryOp);

}  // namespace ember::cuda
