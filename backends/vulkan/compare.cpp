// Comparisons (Bool words out) and Bool logic, all through the broadcasting binary shader. A scalar comparison
// is a comparison with a one-element tensor broadcast against x. Int tensors compare with a fractional scalar the
// way the CPU does (in double: 2 < 2.5), by rewriting the comparison on the integer grid.
#include <cmath>
#include <limits>

#include "backends/vulkan/elementwise_util.hpp"

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kCompareF32)
#include "compare_f32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kCompareF32)
#include "compare_f32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kCompareF32)
EMBER_SHADER_WORDS(kCompareI64)
#include "compare_i64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kCompareI64)
#include "compare_i64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kCompareI64)
EMBER_SHADER_WORDS(kCompareU32)
#include "compare_u32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kCompareU32)
#include "compare_u32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kCompareU32)
EMBER_SHADER_WORDS(kLogicU32)
#include "logic_u32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kLogicU32)
#include "logic_u32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kLogicU32)

template <class T>
const Shader& compare_shader() {
  if constexpr (std::is_same_v<T, float>) return kCompareF32;
  else if constexpr (std::is_same_v<T, int64_t>) return kCompareI64;
  else return kCompareU32;
}

}  // namespace

template <class T>
Mask compare(const VulkanTensor<T>& a, const VulkanTensor<T>& b, CompareOp op) {
  return broadcast_op<T, uint32_t>(compare_shader<T>(), a, b, static_cast<uint32_t>(op), "compare");
}

template <class T>
Mask compare_scalar(const VulkanTensor<T>& a, CompareOp op, double s) {
  if constexpr (std::is_same_v<T, float>) {
    return compare(a, full<float>(a.ctx, Shape({1}), s), op);
  } else {
    // x (op) s for integer x and real s, as an integer comparison with c = floor(s).
    if (std::isnan(s)) return full<uint32_t>(a.ctx, a.shape, op == CompareOp::Ne ? 1.0 : 0.0);
    // Int elements are int64, or int32 on a device without shaderInt64 (Context::int64()).
    const double lo = a.ctx->int64() ? -9.2233720368547758e18 : -2147483648.0;
    const double hi = a.ctx->int64() ? 9.2233720368547758e18 : 2147483648.0;
    if (s < lo || s >= hi) {  // beyond every Int value: the answer is the same for every element
      const bool above = s >= hi;  // s greater than any x
      bool v = false;
      switch (op) {
        case CompareOp::Eq: v = false; break;
        case CompareOp::Ne: v = true; break;
        case CompareOp::Lt: case CompareOp::Le: v = above; break;
        case CompareOp::Gt: case CompareOp::Ge: v = !above; break;
      }
      return full<uint32_t>(a.ctx, a.shape, v ? 1.0 : 0.0);
    }
    const double f = std::floor(s);
    const bool integral = f == s;
    CompareOp iop = op;
    if (!integral) {
      if (op == CompareOp::Eq || op == CompareOp::Ne)
        return full<uint32_t>(a.ctx, a.shape, op == CompareOp::Ne ? 1.0 : 0.0);
      iop = (op == CompareOp::Lt || op == CompareOp::Le) ? CompareOp::Le : CompareOp::Gt;  // x < 2.5 <=> x <= 2
    }
    if constexpr (std::is_same_v<T, int64_t>) {
      return compare(a, full<int64_t>(a.ctx, Shape({1}), f), iop);
    } else {
      return compare(a, full<uint32_t>(a.ctx, Shape({1}), f), iop);  // Bool words against 0/1
    }
  }
}

Mask logic(const Mask& a, const Mask& b, LogicOp op) {
  return broadcast_op<uint32_t, uint32_t>(kLogicU32, a, b, static_cast<uint32_t>(op), "bool_logic");
}

Mask logical_not(const Mask& a) { return logic(a, full<uint32_t>(a.ctx, Shape({1}), 1.0), LogicOp::Xor); }

template Mask compare<float>(const VulkanTensor<float>&, const VulkanTensor<float>&, CompareOp);
template Mask compare<int64_t>(const VulkanTensor<int64_t>&, const VulkanTensor<int64_t>&, CompareOp);
template Mask compare<uint32_t>(const Mask&, const Mask&, CompareOp);
template Mask compare_scalar<float>(const VulkanTensor<float>&, CompareOp, double);
template Mask compare_scalar<int64_t>(const VulkanTensor<int64_t>&, CompareOp, double);
template Mask compare_scalar<uint32_t>(const Mask&, CompareOp, double);

}  // namespace ember::vk
