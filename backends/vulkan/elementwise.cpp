// Elementwise math: unary and scalar ops over contiguous tensors, binary ops with broadcasting through strides
// (shaders/unary.comp, scalar.comp, binary.comp). Integer division by zero is an ArgumentError like on the CPU:
// the divisor is checked on the device and the flag read back before dividing (a host sync, only for Int div; where
// the stream must not block the flag is left for ember_vulkan_poll_errors instead).
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "backends/vulkan/check_sink.hpp"
#include "backends/vulkan/elementwise_util.hpp"

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kUnaryF32)
#include "unary_f32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kUnaryF32)
#include "unary_f32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kUnaryF32)
EMBER_SHADER_WORDS(kUnaryI64)
#include "unary_i64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kUnaryI64)
#include "unary_i64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kUnaryI64)
EMBER_SHADER_WORDS(kScalarF32)
#include "scalar_f32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kScalarF32)
#include "scalar_f32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kScalarF32)
EMBER_SHADER_WORDS(kScalarI64)
#include "scalar_i64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kScalarI64)
#include "scalar_i64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kScalarI64)
EMBER_SHADER_WORDS(kBinaryF32)
#include "binary_f32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kBinaryF32)
#include "binary_f32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kBinaryF32)
EMBER_SHADER_WORDS(kBinaryI64)
#include "binary_i64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kBinaryI64)
#include "binary_i64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kBinaryI64)
EMBER_SHADER_WORDS(kPredicateF32)
#include "predicate_f32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kPredicateF32)
#include "predicate_f32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kPredicateF32)

struct UnaryPush {
  uint32_t n, op;
};
struct ScalarPush {
  uint32_t n, op;
  float s;
  uint32_t pad;
  uint32_t s64[2];
};

// Throws when any element of the Int tensor d is zero (reads one flag back). Where the stream must not block
// (checks_deferred: also inside a plan's capture, where the plan owns it) the flag is copied into host-visible memory for ember_vulkan_poll_errors instead; the
// division then runs and its result is unspecified where the divisor is zero.
void refuse_zero_divisor(const Index& d, const char* op) {
  if (d.numel() == 0) return;
  const auto zero = compare_scalar(d, CompareOp::Eq, 0.0);
  const auto any = reduce_all(cast<uint32_t, int64_t>(zero), ReduceOp::Max);
  Context& ctx = *d.ctx;
  {
    std::lock_guard lock(ctx.mutex());
    if (checks_deferred(ctx.stream())) {
      auto flag = ctx.stream().new_check_flag();
      ctx.stream().copy(any.alloc, 0, flag, 0, any.bytes());  // one Int: 4 bytes without shaderInt64
      ctx.stream().defer_check({flag, CheckKind::DivisionByZero, op});
      return;
    }
  }
  if (into_data(any, DType::I64).get<int64_t>(0) != 0)
    throw ArgumentError(fmt::format("{}: integer division by zero", op));
}

}  // namespace

template <class T>
VulkanTensor<T> unary(const VulkanTensor<T>& x, UnaryOp op) {
  if constexpr (std::is_same_v<T, int64_t>) {
    if (!op_takes_int(op))
      throw KindError(fmt::format("unary {}: not defined for Int tensors", op_name(op)));
  }
  auto y = empty<T>(x.ctx, x.shape);
  const UnaryPush p{static_cast<uint32_t>(x.numel()), static_cast<uint32_t>(op)};
  launch(*x.ctx, std::is_same_v<T, float> ? kUnaryF32 : kUnaryI64, {in(x), out(y)}, p, x.numel(), {p.op, 0, 0});
  return y;
}

template <class T>
VulkanTensor<T> scalar(const VulkanTensor<T>& x, ScalarOp op, double s) {
  ScalarPush p{static_cast<uint32_t>(x.numel()), static_cast<uint32_t>(op), static_cast<float>(s), 0, {0, 0}};
  if constexpr (std::is_same_v<T, int64_t>) {
    const int64_t c = device_int(*x.ctx, static_cast<int64_t>(s), "scalar op");
    if ((op == ScalarOp::Div || op == ScalarOp::Remainder) && c == 0)
      throw ArgumentError(fmt::format("{}: integer division by zero", op_name(op)));
    if (op == ScalarOp::RDiv) refuse_zero_divisor(x, "div");
    std::memcpy(p.s64, &c, 8);
  }
  auto y = empty<T>(x.ctx, x.shape);
  launch(*x.ctx, std::is_same_v<T, float> ? kScalarF32 : kScalarI64, {in(x), out(y)}, p, x.numel(), {p.op, 0, 0});
  return y;
}

template <class T>
VulkanTensor<T> binary(const VulkanTensor<T>& a, const VulkanTensor<T>& b, BinaryOp op) {
  if constexpr (std::is_same_v<T, int64_t>) {
    if (!op_takes_int(op)) throw KindError(fmt::format("{}: not defined for Int tensors", op_name(op)));
    if (op == BinaryOp::Div) refuse_zero_divisor(b, "div");
    if (op == BinaryOp::Remainder) refuse_zero_divisor(b, "remainder");
  }
  return broadcast_op<T, T>(std::is_same_v<T, float> ? kBinaryF32 : kBinaryI64, a, b, static_cast<uint32_t>(op),
                            "binary");
}

Mask predicate(const VulkanTensor<float>& x, PredicateOp op) {
  auto y = empty<uint32_t>(x.ctx, x.shape);
  const UnaryPush p{static_cast<uint32_t>(x.numel()), static_cast<uint32_t>(op)};
  launch(*x.ctx, kPredicateF32, {in(x), out(y)}, p, x.numel(), {p.op, 0, 0});
  return y;
}

template VulkanTensor<float> unary<float>(const VulkanTensor<float>&, UnaryOp);
template VulkanTensor<int64_t> unary<int64_t>(const VulkanTensor<int64_t>&, UnaryOp);
template VulkanTensor<float> scalar<float>(const VulkanTensor<float>&, ScalarOp, double);
template VulkanTensor<int64_t> scalar<int64_t>(const VulkanTensor<int64_t>&, ScalarOp, double);
template VulkanTensor<float> binary<float>(const VulkanTensor<float>&, const VulkanTensor<float>&, BinaryOp);
template VulkanTensor<int64_t> binary<int64_t>(const VulkanTensor<int64_t>&, const VulkanTensor<int64_t>&, BinaryOp);

}  // namespace ember::vk
