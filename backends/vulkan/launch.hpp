#pragma once
// Dispatch helpers shared by the op families: look up (or lazily create) the pipeline of a shader and record one
// grid-stride dispatch over n work items. Shaders loop `for (i = gl_GlobalInvocationID.x; i < n; i += stride)`
// (shaders/common.glsl), so any n fits within maxComputeWorkGroupCount.
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <span>

#include <fmt/format.h>

#include "backends/vulkan/commands.hpp"
#include "backends/vulkan/context.hpp"
#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/pipelines.hpp"

// Embeds a compiled shader: EMBER_SHADER(kName, "file.spv.inc") after `#include`-ing nothing else; expands to an
// array of SPIR-V words and a Shader describing it.
#define EMBER_SHADER_WORDS(var) static const uint32_t var##_words[] =
#define EMBER_SHADER_DEF(var) \
  static const ::ember::vk::Shader var{#var, std::span<const uint32_t>(var##_words)};
// A shader that touches Int data also embeds its EMBER_NO_INT64 variant (name_no_int64.spv.inc, shaders/int64.glsl)
// after EMBER_SHADER_WORDS_NO_INT64(var); EMBER_SHADER_DEF_INT(var) then describes both.
#define EMBER_SHADER_WORDS_NO_INT64(var) static const uint32_t var##_no_int64_words[] =
#define EMBER_SHADER_DEF_INT(var)                                                   \
  static const ::ember::vk::Shader var{#var, std::span<const uint32_t>(var##_words), \
                                       std::span<const uint32_t>(var##_no_int64_words)};

namespace ember::vk {

constexpr uint32_t kWorkgroup = 256;

// Largest element count the shaders' 32-bit indices address; bigger tensors are refused with a clear error.
constexpr int64_t kMaxShaderElements = int64_t{1} << 31;

inline void check_elements(int64_t n, const char* op) {
  if (n >= kMaxShaderElements)
    throw DeviceOutOfMemory(std::string("vulkan ") + op + ": tensors of 2^31 or more elements are not supported");
}

// v as an Int value on ctx: unchanged with shaderInt64; without it Int tensors are int32 on the device, and a value
// outside the int32 range (an upload, a fill, a scalar operand) is refused rather than silently truncated.
inline int64_t device_int(const Context& ctx, int64_t v, const char* op) {
  if (!ctx.int64() && (v < INT32_MIN || v > INT32_MAX))
    throw ArgumentError(fmt::format("vulkan {}: Int value {} is outside the int32 range; this device runs without "
                                    "shaderInt64, so its Int tensors are 32-bit",
                                    op, v));
  return v;
}

inline uint32_t groups_for(const Context& ctx, uint64_t n, uint32_t per_group = kWorkgroup) {
  const uint64_t g = (n + per_group - 1) / per_group;
  return static_cast<uint32_t>(std::min<uint64_t>(g, std::min<uint32_t>(ctx.info().max_workgroup_count_x, 65535u)));
}

// Words a kernel reads that change from replay to replay of a plan (the fused Adam's lr and bias corrections, a
// Bernoulli mask's key): while a plan captures, a host-visible buffer of the plan's holding `data`, which the kernel
// reads instead of its push constants and a compiled step rewrites per replay; null when nothing captures. A
// capture sink that keeps no such buffers refuses the op (`what`): frozen values would train wrongly, silently.
inline std::shared_ptr<Allocation> replay_words(Context& ctx, const void* data, uint32_t bytes, const char* what) {
  std::lock_guard lock(ctx.mutex());
  CaptureSink* sink = ctx.stream().capture();
  if (!sink) return nullptr;
  auto held = sink->host_words(data, bytes);
  if (!held) sink->reject(what);
  return held;
}

// Records a 1-D dispatch of `shader` (workgroup size = spec constant 0) over n items.
template <class Push>
void launch(Context& ctx, const Shader& shader, std::initializer_list<BufferArg> args, const Push& push,
            uint64_t n, std::array<uint32_t, 3> extra_spec = {}) {
  static_assert(sizeof(Push) <= Pipelines::kPushBytes, "push constants over 128 bytes");
  if (n == 0) return;
  std::lock_guard lock(ctx.mutex());
  VkPipeline p = ctx.pipelines().get(shader, {kWorkgroup, extra_spec[0], extra_spec[1], extra_spec[2]});
  ctx.stream().dispatch(p, std::span<const BufferArg>(args.begin(), args.size()), &push, sizeof(Push),
                        groups_for(ctx, n));
}

// Records a dispatch with an explicit 3-D grid and workgroup size (tiled kernels: GEMM, reductions).
template <class Push>
void launch_grid(Context& ctx, const Shader& shader, std::initializer_list<BufferArg> args, const Push& push,
                 std::array<uint32_t, 3> groups, std::array<uint32_t, Pipelines::kMaxSpec> spec) {
  static_assert(sizeof(Push) <= Pipelines::kPushBytes, "push constants over 128 bytes");
  std::lock_guard lock(ctx.mutex());
  VkPipeline p = ctx.pipelines().get(shader, spec);
  ctx.stream().dispatch(p, std::span<const BufferArg>(args.begin(), args.size()), &push, sizeof(Push), groups[0],
                        groups[1], groups[2]);
}

template <class T>
BufferArg in(const VulkanTensor<T>& t) {
  return {t.alloc, false};
}
template <class T>
BufferArg out(const VulkanTensor<T>& t) {
  return {t.alloc, true};
}

// Strided views for the copy / broadcast kernels: up to kMaxDims dims after merging dims that are contiguous in
// every operand (so ordinary tensors of any rank fit).
constexpr std::size_t kMaxDims = 8;

}  // namespace ember::vk
