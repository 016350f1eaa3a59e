#pragma once
// Compute pipelines: every Ember shader shares one descriptor-set layout (kBindings storage buffers) and one
// pipeline layout (kPushBytes of push constants), so any dispatch can bind any tensors. Pipelines are created on
// first use per (shader, specialization constants) and kept in a VkPipelineCache the host can save and restore
// (Context::save_pipeline_cache, ContextOptions::pipeline_cache), or in the host's own cache
// (ContextOptions::host_pipeline_cache), so a game's cache warmed during a loading screen serves Ember too.
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace ember::vk {

class Context;

// SPIR-V embedded at build time (backends/vulkan/shaders, glslc -mfmt=c).
struct Shader {
  const char* name;
  std::span<const uint32_t> spirv;
  // The EMBER_NO_INT64 variant for devices without shaderInt64 (Int data as int32); empty for shaders that touch
  // no Int data, whose one variant serves every device (shader_variants.hpp).
  std::span<const uint32_t> spirv_no_int64 = {};
};

class Pipelines {
 public:
  static constexpr uint32_t kBindings = 8;
  static constexpr uint32_t kPushBytes = 128;
  static constexpr uint32_t kMaxSpec = 4;

  // host_cache: the host's VkPipelineCache (adopt option pipeline_cache): pipelines are created into it and
  // initial_cache is ignored (the host loads its cache itself); Ember never destroys it. Null: a cache of Ember's.
  Pipelines(Context& ctx, const std::vector<uint8_t>& initial_cache, VkPipelineCache host_cache = VK_NULL_HANDLE);
  ~Pipelines();

  // constant_id i of the shader gets spec[i] (constant 0 is the workgroup size by convention).
  VkPipeline get(const Shader& shader, std::array<uint32_t, kMaxSpec> spec);
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  std::vector<uint8_t> save_cache() const;
  std::size_t size() const;

 private:
  Context& ctx_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  bool own_cache_ = true;
  mutable std::mutex mutex_;
  std::map<std::pair<const uint32_t*, std::array<uint32_t, kMaxSpec>>, VkPipeline> pipelines_;
  std::map<const uint32_t*, VkShaderModule> modules_;
};

}  // namespace ember::vk
