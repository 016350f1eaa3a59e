// Creation and host transfer. On unified-memory devices (integrated GPUs, lavapipe) tensor memory is host-visible:
// uploads are a memcpy into a fresh allocation (the GPU cannot be using it) and reads wait for the stream, then
// memcpy. On discrete GPUs both go through a staging allocation and a recorded copy.
#include <algorithm>
#include <cstring>

#include "backends/vulkan/launch.hpp"
#include "backends/vulkan/memory.hpp"

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kFillW32)
#include "fill_w32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kFillW32)
#include "fill_w32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kFillW32)
EMBER_SHADER_WORDS(kFillW64)
#include "fill_w64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kFillW64)
#include "fill_w64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kFillW64)
EMBER_SHADER_WORDS(kArangeI64)
#include "arange_i64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kArangeI64)
#include "arange_i64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kArangeI64)

EMBER_SHADER_WORDS(kBernoulliF32)
#include "bernoulli_f32.spv.inc"
;
EMBER_SHADER_DEF(kBernoulliF32)

struct FillPush {
  uint32_t n, pad;
  uint32_t value[2];
};

template <class T>
constexpr DType storage_dtype() {
  if constexpr (std::is_same_v<T, float>) return DType::F32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::I64;
  else return DType::Bool;  // uint32 words on the device, bytes on the host
}

// Host bytes of `data` in the device's element layout.
template <class T>
std::vector<T> host_values(const TensorData& data) {
  if constexpr (std::is_same_v<T, uint32_t>) {
    std::vector<uint32_t> v(data.num_elements());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = data.get<bool>(i) ? 1u : 0u;
    return v;
  } else {
    return data.to_vec<T>();
  }
}

}  // namespace

template <class T>
VulkanTensor<T> empty(const std::shared_ptr<Context>& ctx, const Shape& shape) {
  check_elements(shape.num_elements(), "alloc");
  ctx->ensure_alive();  // every new tensor of a lost device fails at once (device_lost.hpp)
  VulkanTensor<T> t{ctx, nullptr, shape};
  t.alloc = ctx->allocator().allocate(t.bytes(), MemoryUse::Tensor);
  return t;
}

namespace {

// Int values narrowed to the int32 a device without shaderInt64 stores, each checked (device_int).
std::vector<int32_t> narrow_ints(const std::vector<int64_t>& values, const Context& ctx) {
  std::vector<int32_t> narrow(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    narrow[i] = static_cast<int32_t>(device_int(ctx, values[i], "upload"));
  return narrow;
}

// Copies `bytes` of host memory into t (a fresh tensor nothing else uses yet).
template <class T>
void upload(const VulkanTensor<T>& t, const void* src, uint64_t bytes) {
  if (void* dst = t.alloc->mapped()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto staging = t.ctx->allocator().allocate(bytes, MemoryUse::Staging);
  std::memcpy(staging->mapped(), src, bytes);
  std::lock_guard lock(t.ctx->mutex());
  t.ctx->stream().copy(staging, 0, t.alloc, 0, bytes);
}

// Copies x's device bytes into dst (x.bytes() of them) once the work writing x has executed.
template <class T>
void download(const VulkanTensor<T>& x, void* dst) {
  Context& ctx = *x.ctx;
  std::lock_guard lock(ctx.mutex());
  // Refused before anything is recorded: no stray copy in the host's command buffer.
  ctx.stream().refuse_in_record_mode("a read of a tensor to the CPU (it needs a submit and a wait)");
  if (const void* src = x.alloc->mapped()) {
    ctx.stream().finish();
    std::memcpy(dst, src, x.bytes());
  } else {
    auto staging = ctx.allocator().allocate(x.bytes(), MemoryUse::Staging);
    ctx.stream().copy(x.alloc, 0, staging, 0, x.bytes());
    ctx.stream().finish();
    std::memcpy(dst, staging->mapped(), x.bytes());
  }
}

}  // namespace

template <class T>
VulkanTensor<T> from_data(const TensorData& data, const std::shared_ptr<Context>& ctx) {
  auto t = empty<T>(ctx, data.shape);
  if (t.numel() == 0) return t;
  const auto values = host_values<T>(data);
  if constexpr (std::is_same_v<T, int64_t>) {
    if (!ctx->int64()) {
      const auto narrow = narrow_ints(values, *ctx);
      upload(t, narrow.data(), t.bytes());
      return t;
    }
  }
  upload(t, values.data(), t.bytes());
  return t;
}

template <class T>
TensorData into_data(const VulkanTensor<T>& x, DType own) {
  std::vector<T> values(static_cast<std::size_t>(x.numel()));
  if (!values.empty()) {
    if constexpr (std::is_same_v<T, int64_t>) {
      if (!x.ctx->int64()) {  // int32 on the device: widened here
        std::vector<int32_t> narrow(values.size());
        download(x, narrow.data());
        std::copy(narrow.begin(), narrow.end(), values.begin());
      } else {
        download(x, values.data());
      }
    } else {
      download(x, values.data());
    }
  }
  if constexpr (std::is_same_v<T, uint32_t>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    auto d = TensorData::from_span<uint8_t>(bytes, x.shape);
    d.dtype = DType::Bool;
    return own == DType::Bool ? d : d.convert(own);
  } else {
    auto d = TensorData::from_span<T>(values, x.shape);
    return own == storage_dtype<T>() ? d : d.convert(own);
  }
}

template <class T>
VulkanTensor<T> full(const std::shared_ptr<Context>& ctx, const Shape& shape, double value) {
  auto t = empty<T>(ctx, shape);
  FillPush push{static_cast<uint32_t>(t.numel()), 0, {0, 0}};
  if constexpr (std::is_same_v<T, float>) {
    const float f = static_cast<float>(value);
    std::memcpy(push.value, &f, 4);
    launch(*ctx, kFillW32, {out(t)}, push, t.numel());
  } else if constexpr (std::is_same_v<T, int64_t>) {
    const int64_t v = device_int(*ctx, static_cast<int64_t>(value), "full");
    std::memcpy(push.value, &v, 8);  // the low word first: all a 32-bit Int fill (kFillW32) reads
    launch(*ctx, ctx->int64() ? kFillW64 : kFillW32, {out(t)}, push, t.numel());
  } else {
    push.value[0] = value != 0.0 ? 1u : 0u;
    launch(*ctx, kFillW32, {out(t)}, push, t.numel());
  }
  return t;
}

template <class T>
VulkanTensor<T> to_context(const VulkanTensor<T>& x, const std::shared_ptr<Context>& ctx) {
  if (x.ctx == ctx) return x;
  return from_data<T>(into_data(x, storage_dtype<T>()), ctx);
}

VulkanTensor<float> bernoulli(const std::shared_ptr<Context>& ctx, const Shape& shape, uint64_t key, uint64_t threshold,
                              float hit) {
  check_elements(shape.num_elements(), "bernoulli");
  auto t = empty<float>(ctx, shape);
  struct {
    uint32_t n, threshold, all_hit;
    float hit;
    uint32_t key[2];
    uint32_t key_from_buffer;
  } push{static_cast<uint32_t>(t.numel()), static_cast<uint32_t>(threshold), threshold >> 32 != 0 ? 1u : 0u, hit,
         {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)}, 0u};
  // Inside a plan the key goes to a block the plan owns, rewritten per replay (a frozen key would repeat the mask).
  const auto key_block = replay_words(*ctx, push.key, sizeof push.key, "a random key in a buffer the replay rewrites");
  push.key_from_buffer = key_block ? 1u : 0u;
  const uint64_t blocks = (static_cast<uint64_t>(t.numel()) + 3) / 4;  // an invocation per block of four
  if (key_block) launch(*ctx, kBernoulliF32, {out(t), {key_block, false}}, push, blocks);
  else launch(*ctx, kBernoulliF32, {out(t)}, push, blocks);  // binding 1 gets the stream's dummy, unread
  return t;
}

Index arange(const std::shared_ptr<Context>& ctx, int64_t start, int64_t end) {
  device_int(*ctx, start, "arange");
  device_int(*ctx, end, "arange");
  auto t = empty<int64_t>(ctx, Shape({end > start ? end - start : 0}));
  FillPush push{static_cast<uint32_t>(t.numel()), 0, {0, 0}};
  std::memcpy(push.value, &start, 8);
  launch(*ctx, kArangeI64, {out(t)}, push, t.numel());
  return t;
}

#define EMBER_INSTANTIATE(T)                                                                  \
  template VulkanTensor<T> empty<T>(const std::shared_ptr<Context>&, const Shape&);           \
  template VulkanTensor<T> from_data<T>(const TensorData&, const std::shared_ptr<Context>&);  \
  template TensorData into_data<T>(const VulkanTensor<T>&, DType);                            \
  template VulkanTensor<T> full<T>(const std::shared_ptr<Context>&, const Shape&, double);    \
  template VulkanTensor<T> to_context<T>(const VulkanTensor<T>&, const std::shared_ptr<Context>&);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(int64_t)
EMBER_INSTANTIATE(uint32_t)
#undef EMBER_INSTANTIATE

}  // namespace ember::vk
