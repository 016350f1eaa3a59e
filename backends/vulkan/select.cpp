// where / mask_fill (shaders/select.comp) and dtype casts (shaders/cast.comp). Broadcast operands are expanded
// to the output shape first (expand shares storage when nothing repeats), so the select kernel stays contiguous.
#include <cstring>

#include "backends/vulkan/strided.hpp"

namespace ember::vk {
namespace {


EMBER_SHADER_WORDS(kSelectW32)
#include "select_w32.spv.inc"
;
EMBER_SHADER_DEF(kSelectW32)
EMBER_SHADER_WORDS(kSelectW64)
#include "select_w64.spv.inc"
;
EMBER_SHADER_DEF(kSelectW64)
EMBER_SHADER_WORDS(kMaskFillW32)
#include "mask_fill_w32.spv.inc"
;
EMBER_SHADER_DEF(kMaskFillW32)
EMBER_SHADER_WORDS(kMaskFillW64)
#include "mask_fill_w64.spv.inc"
;
EMBER_SHADER_DEF(kMaskFillW64)
EMBER_SHADER_WORDS(kCastF32I64)
#include "cast_f32_i64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kCastF32I64)
#include "cast_f32_i64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kCastF32I64)
EMBER_SHADER_WORDS(kCastF32U32)
#include "cast_f32_u32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kCastF32U32)
#include "cast_f32_u32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kCastF32U32)
EMBER_SHADER_WORDS(kCastI64F32)
#include "cast_i64_f32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kCastI64F32)
#include "cast_i64_f32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kCastI64F32)
EMBER_SHADER_WORDS(kCastI64U32)
#include "cast_i64_u32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kCastI64U32)
#include "cast_i64_u32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kCastI64U32)
EMBER_SHADER_WORDS(kCastU32F32)
#include "cast_u32_f32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kCastU32F32)
#include "cast_u32_f32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kCastU32F32)
EMBER_SHADER_WORDS(kCastU32I64)
#include "cast_u32_i64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kCastU32I64)
#include "cast_u32_i64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kCastU32I64)

struct SelectPush {
  uint32_t n, pad;
  uint32_t value[2];
};

template <class T>
VulkanTensor<T> expand_to(const VulkanTensor<T>& x, const Shape& shape) {
  return x.shape == shape ? x : expand(x, shape);
}

template <class From, class To>
const Shader& cast_shader() {
  if constexpr (std::is_same_v<From, float>) return std::is_same_v<To, int64_t> ? kCastF32I64 : kCastF32U32;
  else if constexpr (std::is_same_v<From, int64_t>) return std::is_same_v<To, float> ? kCastI64F32 : kCastI64U32;
  else return std::is_same_v<To, float> ? kCastU32F32 : kCastU32I64;
}

}  // namespace

template <class T>
VulkanTensor<T> where(const Mask& cond, const VulkanTensor<T>& a, const VulkanTensor<T>& b) {
  const Shape shape = broadcast_shapes("where", broadcast_shapes("where", cond.shape, a.shape), b.shape);
  auto y = empty<T>(a.ctx, shape);
  const SelectPush p{static_cast<uint32_t>(shape.num_elements()), 0, {0, 0}};
  launch(*a.ctx, element_bytes<T>(*a.ctx) == 8 ? kSelectW64 : kSelectW32,
         {in(expand_to(cond, shape)), in(expand_to(a, shape)), in(expand_to(b, shape)), out(y)}, p, y.numel());
  return y;
}

template <class T>
VulkanTensor<T> mask_fill(const VulkanTensor<T>& x, const Mask& mask, double value) {
  const Shape shape = broadcast_shapes("mask_fill", x.shape, mask.shape);
  auto y = empty<T>(x.ctx, shape);
  SelectPush p{static_cast<uint32_t>(shape.num_elements()), 0, {0, 0}};
  if constexpr (std::is_same_v<T, float>) {
    const float v = static_cast<float>(value);
    std::memcpy(p.value, &v, 4);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    const int64_t v = device_int(*x.ctx, static_cast<int64_t>(value), "mask_fill");
    std::memcpy(p.value, &v, 8);  // the low word first: all the 32-bit variant reads
  } else {
    p.value[0] = value != 0.0 ? 1u : 0u;
  }
  const auto xs = expand_to(x, shape);
  launch(*x.ctx, element_bytes<T>(*x.ctx) == 8 ? kMaskFillW64 : kMaskFillW32,
         {in(expand_to(mask, shape)), in(xs), in(xs), out(y)}, p, y.numel());
  return y;
}

template <class From, class To>
VulkanTensor<To> cast(const VulkanTensor<From>& x) {
  if constexpr (std::is_same_v<From, To>) {
    return x;
  } else {
    auto y = empty<To>(x.ctx, x.shape);
    const uint32_t n = static_cast<uint32_t>(x.numel());
    launch(*x.ctx, cast_shader<From, To>(), {in(x), out(y)}, n, x.numel());
    return y;
  }
}

#define EMBER_INSTANTIATE(T)                                                                       \
  template VulkanTensor<T> where<T>(const Mask&, const VulkanTensor<T>&, const VulkanTensor<T>&); \
  template VulkanTensor<T> mask_fill<T>(const VulkanTensor<T>&, const Mask&, double);             \
  template VulkanTensor<float> cast<T, float>(const VulkanTensor<T>&);                             \
  template VulkanTensor<int64_t> cast<T, int64_t>(const VulkanTensor<T>&);                         \
  template VulkanTensor<uint32_t> cast<T, uint32_t>(const VulkanTensor<T>&);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(int64_t)
EMBER_INSTANTIATE(uint32_t)
#undef EMBER_INSTANTIATE

}  // namespace ember::vk
