#pragma once
// Op families. Each backend implements one entry point per family (float_unary, float_binary, ...) switching on
// these enums, rather than one function per op: a new backend (a shader, a CUDA kernel) writes one kernel per
// family, and autodiff writes one backward per family. Values are append-only.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace ember {

enum class UnaryOp : int32_t {
  Neg, Abs, Exp, Log, Log1p, Sqrt, Sin, Cos, Tanh, Sigmoid, Erf, Recip, Sign, Floor, Ceil, Round, Relu,
  Gelu,      // exact: x * Phi(x)
  GeluTanh,  // tanh approximation
};
// x (op) scalar.
enum class ScalarOp : int32_t { Add, Sub, Mul, Div, Pow, ClampMin, ClampMax, RSub, RDiv };
// Elementwise with NumPy broadcasting.
enum class BinaryOp : int32_t { Add, Sub, Mul, Div, Pow, Max, Min };
enum class CompareOp : int32_t { Eq, Ne, Lt, Le, Gt, Ge };
enum class ReduceOp : int32_t { Sum, Mean, Prod, Max, Min };
enum class ArgReduceOp : int32_t { ArgMax, ArgMin };
enum class LogicOp : int32_t { And, Or, Xor };
// Discrete Fourier transforms over the signal dim (float_fft). Complex values are a trailing dim of size 2
// (re, im). Fft / Ifft: [..., n, 2] -> [..., n, 2]; Rfft: real [..., n] -> [..., n/2+1, 2]; Irfft:
// [..., n/2+1, 2] -> real [..., n] (imaginary parts of bin 0 and, for even n, bin n/2 ignored). The inverse
// transforms are scaled by 1/n (NumPy's default "backward" norm).
enum class FftOp : int32_t { Fft, Ifft, Rfft, Irfft };

// A half-open range [start, end) along one dim (already clamped and validated by the tensor layer).
struct Range {
  int64_t start = 0;
  int64_t end = 0;
};

struct Conv2dOptions {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
};

struct Pool2dOptions {
  std::array<int64_t, 2> kernel{2, 2};
  std::array<int64_t, 2> stride{2, 2};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};  // max pooling only
  bool count_include_pad = true;          // average pooling only
};

// Gradients of conv2d with respect to its inputs.
template <class FP>
struct Conv2dGrads {
  FP input;
  FP weight;
  std::optional<FP> bias;
};

template <class FP, class IP>
struct MaxPoolResult {
  FP output;
  IP indices;  // flat index into the input's H*W plane, per (n, c)
};

// Hyper-parameters of one Adam/AdamW update (the optional Backend op float_adam_step; see
// engine/backend/optional_ops.hpp for the formulas it must reproduce).
struct AdamStepArgs {
  double lr = 1e-3;           // already multiplied by the param's lr multiplier
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0.0;  // already multiplied by the param's wd multiplier
  bool decoupled = false;     // AdamW
  double bias_correction1 = 1.0, bias_correction2 = 1.0;  // 1 - beta^t
};

template <class FP>
struct AdamStepResult {
  FP param, exp_avg, exp_avg_sq;
};

}  // namespace ember
