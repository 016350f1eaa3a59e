// Elementwise kernels: unary, scalar, binary (NumPy broadcasting), comparisons and Bool logic.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <type_traits>

#include "backends/cpu/gelu_avx512.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/strided.hpp"
#include "backends/cpu/vec_math.hpp"
#include "backends/cpu/vector_clones.hpp"
#include "engine/tensor/error.hpp"

namespace ember::cpu {
namespace {

template <class T>
constexpr bool is_float = std::is_floating_point_v<T>;

// Applies f over a flat range, in parallel when large. f(begin, end).
template <class F>
void flat(int64_t n, F&& f) {
  parallel_for(n, kParallelThreshold, f);
}

// Scalar reference for every unary op (double, and float ops without a vector form).
template <class T>
T unary_scalar(UnaryOp op, T x) {
  if constexpr (is_float<T>) {
    switch (op) {
      case UnaryOp::Neg: return -x;
      case UnaryOp::Abs: return std::fabs(x);
      case UnaryOp::Exp: return std::exp(x);
      case UnaryOp::Log: return std::log(x);
      case UnaryOp::Log1p: return std::log1p(x);
      case UnaryOp::Sqrt: return std::sqrt(x);
      case UnaryOp::Sin: return std::sin(x);
      case UnaryOp::Cos: return std::cos(x);
      case UnaryOp::Tanh: return std::tanh(x);
      case UnaryOp::Sigmoid: return T(1) / (T(1) + std::exp(-x));
      case UnaryOp::Erf: return std::erf(x);
      case UnaryOp::Recip: return T(1) / x;
      case UnaryOp::Sign: return x > 0 ? T(1) : (x < 0 ? T(-1) : x);  // keeps NaN and signed zero
      case UnaryOp::Floor: return std::floor(x);
      case UnaryOp::Ceil: return std::ceil(x);
      case UnaryOp::Round: return std::nearbyint(x);  // half to even, like PyTorch
      case UnaryOp::Relu: return x < 0 ? T(0) : x;   // NaN passes through
      case UnaryOp::Gelu: return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
      case UnaryOp::GeluTanh:
        return T(0.5) * x * (T(1) + std::tanh(T(0.79788456080286535588) * (x + T(0.044715) * x * x * x)));
      case UnaryOp::Asin: return std::asin(x);
      case UnaryOp::Acos: return std::acos(x);
      case UnaryOp::Atan: return std::atan(x);
      case UnaryOp::Sinh: return std::sinh(x);
      case UnaryOp::Cosh: return std::cosh(x);
      case UnaryOp::Asinh: return std::asinh(x);
      case UnaryOp::Acosh: return std::acosh(x);
      case UnaryOp::Atanh: return std::atanh(x);
    }
  } else {
    switch (op) {
      // Unsigned arithmetic: negating INT64_MIN wraps (to itself) instead of being UB.
      case UnaryOp::Neg: return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(x));
      case UnaryOp::Abs:
        return x < 0 ? static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(x)) : x;
      case UnaryOp::Sign: return static_cast<T>((x > 0) - (x < 0));
      default: break;
    }
  }
  throw KindError(fmt::format("unary {}: not defined for Int tensors", op_name(op)));
}

// Float unary loops, compiled for AVX-512, AVX2+FMA and baseline x86-64 and picked at load time (vector_clones.hpp),
// so the transcendental ops run at vector speed on any x86-64 machine without -march=native.
EMBER_CPU_CLONES
void unary_f32(UnaryOp op, const float* __restrict x, float* __restrict y, int64_t n) {
  switch (op) {
    case UnaryOp::Neg: for (int64_t i = 0; i < n; ++i) y[i] = -x[i]; return;
    case UnaryOp::Abs: for (int64_t i = 0; i < n; ++i) y[i] = std::fabs(x[i]); return;
    case UnaryOp::Exp: for (int64_t i = 0; i < n; ++i) y[i] = vm::exp(x[i]); return;
    case UnaryOp::Sqrt: for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]); return;
    case UnaryOp::Tanh: for (int64_t i = 0; i < n; ++i) y[i] = vm::tanh(x[i]); return;
    case UnaryOp::Sigmoid: for (int64_t i = 0; i < n; ++i) y[i] = vm::sigmoid(x[i]); return;
    case UnaryOp::Erf: for (int64_t i = 0; i < n; ++i) y[i] = vm::erf(x[i]); return;
    case UnaryOp::Recip: for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / x[i]; return;
    case UnaryOp::Floor: for (int64_t i = 0; i < n; ++i) y[i] = std::floor(x[i]); return;
    case UnaryOp::Ceil: for (int64_t i = 0; i < n; ++i) y[i] = std::ceil(x[i]); return;
    case UnaryOp::Round: for (int64_t i = 0; i < n; ++i) y[i] = std::nearbyint(x[i]); return;
    case UnaryOp::Relu: for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i]; return;
    case UnaryOp::Gelu:
      if (gelu_avx512_usable()) return gelu_f32_avx512(x, y, n);
      for (int64_t i = 0; i < n; ++i) y[i] = vm::gelu(x[i]);
      return;
    case UnaryOp::GeluTanh: for (int64_t i = 0; i < n; ++i) y[i] = vm::gelu_tanh(x[i]); return;
    default: for (int64_t i = 0; i < n; ++i) y[i] = unary_scalar(op, x[i]); return;
  }
}

// torch.remainder for floats: the exact fmod, moved into the divisor's sign (PyTorch's CPU kernel does the same;
// a - floor(a / b) * b would round).
template <class T>
T float_remainder(T a, T b) {
  T r = std::fmod(a, b);
  if (r != 0 && ((b < 0) != (r < 0))) r += b;
  return r;
}

// +, -, *; for ints modulo 2^64 (two's complement wrap, what PyTorch's int ops give), where a plain signed
// overflow is undefined behaviour.
template <class T>
T add_of(T a, T b) {
  if constexpr (is_float<T>) return a + b;
  else return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <class T>
T sub_of(T a, T b) {
  if constexpr (is_float<T>) return a - b;
  else return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <class T>
T mul_of(T a, T b) {
  if constexpr (is_float<T>) return a * b;
  else return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

template <class T>
T scalar_apply(ScalarOp op, T x, T s) {
  switch (op) {
    case ScalarOp::Add: return add_of(x, s);
    case ScalarOp::Sub: return sub_of(x, s);
    case ScalarOp::Mul: return mul_of(x, s);
    case ScalarOp::Div: return x / s;
    case ScalarOp::RSub: return sub_of(s, x);
    case ScalarOp::RDiv: return s / x;
    case ScalarOp::Pow: return static_cast<T>(std::pow(x, s));
    case ScalarOp::ClampMin: return x < s ? s : x;  // NaN passes through
    case ScalarOp::ClampMax: return x > s ? s : x;
    case ScalarOp::Remainder:
      if constexpr (is_float<T>) return float_remainder(x, s);
      break;  // ints: scalar() runs int_remainder itself
  }
  return x;
}

// Two's-complement negation without UB: INT64_MIN stays INT64_MIN (what PyTorch returns).
int64_t wrapping_neg(int64_t a) { return static_cast<int64_t>(0ull - static_cast<uint64_t>(a)); }

int64_t int_div(int64_t a, int64_t b, const char* op) {
  if (b == 0) throw ArgumentError(std::string(op) + ": integer division by zero");
  if (b == -1) return wrapping_neg(a);  // INT64_MIN / -1 traps (SIGFPE) on x86
  return a / b;  // truncates toward zero, like C++ and Rust
}

// torch.remainder for ints: the sign of the divisor. b == -1 is special-cased like int_div (INT64_MIN % -1 traps).
int64_t int_remainder(int64_t a, int64_t b, const char* op) {
  if (b == 0) throw ArgumentError(std::string(op) + ": integer division by zero");
  if (b == -1) return 0;
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

int64_t int_pow(int64_t base, int64_t exp) {
  if (exp < 0) return base == 1 ? 1 : (base == -1 ? (exp % 2 ? -1 : 1) : 0);
  // Unsigned arithmetic: results that overflow wrap (two's complement, as PyTorch's int64 pow does) instead of
  // being UB, and the last squaring (whose result is unused) may overflow harmlessly.
  uint64_t r = 1, b = static_cast<uint64_t>(base);
  while (exp) {
    if (exp & 1) r *= b;
    b *= b;
    exp >>= 1;
  }
  return static_cast<int64_t>(r);
}

template <class T>
T binary_apply(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::Add: return add_of(a, b);
    case BinaryOp::Sub: return sub_of(a, b);
    case BinaryOp::Mul: return mul_of(a, b);
    case BinaryOp::Div:
      if constexpr (is_float<T>) return a / b;
      else return int_div(a, b, "div");
    case BinaryOp::Pow:
      if constexpr (is_float<T>) return std::pow(a, b);
      else return int_pow(a, b);
    case BinaryOp::Max:
      if constexpr (is_float<T>) return (a != a || a > b) ? a : b;  // NaN propagates, like torch.maximum
      else return a > b ? a : b;
    case BinaryOp::Min:
      if constexpr (is_float<T>) return (a != a || a < b) ? a : b;
      else return a < b ? a : b;
    case BinaryOp::Atan2:
      if constexpr (is_float<T>) return std::atan2(a, b);
      else throw KindError("atan2: not defined for Int tensors");
    case BinaryOp::Remainder:
      if constexpr (is_float<T>) return float_remainder(a, b);
      else return int_remainder(a, b, "remainder");
  }
  return a;
}

// The binary loops over flat runs, one loop per op so each vectorizes. A stride of 0 reads element 0 for the whole
// run (the inner run of a broadcast), 1 reads element i. Inlined into binary_f32's clones (and binary_span's f64).
template <class T>
[[gnu::always_inline]] inline void binary_loop(BinaryOp op, const T* __restrict a, int64_t sa, const T* __restrict b,
                                               int64_t sb, T* __restrict y, int64_t n) {
  auto run = [&](auto f) {
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
    } else if (sa == 1) {
      const T c = *b;
      for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], c);
    } else if (sb == 1) {
      const T c = *a;
      for (int64_t i = 0; i < n; ++i) y[i] = f(c, b[i]);
    } else {
      const T v = f(*a, *b);
      for (int64_t i = 0; i < n; ++i) y[i] = v;
    }
  };
  switch (op) {
    case BinaryOp::Add: return run([](T p, T q) { return binary_apply(BinaryOp::Add, p, q); });
    case BinaryOp::Sub: return run([](T p, T q) { return binary_apply(BinaryOp::Sub, p, q); });
    case BinaryOp::Mul: return run([](T p, T q) { return binary_apply(BinaryOp::Mul, p, q); });
    case BinaryOp::Div: return run([](T p, T q) { return binary_apply(BinaryOp::Div, p, q); });
    case BinaryOp::Pow: return run([](T p, T q) { return binary_apply(BinaryOp::Pow, p, q); });
    case BinaryOp::Max: return run([](T p, T q) { return binary_apply(BinaryOp::Max, p, q); });
    case BinaryOp::Min: return run([](T p, T q) { return binary_apply(BinaryOp::Min, p, q); });
    case BinaryOp::Atan2: return run([](T p, T q) { return binary_apply(BinaryOp::Atan2, p, q); });
    case BinaryOp::Remainder: return run([](T p, T q) { return binary_apply(BinaryOp::Remainder, p, q); });
  }
}

// binary_loop for f32, multi-versioned like unary_f32 (one IEEE op per element, so every clone has the baseline's
// bits): the eager op's same-shape and broadcast runs and the fused chain's tiles (binary_span) all come here.
EMBER_CPU_CLONES
void binary_f32(BinaryOp op, const float* __restrict a, int64_t sa, const float* __restrict b, int64_t sb,
                float* __restrict y, int64_t n) {
  binary_loop<float>(op, a, sa, b, sb, y, n);
}

// The scalar-operand loops but Pow (scalar_span picks Pow's special exponents itself).
template <class T>
[[gnu::always_inline]] inline void scalar_loop(ScalarOp op, T c, const T* __restrict x, T* __restrict y, int64_t n) {
  auto run = [&](auto f) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
  };
  switch (op) {
    case ScalarOp::Add: return run([c](T v) { return v + c; });
    case ScalarOp::Sub: return run([c](T v) { return v - c; });
    case ScalarOp::Mul: return run([c](T v) { return v * c; });
    case ScalarOp::Div: return run([c](T v) { return v / c; });
    case ScalarOp::RSub: return run([c](T v) { return c - v; });
    case ScalarOp::RDiv: return run([c](T v) { return c / v; });
    case ScalarOp::ClampMin: return run([c](T v) { return v < c ? c : v; });
    case ScalarOp::ClampMax: return run([c](T v) { return v > c ? c : v; });
    case ScalarOp::Remainder: return run([c](T v) { return float_remainder(v, c); });
    case ScalarOp::Pow: return run([c](T v) { return static_cast<T>(std::pow(v, c)); });
  }
}

// scalar_loop for f32 (scalar_span<float>: the eager op and the fused chain's tiles), multi-versioned.
EMBER_CPU_CLONES
void scalar_f32(ScalarOp op, float c, const float* __restrict x, float* __restrict y, int64_t n) {
  scalar_loop<float>(op, c, x, y, n);
}

template <class T>
uint8_t compare_apply(CompareOp op, T a, T b) {
  switch (op) {
    case CompareOp::Eq: return a == b;
    case CompareOp::Ne: return a != b;
    case CompareOp::Lt: return a < b;
    case CompareOp::Le: return a <= b;
    case CompareOp::Gt: return a > b;
    case CompareOp::Ge: return a >= b;
  }
  return 0;
}

// out[i] = f(a[i], b[i]) with broadcasting. Flat loops for same-shape and scalar-operand cases so they vectorize.
template <class Out, class T, class F>
CpuTensor<Out> broadcast_map(const CpuTensor<T>& a, const CpuTensor<T>& b, F f) {
  const bool same = a.shape == b.shape;
  CpuTensor<Out> y(same ? a.shape : broadcast_shapes("binary", a.shape, b.shape));
  const T* pa = a.data();
  const T* pb = b.data();
  Out* py = y.data();
  if (same) {
    flat(y.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) py[i] = f(pa[i], pb[i]);
    });
    return y;
  }
  for_each_strided<2>(y.shape, {broadcast_strides(a.shape, y.shape), broadcast_strides(b.shape, y.shape)},
                      [&](const std::array<int64_t, 2>& off, int64_t o, int64_t len, const std::array<int64_t, 2>& st) {
                        const T* xa = pa + off[0];
                        const T* xb = pb + off[1];
                        Out* out = py + o;
                        if (st[0] == 1 && st[1] == 1) {
                          for (int64_t i = 0; i < len; ++i) out[i] = f(xa[i], xb[i]);
                        } else if (st[0] == 1 && st[1] == 0) {
                          const T vb = *xb;
                          for (int64_t i = 0; i < len; ++i) out[i] = f(xa[i], vb);
                        } else if (st[0] == 0 && st[1] == 1) {
                          const T va = *xa;
                          for (int64_t i = 0; i < len; ++i) out[i] = f(va, xb[i]);
                        } else {
                          for (int64_t i = 0; i < len; ++i) out[i] = f(xa[i * st[0]], xb[i * st[1]]);
                        }
                      });
  return y;
}

// binary<float>: the same-shape and broadcast runs through binary_f32's vector loops (an inner run's strides are 0
// or 1 after for_each_strided merges the dims), anything else element by element.
CpuTensor<float> binary_float(const CpuTensor<float>& a, const CpuTensor<float>& b, BinaryOp op) {
  const bool same = a.shape == b.shape;
  CpuTensor<float> y(same ? a.shape : broadcast_shapes("binary", a.shape, b.shape));
  const float* pa = a.data();
  const float* pb = b.data();
  float* py = y.data();
  if (same) {
    flat(y.numel(), [&](int64_t s, int64_t e) { binary_f32(op, pa + s, 1, pb + s, 1, py + s, e - s); });
    return y;
  }
  for_each_strided<2>(y.shape, {broadcast_strides(a.shape, y.shape), broadcast_strides(b.shape, y.shape)},
                      [&](const std::array<int64_t, 2>& off, int64_t o, int64_t len, const std::array<int64_t, 2>& st) {
                        if ((st[0] == 0 || st[0] == 1) && (st[1] == 0 || st[1] == 1)) {
                          binary_f32(op, pa + off[0], st[0], pb + off[1], st[1], py + o, len);
                        } else {
                          for (int64_t i = 0; i < len; ++i)
                            py[o + i] = binary_apply(op, pa[off[0] + i * st[0]], pb[off[1] + i * st[1]]);
                        }
                      });
  return y;
}

template <class T, class F>
CpuTensor<T> map_unary(const CpuTensor<T>& x, F f) {
  CpuTensor<T> y(x.shape);
  const T* px = x.data();
  T* py = y.data();
  flat(x.numel(), [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) py[i] = f(px[i]);
  });
  return y;
}

}  // namespace

template <class T>
CpuTensor<T> unary(const CpuTensor<T>& x, UnaryOp op) {
  if constexpr (std::is_same_v<T, float>) {
    CpuTensor<T> y(x.shape);
    const float* px = x.data();
    float* py = y.data();
    flat(x.numel(), [&](int64_t s, int64_t e) { unary_f32(op, px + s, py + s, e - s); });
    return y;
  } else {
    if constexpr (!is_float<T>) {
      if (!op_takes_int(op)) unary_scalar<T>(op, T(0));  // throws
    }
    return map_unary(x, [op](T v) { return unary_scalar(op, v); });
  }
}

template <class T>
CpuTensor<T> scalar(const CpuTensor<T>& x, ScalarOp op, double s) {
  if constexpr (is_float<T>) {
    if (op == ScalarOp::Pow && s == 1.0) return x;  // buffers are immutable: share
    CpuTensor<T> y(x.shape);
    const T* px = x.data();
    T* py = y.data();
    flat(x.numel(), [&](int64_t b, int64_t e) { scalar_span(op, s, px + b, py + b, e - b); });
    return y;
  } else {
    // An int tensor's scalar is truncated toward 0; NaN, inf and values beyond int64 have no such value (and
    // converting them is undefined behaviour).
    if (!(s >= -0x1p63 && s < 0x1p63))
      throw ArgumentError(fmt::format("scalar op on an int tensor: {} is not representable as int64", s));
    const int64_t c = static_cast<int64_t>(s);
    if constexpr (std::is_same_v<T, int64_t>) {
      if (op == ScalarOp::Div && c == 0) throw ArgumentError("div: integer division by zero");
      if (op == ScalarOp::Div) return map_unary(x, [c](T v) { return int_div(v, c, "div"); });
      if (op == ScalarOp::Pow) return map_unary(x, [c](T v) { return int_pow(v, c); });
      if (op == ScalarOp::RDiv) return map_unary(x, [c](T v) { return int_div(c, v, "div"); });
      if (op == ScalarOp::Remainder && c == 0) throw ArgumentError("remainder: integer division by zero");
      if (op == ScalarOp::Remainder) return map_unary(x, [c](T v) { return int_remainder(v, c, "remainder"); });
    }
    return map_unary(x, [op, c](T v) { return static_cast<T>(scalar_apply<T>(op, v, static_cast<T>(c))); });
  }
}

template <class T>
CpuTensor<T> binary(const CpuTensor<T>& a, const CpuTensor<T>& b, BinaryOp op) {
  if constexpr (std::is_same_v<T, float>) return binary_float(a, b, op);
  switch (op) {  // one instantiation per op so the flat loops vectorize
    case BinaryOp::Add: return broadcast_map<T>(a, b, [](T x, T y) { return add_of(x, y); });
    case BinaryOp::Sub: return broadcast_map<T>(a, b, [](T x, T y) { return sub_of(x, y); });
    case BinaryOp::Mul: return broadcast_map<T>(a, b, [](T x, T y) { return mul_of(x, y); });
    case BinaryOp::Div: return broadcast_map<T>(a, b, [](T x, T y) { return binary_apply(BinaryOp::Div, x, y); });
    case BinaryOp::Pow: return broadcast_map<T>(a, b, [](T x, T y) { return binary_apply(BinaryOp::Pow, x, y); });
    case BinaryOp::Max: return broadcast_map<T>(a, b, [](T x, T y) { return binary_apply(BinaryOp::Max, x, y); });
    case BinaryOp::Min: return broadcast_map<T>(a, b, [](T x, T y) { return binary_apply(BinaryOp::Min, x, y); });
    case BinaryOp::Atan2:
      if constexpr (!is_float<T>) throw KindError("atan2: not defined for Int tensors");
      return broadcast_map<T>(a, b, [](T x, T y) { return binary_apply(BinaryOp::Atan2, x, y); });
    case BinaryOp::Remainder:
      return broadcast_map<T>(a, b, [](T x, T y) { return binary_apply(BinaryOp::Remainder, x, y); });
  }
  throw ArgumentError("binary: unknown op");
}

template <class T>
Mask compare(const CpuTensor<T>& a, const CpuTensor<T>& b, CompareOp op) {
  return broadcast_map<uint8_t>(a, b, [op](T x, T y) { return compare_apply(op, x, y); });
}

template <class T>
Mask compare_scalar(const CpuTensor<T>& a, CompareOp op, double s) {
  Mask y(a.shape);
  const T* pa = a.data();
  uint8_t* py = y.data();
  // Integers compare in double so 2.5 > 2 holds; floats compare in their own type. One loop per op so each
  // vectorizes (relu's backward mask and every clamp gradient come through here).
  using C = std::conditional_t<is_float<T>, T, double>;
  const C c = static_cast<C>(s);
  auto run = [&](auto cmp) {
    flat(a.numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) py[i] = cmp(static_cast<C>(pa[i]), c);
    });
  };
  switch (op) {
    case CompareOp::Eq: run([](C x, C y) -> uint8_t { return x == y; }); break;
    case CompareOp::Ne: run([](C x, C y) -> uint8_t { return x != y; }); break;
    case CompareOp::Lt: run([](C x, C y) -> uint8_t { return x < y; }); break;
    case CompareOp::Le: run([](C x, C y) -> uint8_t { return x <= y; }); break;
    case CompareOp::Gt: run([](C x, C y) -> uint8_t { return x > y; }); break;
    case CompareOp::Ge: run([](C x, C y) -> uint8_t { return x >= y; }); break;
  }
  return y;
}

template <class T>
Mask predicate(const CpuTensor<T>& x, PredicateOp op) {
  Mask y(x.shape);
  const T* px = x.data();
  uint8_t* py = y.data();
  auto run = [&](auto test) {
    flat(x.numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) py[i] = test(px[i]);
    });
  };
  switch (op) {
    case PredicateOp::IsNan: run([](T v) -> uint8_t { return std::isnan(v); }); break;
    case PredicateOp::IsInf: run([](T v) -> uint8_t { return std::isinf(v); }); break;
  }
  return y;
}

Mask logic(const Mask& a, const Mask& b, LogicOp op) {
  switch (op) {
    case LogicOp::And: return broadcast_map<uint8_t>(a, b, [](uint8_t x, uint8_t y) -> uint8_t { return x & y; });
    case LogicOp::Or: return broadcast_map<uint8_t>(a, b, [](uint8_t x, uint8_t y) -> uint8_t { return x | y; });
    case LogicOp::Xor: return broadcast_map<uint8_t>(a, b, [](uint8_t x, uint8_t y) -> uint8_t { return x ^ y; });
  }
  throw ArgumentError("bool_logic: unknown op");
}

Mask logical_not(const Mask& a) {
  return map_unary(a, [](uint8_t v) -> uint8_t { return v ^ 1u; });
}

// The float arithmetic over flat arrays (kernels.hpp). One loop per op so each vectorizes.
template <class T>
void unary_span(UnaryOp op, const T* x, T* y, int64_t n) {
  if constexpr (std::is_same_v<T, float>) unary_f32(op, x, y, n);
  else for (int64_t i = 0; i < n; ++i) y[i] = unary_scalar(op, x[i]);
}

template <class T>
void scalar_span(ScalarOp op, double s, const T* __restrict x, T* __restrict y, int64_t n) {
  const T c = static_cast<T>(s);
  if (op == ScalarOp::Pow) {
    auto run = [&](auto f) {
      for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
    };
    if (s == 2.0) return run([](T v) { return v * v; });
    if (s == 1.0) return run([](T v) { return v; });
    if (s == 0.5) return unary_span(UnaryOp::Sqrt, x, y, n);
    if (s == -1.0) return run([](T v) { return T(1) / v; });
  }
  if constexpr (std::is_same_v<T, float>) scalar_f32(op, c, x, y, n);
  else scalar_loop<T>(op, c, x, y, n);
}

template <class T>
void binary_span(BinaryOp op, const T* __restrict a, const T* __restrict b, T* __restrict y, int64_t n) {
  if constexpr (std::is_same_v<T, float>) binary_f32(op, a, 1, b, 1, y, n);
  else binary_loop<T>(op, a, 1, b, 1, y, n);
}

#define EMBER_INSTANTIATE(T)                                                      \
  template CpuTensor<T> unary<T>(const CpuTensor<T>&, UnaryOp);                   \
  template CpuTensor<T> scalar<T>(const CpuTensor<T>&, ScalarOp, double);         \
  template CpuTensor<T> binary<T>(const CpuTensor<T>&, const CpuTensor<T>&, BinaryOp); \
  template Mask compare<T>(const CpuTensor<T>&, const CpuTensor<T>&, CompareOp);  \
  template Mask compare_scalar<T>(const CpuTensor<T>&, CompareOp, double);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
EMBER_INSTANTIATE(int64_t)
template Mask predicate<float>(const CpuTensor<float>&, PredicateOp);
template void unary_span<float>(UnaryOp, const float*, float*, int64_t);
template void unary_span<double>(UnaryOp, const double*, double*, int64_t);
template void scalar_span<float>(ScalarOp, double, const float*, float*, int64_t);
template void scalar_span<double>(ScalarOp, double, const double*, double*, int64_t);
template void binary_span<float>(BinaryOp, const float*, const float*, float*, int64_t);
template void binary_span<double>(BinaryOp, const double*, const double*, double*, int64_t);
template Mask predicate<double>(const CpuTensor<double>&, PredicateOp);
template Mask compare_scalar<uint8_t>(const Mask&, CompareOp, double);
template Mask compare<uint8_t>(const Mask&, const Mask&, CompareOp);
#undef EMBER_INSTANTIATE

}  // namespace ember::cpu
