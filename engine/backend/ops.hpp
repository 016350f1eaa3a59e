#pragma once
// Op families. Each backend implements one entry point per family (float_unary, float_binary, ...) switching on
// these enums, rather than one function per op: a new backend (a shader, a CUDA kernel) writes one kernel per
// family, and autodiff writes one backward per family. Values are append-only.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace ember {

// Operand kinds an op is defined for (the `kinds` column of ops.def).
enum class OpKinds : uint8_t { Float, FloatInt, Bool, Any };

// The enums, from the op table (engine/backend/ops.def): one enumerator per row, with the row's value.
enum class UnaryOp : int32_t {
#define EMBER_UNARY_OP(id, value, name, kinds) id = value,
#include "engine/backend/ops.def"
};
// x (op) scalar.
enum class ScalarOp : int32_t {
#define EMBER_SCALAR_OP(id, value, name, kinds) id = value,
#include "engine/backend/ops.def"
};
// Elementwise with NumPy broadcasting.
enum class BinaryOp : int32_t {
#define EMBER_BINARY_OP(id, value, name, kinds) id = value,
#include "engine/backend/ops.def"
};
enum class CompareOp : int32_t {
#define EMBER_COMPARE_OP(id, value, name, kinds) id = value,
#include "engine/backend/ops.def"
};
// Float -> Bool tests of a value's class (float_predicate).
enum class PredicateOp : int32_t {
#define EMBER_PREDICATE_OP(id, value, name, kinds) id = value,
#include "engine/backend/ops.def"
};
enum class ReduceOp : int32_t {
#define EMBER_REDUCE_OP(id, value, name, kinds) id = value,
#include "engine/backend/ops.def"
};
enum class ArgReduceOp : int32_t {
#define EMBER_ARG_REDUCE_OP(id, value, name, kinds) id = value,
#include "engine/backend/ops.def"
};
enum class LogicOp : int32_t {
#define EMBER_LOGIC_OP(id, value, name, kinds) id = value,
#include "engine/backend/ops.def"
};
// Discrete Fourier transforms (float_fft); the shapes are described in ops.def.
enum class FftOp : int32_t {
#define EMBER_FFT_OP(id, value, name, kinds) id = value,
#include "engine/backend/ops.def"
};

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

// op_name(), op_kinds(), op_count<E>() for these enums.
#include "engine/backend/op_facts.hpp"
