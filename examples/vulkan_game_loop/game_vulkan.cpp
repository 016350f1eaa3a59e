#include "game_vulkan.hpp"

#include <cstdio>
#include <cstring>

namespace game {
namespace {

const uint32_t kConsumeSpirv[] =
#include "consume.spv.inc"
    ;

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  ++static_cast<GameVulkan*>(user)->validation_messages;
  std::fprintf(stderr, "validation: %s\n", data && data->pMessage ? data->pMessage : "?");
  return VK_FALSE;
}

}  // namespace

GameVulkan::GameVulkan(bool validation, uint32_t api_version) {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vulkan_game_loop";
  app.apiVersion = api_version;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  // With validation: the layer's synchronization validation too, so a missing barrier between the game's commands
  // and Ember's (which lavapipe's in-order execution would hide) is reported.
  const VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync;
  if (validation) {
    ci.pNext = &features;
    ci.enabledLayerCount = 1;
    ci.ppEnabledLayerNames = &layer;
    ci.enabledExtensionCount = 2;
    ci.ppEnabledExtensionNames = exts;
  }
  check(vkCreateInstance(&ci, nullptr, &instance), "vkCreateInstance");
  if (validation) {
    VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mi.pfnUserCallback = on_message;
    mi.pUserData = this;
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    check(create(instance, &mi, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
  }
  uint32_t n = 0;
  check(vkEnumeratePhysicalDevices(instance, &n, nullptr), "vkEnumeratePhysicalDevices");
  if (n == 0) throw std::runtime_error("no Vulkan physical device");
  std::vector<VkPhysicalDevice> devices(n);
  check(vkEnumeratePhysicalDevices(instance, &n, devices.data()), "vkEnumeratePhysicalDevices");
  physical = devices[0];
  for (auto d : devices) {  // a game prefers the discrete GPU
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(d, &p);
    if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) physical = d;
  }
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(physical, &p);
  device_name = p.deviceName;
}

GameVulkan::~GameVulkan() {
  if (device) {
    vkDeviceWaitIdle(device);
    if (fence_) vkDestroyFence(device, fence_, nullptr);
    if (command_pool_) vkDestroyCommandPool(device, command_pool_, nullptr);
    if (pool_) vkDestroyDescriptorPool(device, pool_, nullptr);
    if (pipeline_) vkDestroyPipeline(device, pipeline_, nullptr);
    if (module_) vkDestroyShaderModule(device, module_, nullptr);
    if (layout_) vkDestroyPipelineLayout(device, layout_, nullptr);
    if (set_layout_) vkDestroyDescriptorSetLayout(device, set_layout_, nullptr);
    vkDestroyDevice(device, nullptr);
  }
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    destroy(instance, messenger_, nullptr);
  }
  if (instance) vkDestroyInstance(instance, nullptr);
}

void GameVulkan::create_device(bool shader_int64, bool timeline_semaphore) {
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &nq, families.data());
  bool found = false;
  for (uint32_t i = 0; i < nq && !found; ++i)  // a game's main queue: graphics + compute
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) {
      queue_family = i;
      found = true;
    }
  if (!found) throw std::runtime_error("no compute queue");
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.timelineSemaphore = timeline_semaphore ? VK_TRUE : VK_FALSE;
  VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f.pNext = &f12;
  f.features.shaderInt64 = shader_int64 ? VK_TRUE : VK_FALSE;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueFamilyIndex = queue_family;
  q.queueCount = 1;
  q.pQueuePriorities = &priority;
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.pNext = &f;
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &q;
  check(vkCreateDevice(physical, &ci, nullptr, &device), "vkCreateDevice");
  vkGetDeviceQueue(device, queue_family, 0, &queue);
}

uint32_t GameVulkan::memory_type(uint32_t bits, VkMemoryPropertyFlags want) {
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(physical, &props);
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
    if ((bits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) return i;
  throw std::runtime_error("no host-visible coherent memory type");
}

HostBuffer GameVulkan::create_buffer(VkDeviceSize size) {
  HostBuffer b;
  b.size = size;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  check(vkCreateBuffer(device, &bi, nullptr, &b.buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, b.buffer, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex =
      memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  check(vkAllocateMemory(device, &ai, nullptr, &b.memory), "vkAllocateMemory");
  check(vkBindBufferMemory(device, b.buffer, b.memory, 0), "vkBindBufferMemory");
  check(vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  return b;
}

void GameVulkan::destroy_buffer(HostBuffer& b) {
  if (b.buffer) vkDestroyBuffer(device, b.buffer, nullptr);
  if (b.memory) vkFreeMemory(device, b.memory, nullptr);
  b = HostBuffer{};
}

void GameVulkan::create_consume_pipeline() {
  VkDescriptorSetLayoutBinding bindings[2]{};
  for (uint32_t i = 0; i < 2; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo sl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sl.bindingCount = 2;
  sl.pBindings = bindings;
  check(vkCreateDescriptorSetLayout(device, &sl, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, 8};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &set_layout_;
  pl.pushConstantRangeCount = 1;
  pl.pPushConstantRanges = &push;
  check(vkCreatePipelineLayout(device, &pl, nullptr, &layout_), "vkCreatePipelineLayout");
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = sizeof(kConsumeSpirv);
  mi.pCode = kConsumeSpirv;
  check(vkCreateShaderModule(device, &mi, nullptr, &module_), "vkCreateShaderModule");
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module_;
  ci.stage.pName = "main";
  ci.layout = layout_;
  check(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &ci, nullptr, &pipeline_), "vkCreateComputePipelines");
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
  pi.maxSets = 2;
  pi.poolSizeCount = 1;
  pi.pPoolSizes = &size;
  check(vkCreateDescriptorPool(device, &pi, nullptr, &pool_), "vkCreateDescriptorPool");
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool_;
  const VkDescriptorSetLayout layouts[2] = {set_layout_, set_layout_};
  ai.descriptorSetCount = 2;
  ai.pSetLayouts = layouts;
  check(vkAllocateDescriptorSets(device, &ai, sets_), "vkAllocateDescriptorSets");
  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cpi.queueFamilyIndex = queue_family;
  check(vkCreateCommandPool(device, &cpi, nullptr, &command_pool_), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = command_pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  check(vkAllocateCommandBuffers(device, &cai, &cb_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vkCreateFence(device, &fi, nullptr, &fence_), "vkCreateFence");
}

VkCommandBuffer GameVulkan::begin_frame() {
  check(vkResetCommandBuffer(cb_, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cb_, &bi), "vkBeginCommandBuffer");
  return cb_;
}

void GameVulkan::write_set(VkDescriptorSet ds, VkBuffer logits, VkDeviceSize offset, VkDeviceSize size,
                           const HostBuffer& decisions) {
  VkDescriptorBufferInfo infos[2] = {{logits, offset, size}, {decisions.buffer, 0, decisions.size}};
  VkWriteDescriptorSet writes[2]{};
  for (uint32_t i = 0; i < 2; ++i) {
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = ds;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(device, 2, writes, 0, nullptr);
}

void GameVulkan::record_consume(VkCommandBuffer cb, VkBuffer logits, VkDeviceSize offset, VkDeviceSize size,
                                const HostBuffer& decisions, uint32_t rows, uint32_t classes, int set) {
  // kFrameSet is rewritten per frame: the previous frame's command buffer has completed (one frame in flight).
  // kFixedSet is written once, when the first pre-recorded frame is recorded at load: updating a set invalidates
  // every command buffer recorded with it, so every pre-recorded frame consumes the same two buffers.
  const VkDescriptorSet ds = sets_[set];
  if (set == kFixedSet && fixed_written_) {
    if (fixed_buffers_[0] != logits || fixed_buffers_[1] != decisions.buffer)
      throw std::runtime_error("record_consume: the pre-recorded frames' set already names other buffers");
  } else {
    write_set(ds, logits, offset, size, decisions);
    if (set == kFixedSet) {
      fixed_written_ = true;
      fixed_buffers_[0] = logits;
      fixed_buffers_[1] = decisions.buffer;
    }
  }
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &ds, 0, nullptr);
  const uint32_t push[2] = {rows, classes};
  vkCmdPushConstants(cb, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), push);
  vkCmdDispatch(cb, (rows + 63) / 64, 1, 1);
}

void GameVulkan::end_frame() {
  finish_frame(cb_);
  submit_frame(cb_);
  wait_consume();
}

VkCommandBuffer GameVulkan::allocate_frame() {
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = command_pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  check(vkAllocateCommandBuffers(device, &cai, &cb), "vkAllocateCommandBuffers");  // freed with the pool
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  check(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
  return cb;
}

void GameVulkan::finish_frame(VkCommandBuffer cb) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                       nullptr);
  check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
}

void GameVulkan::submit_frame(VkCommandBuffer cb) {
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  std::lock_guard lock(queue_mutex);
  check(vkQueueSubmit(queue, 1, &si, fence_), "vkQueueSubmit");
}

void GameVulkan::submit_consume(VkBuffer logits, VkDeviceSize offset, VkDeviceSize size, const HostBuffer& decisions,
                                uint32_t rows, uint32_t classes, VkSemaphore wait_sem, uint64_t wait_value) {
  begin_frame();
  record_consume(cb_, logits, offset, size, decisions, rows, classes);
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                       nullptr);
  check(vkEndCommandBuffer(cb_), "vkEndCommandBuffer");
  VkTimelineSemaphoreSubmitInfo ti{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  ti.waitSemaphoreValueCount = 1;
  ti.pWaitSemaphoreValues = &wait_value;
  const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.pNext = &ti;
  si.waitSemaphoreCount = 1;
  si.pWaitSemaphores = &wait_sem;
  si.pWaitDstStageMask = &stage;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb_;
  std::lock_guard lock(queue_mutex);
  check(vkQueueSubmit(queue, 1, &si, fence_), "vkQueueSubmit");
}

void GameVulkan::wait_consume() {
  check(vkWaitForFences(device, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  check(vkResetFences(device, 1, &fence_), "vkResetFences");
}

}  // namespace game
