#include "tests/c_api/vulkan_host.hpp"

#include <algorithm>

namespace ember::capi_test {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool has_layer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

uint32_t memory_type(VkPhysicalDevice physical, uint32_t type_bits, VkMemoryPropertyFlags want) {
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(physical, &props);
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
    if ((type_bits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) return i;
  return UINT32_MAX;
}

}  // namespace

void VulkanHost::create() {
  ember_vulkan_requirements req{};
  req.struct_size = sizeof req;
  if (ember_vulkan_requirements_query(&req) != EMBER_OK) {
    why_ = std::string("ember_vulkan_requirements_query: ") + ember_last_error();
    return;
  }
  if (features_.api_version) req.api_version = features_.api_version;
  req.shader_int64 = req.shader_int64 && features_.shader_int64;
  req.timeline_semaphore = req.timeline_semaphore && features_.timeline_semaphore;
  // Vulkan 1.2 feature structs are invalid on a 1.1 instance: chained only from 1.2 on.
  const bool vulkan12 = req.api_version >= VK_API_VERSION_1_2;
  validation_ = has_layer(kValidationLayer);
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "ember_c_api_test_host";
  app.apiVersion = req.api_version;
  const char* layers[] = {kValidationLayer};
  const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = validation_ ? 1 : 0;
  ici.ppEnabledLayerNames = layers;
  ici.enabledExtensionCount = validation_ ? 2 : 0;  // VK_EXT_validation_features comes with the layer
  ici.ppEnabledExtensionNames = extensions;
  // With the layer: its synchronization validation too, so a hazard between the host's commands and Ember's on
  // the shared queue, or inside Ember's command stream, fails the test (lavapipe's in-order execution hides them).
  const VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync;
  if (validation_) ici.pNext = &features;
  if (VkResult r = vkCreateInstance(&ici, nullptr, &instance_); r != VK_SUCCESS) {
    why_ = "vkCreateInstance failed (" + std::to_string(r) + "): no Vulkan driver";
    instance_ = VK_NULL_HANDLE;
    return;
  }
  if (validation_) {
    VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    mci.pfnUserCallback = &VulkanHost::on_message;
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (!create || create(instance_, &mci, nullptr, &messenger_) != VK_SUCCESS) {
      why_ = "vkCreateDebugUtilsMessengerEXT failed";
      return;
    }
  }

  // The first device with what Ember requires: the API version, the features, a compute queue.
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance_, &n, nullptr);
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(instance_, &n, devices.data());
  for (VkPhysicalDevice d : devices) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(d, &props);
    VkPhysicalDevice16BitStorageFeatures f16s{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f.pNext = &f16s;
    if (vulkan12) f16s.pNext = &f12;
    vkGetPhysicalDeviceFeatures2(d, &f);
    if (props.apiVersion < req.api_version || (req.shader_int64 && !f.features.shaderInt64) ||
        (req.timeline_semaphore && !f12.timelineSemaphore) || (features_.shader_float16 && !f12.shaderFloat16) ||
        (features_.storage_16bit && !f16s.storageBuffer16BitAccess))
      continue;
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> families(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, families.data());
    for (uint32_t i = 0; i < nq && !physical_; ++i) {
      if ((families[i].queueFlags & req.queue_flags) == req.queue_flags) {
        physical_ = d;
        queue_family_ = i;
        family_queue_count_ = families[i].queueCount;
        storage_alignment_ = props.limits.minStorageBufferOffsetAlignment;
      }
    }
    if (physical_) break;
  }
  if (!physical_) {
    why_ = n == 0 ? "no Vulkan physical device" : "no Vulkan device meets ember_vulkan_requirements";
    return;
  }

  VkPhysicalDevice16BitStorageFeatures want16s{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  want16s.storageBuffer16BitAccess = features_.storage_16bit ? VK_TRUE : VK_FALSE;
  VkPhysicalDeviceVulkan12Features want12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  want12.timelineSemaphore = req.timeline_semaphore ? VK_TRUE : VK_FALSE;
  want12.shaderFloat16 = features_.shader_float16 ? VK_TRUE : VK_FALSE;
  VkPhysicalDeviceFeatures2 want{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  want.pNext = &want16s;
  if (vulkan12) want16s.pNext = &want12;
  want.features.shaderInt64 = req.shader_int64 ? VK_TRUE : VK_FALSE;
  queues_ = std::max(1u, std::min(queues_, family_queue_count_));
  const std::vector<float> priorities(queues_, 1.0f);
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = queues_;
  qci.pQueuePriorities = priorities.data();
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &want;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = req.device_extension_count;
  dci.ppEnabledExtensionNames = req.device_extensions;
  if (vkCreateDevice(physical_, &dci, nullptr, &device_) != VK_SUCCESS) {
    why_ = "vkCreateDevice failed";
    device_ = VK_NULL_HANDLE;
    return;
  }
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.queueFamilyIndex = queue_family_;
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  if (vkCreateCommandPool(device_, &pci, nullptr, &pool_) != VK_SUCCESS) why_ = "vkCreateCommandPool failed";
}

void VulkanHost::destroy() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
    vkDestroyDevice(device_, nullptr);  // the validation layer reports objects Ember left behind here
  }
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

HostBuffer VulkanHost::make_buffer(VkDeviceSize size, VkExternalMemoryHandleTypeFlags external) {
  HostBuffer b;
  b.size = size;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = kHostBufferUsage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkExternalMemoryBufferCreateInfo ext{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  ext.handleTypes = external;
  if (external) bci.pNext = &ext;
  EXPECT_EQ(vkCreateBuffer(device_, &bci, nullptr, &b.buffer), VK_SUCCESS);
  VkMemoryRequirements mr;
  vkGetBufferMemoryRequirements(device_, b.buffer, &mr);
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = mr.size;
  mai.memoryTypeIndex = memory_type(physical_, mr.memoryTypeBits,
                                    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  EXPECT_NE(mai.memoryTypeIndex, UINT32_MAX) << "no host-visible coherent memory";
  EXPECT_EQ(vkAllocateMemory(device_, &mai, nullptr, &b.memory), VK_SUCCESS);
  EXPECT_EQ(vkBindBufferMemory(device_, b.buffer, b.memory, 0), VK_SUCCESS);
  EXPECT_EQ(vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), VK_SUCCESS);
  return b;
}

bool VulkanHost::external_buffers(VkExternalMemoryHandleTypeFlagBits type) const {
  VkPhysicalDeviceExternalBufferInfo info{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
  info.usage = kHostBufferUsage;
  info.handleType = type;
  VkExternalBufferProperties props{VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
  vkGetPhysicalDeviceExternalBufferProperties(physical_, &info, &props);
  return (props.externalMemoryProperties.compatibleHandleTypes & type) != 0;
}

void VulkanHost::free_buffer(HostBuffer& b) {
  if (b.memory) vkFreeMemory(device_, b.memory, nullptr);  // unmaps
  if (b.buffer) vkDestroyBuffer(device_, b.buffer, nullptr);
  b = HostBuffer{};
}

void VulkanHost::copy_after(uint64_t ember_semaphore, uint64_t value, VkBuffer src, VkDeviceSize src_offset,
                            VkBuffer dst, VkDeviceSize size) {
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VK_ASSERT(vkAllocateCommandBuffers(device_, &cai, &cb));
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VK_ASSERT(vkBeginCommandBuffer(cb, &begin));
  const VkBufferCopy region{src_offset, 0, size};
  vkCmdCopyBuffer(cb, src, dst, 1, &region);
  // The copy's writes must be visible to the host's reads after the fence.
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0,
                       nullptr);
  VK_ASSERT(vkEndCommandBuffer(cb));

  const VkSemaphore wait = reinterpret_cast<VkSemaphore>(static_cast<std::uintptr_t>(ember_semaphore));
  const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkTimelineSemaphoreSubmitInfo tsi{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  tsi.waitSemaphoreValueCount = 1;
  tsi.pWaitSemaphoreValues = &value;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.pNext = &tsi;
  si.waitSemaphoreCount = 1;
  si.pWaitSemaphores = &wait;
  si.pWaitDstStageMask = &stage;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  VK_ASSERT(vkCreateFence(device_, &fci, nullptr, &fence));
  {
    std::lock_guard lock(queue_mutex_);  // the queue is shared with Ember
    EXPECT_EQ(vkQueueSubmit(queue_, 1, &si, fence), VK_SUCCESS);
  }
  EXPECT_EQ(vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
  {
    // The fence signals before lavapipe's queue thread has let go of the semaphores of the submission; Ember may
    // destroy its timeline semaphore once its last handle goes, so let the queue drain first.
    std::lock_guard lock(queue_mutex_);
    EXPECT_EQ(vkQueueWaitIdle(queue_), VK_SUCCESS);
  }
  vkDestroyFence(device_, fence, nullptr);
  vkFreeCommandBuffers(device_, pool_, 1, &cb);
}

VkSemaphore VulkanHost::make_timeline() {
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  sci.pNext = &type;
  VkSemaphore s = VK_NULL_HANDLE;
  EXPECT_EQ(vkCreateSemaphore(device_, &sci, nullptr, &s), VK_SUCCESS);
  return s;
}

void VulkanHost::signal(VkSemaphore s, uint64_t value) {
  VkSemaphoreSignalInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
  info.semaphore = s;
  info.value = value;
  EXPECT_EQ(vkSignalSemaphore(device_, &info), VK_SUCCESS);
}

// ---------------------------------------------------------------- issue 17 parts 1 and 3: host-recorded frames

VkCommandBuffer VulkanHost::begin_frame() {
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  EXPECT_EQ(vkAllocateCommandBuffers(device_, &cai, &cb), VK_SUCCESS);
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  EXPECT_EQ(vkBeginCommandBuffer(cb, &begin), VK_SUCCESS);
  return cb;
}

void VulkanHost::record_copy(VkCommandBuffer cb, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst,
                             VkDeviceSize size) {
  // No barrier before the copy: Ember's ember_vulkan_record_end made its writes visible to later commands.
  const VkBufferCopy region{src_offset, 0, size};
  vkCmdCopyBuffer(cb, src, dst, 1, &region);
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0,
                       nullptr);
}

VkFence VulkanHost::submit_frame(VkCommandBuffer cb, VkSemaphore wait, uint64_t value) {
  EXPECT_EQ(vkEndCommandBuffer(cb), VK_SUCCESS);
  const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  VkTimelineSemaphoreSubmitInfo tsi{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  tsi.waitSemaphoreValueCount = wait ? 1 : 0;
  tsi.pWaitSemaphoreValues = &value;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.pNext = wait ? &tsi : nullptr;  // no timeline struct without a wait: a Vulkan 1.1 host may lack them
  si.waitSemaphoreCount = wait ? 1 : 0;
  si.pWaitSemaphores = &wait;
  si.pWaitDstStageMask = &stage;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  EXPECT_EQ(vkCreateFence(device_, &fci, nullptr, &fence), VK_SUCCESS);
  std::lock_guard lock(queue_mutex_);
  EXPECT_EQ(vkQueueSubmit(queue_, 1, &si, fence), VK_SUCCESS);
  return fence;
}

void VulkanHost::finish_frame(VkFence fence, VkCommandBuffer cb) {
  EXPECT_EQ(vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
  {
    std::lock_guard lock(queue_mutex_);  // see copy_after: lavapipe lets go of semaphores after the fence
    EXPECT_EQ(vkQueueWaitIdle(queue_), VK_SUCCESS);
  }
  vkDestroyFence(device_, fence, nullptr);
  vkFreeCommandBuffers(device_, pool_, 1, &cb);
}

// --- issue 17 plans
void VulkanHost::run_frame(const std::function<void(VkCommandBuffer)>& f) {
  VkCommandBuffer cb = begin_frame();
  f(cb);
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr,
                       0, nullptr);
  finish_frame(submit_frame(cb), cb);
}

}  // namespace ember::capi_test
