#include "backends/vulkan/pipelines.hpp"

#include "backends/vulkan/context.hpp"
#include "backends/vulkan/shader_variants.hpp"

namespace ember::vk {

Pipelines::Pipelines(Context& ctx, const std::vector<uint8_t>& initial_cache, VkPipelineCache host_cache)
    : ctx_(ctx) {
  const auto& fn = ctx.fn();
  VkDevice dev = ctx.device();
  std::array<VkDescriptorSetLayoutBinding, kBindings> bindings{};
  for (uint32_t i = 0; i < kBindings; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo sl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sl.bindingCount = kBindings;
  sl.pBindings = bindings.data();
  check(fn.CreateDescriptorSetLayout(dev, &sl, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &set_layout_;
  pl.pushConstantRangeCount = 1;
  pl.pPushConstantRanges = &push;
  check(fn.CreatePipelineLayout(dev, &pl, nullptr, &layout_), "vkCreatePipelineLayout");
  if (host_cache) {
    // Vulkan synchronizes a pipeline cache internally (unless the host created it EXTERNALLY_SYNCHRONIZED, which
    // ember.h tells it not to), so Ember's pipeline creation may run beside the host's.
    cache_ = host_cache;
    own_cache_ = false;
    return;
  }
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = initial_cache.size();
  ci.pInitialData = initial_cache.empty() ? nullptr : initial_cache.data();
  // A cache from another driver or device is ignored by the driver (its header is checked), never an error.
  if (fn.CreatePipelineCache(dev, &ci, nullptr, &cache_) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    check(fn.CreatePipelineCache(dev, &ci, nullptr, &cache_), "vkCreatePipelineCache");
  }
}

Pipelines::~Pipelines() {
  const auto& fn = ctx_.fn();
  VkDevice dev = ctx_.device();
  for (auto& [k, p] : pipelines_) fn.DestroyPipeline(dev, p, nullptr);
  for (auto& [k, m] : modules_) fn.DestroyShaderModule(dev, m, nullptr);
  if (cache_ && own_cache_) fn.DestroyPipelineCache(dev, cache_, nullptr);
  if (layout_) fn.DestroyPipelineLayout(dev, layout_, nullptr);
  if (set_layout_) fn.DestroyDescriptorSetLayout(dev, set_layout_, nullptr);
}

VkPipeline Pipelines::get(const Shader& shader, std::array<uint32_t, kMaxSpec> spec) {
  std::lock_guard lock(mutex_);
  // The context's variant of the shader (shader_variants.hpp: 32-bit Int data without shaderInt64).
  const std::span<const uint32_t> code = spirv_for(ctx_, shader);
  const auto key = std::make_pair(code.data(), spec);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;
  const auto& fn = ctx_.fn();
  VkDevice dev = ctx_.device();
  VkShaderModule& module = modules_[code.data()];
  if (!module) {
    VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mi.codeSize = code.size_bytes();
    mi.pCode = code.data();
    VkResult r = fn.CreateShaderModule(dev, &mi, nullptr, &module);
    if (r != VK_SUCCESS) {
      modules_.erase(code.data());
      throw_result(r, (std::string("vkCreateShaderModule(") + shader.name + ")").c_str());
    }
  }
  std::array<VkSpecializationMapEntry, kMaxSpec> entries{};
  for (uint32_t i = 0; i < kMaxSpec; ++i) entries[i] = {i, i * 4u, 4u};
  VkSpecializationInfo si{kMaxSpec, entries.data(), sizeof(spec), spec.data()};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = &si;
  ci.layout = layout_;
  VkPipeline p = VK_NULL_HANDLE;
  VkResult r = fn.CreateComputePipelines(dev, cache_, 1, &ci, nullptr, &p);
  if (r != VK_SUCCESS) throw_result(r, (std::string("vkCreateComputePipelines(") + shader.name + ")").c_str());
  pipelines_.emplace(key, p);
  return p;
}

std::vector<uint8_t> Pipelines::save_cache() const {
  std::lock_guard lock(mutex_);
  const auto& fn = ctx_.fn();
  std::size_t n = 0;
  check(fn.GetPipelineCacheData(ctx_.device(), cache_, &n, nullptr), "vkGetPipelineCacheData");
  std::vector<uint8_t> data(n);
  check(fn.GetPipelineCacheData(ctx_.device(), cache_, &n, data.data()), "vkGetPipelineCacheData");
  data.resize(n);
  return data;
}

std::size_t Pipelines::size() const {
  std::lock_guard lock(mutex_);
  return pipelines_.size();
}

}  // namespace ember::vk
