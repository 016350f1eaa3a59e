#include "backends/vulkan/context.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/vulkan/commands.hpp"
#include "backends/vulkan/device_lost.hpp"
#include "backends/vulkan/loader.hpp"
#include "backends/vulkan/memory.hpp"
#include "backends/vulkan/pipelines.hpp"

namespace ember::vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

// The f16 variants asked for: the options, or for Ember's own device also EMBER_VULKAN_FLOAT16 ("1": arithmetic,
// as before "storage" existed; "storage": storage; "auto": each the device has).
struct Float16Wish {
  bool arithmetic = false, storage = false, automatic = false;
};
Float16Wish float16_wish(const ContextOptions& o, bool read_env) {
  Float16Wish w{o.shader_float16, o.storage_float16, o.float16_auto};
  const char* v = read_env ? std::getenv("EMBER_VULKAN_FLOAT16") : nullptr;
  if (v && *v && std::strcmp(v, "0") != 0) {
    if (std::strcmp(v, "auto") == 0) w.automatic = true;
    else if (std::strcmp(v, "storage") == 0) w.storage = true;
    else w.arithmetic = true;
  }
  if (w.automatic) w.arithmetic = w.storage = true;
  return w;
}

bool has_layer(const Functions& fn, const char* name) {
  uint32_t n = 0;
  fn.EnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  fn.EnumerateInstanceLayerProperties(&n, layers.data());
  for (auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

// An instance extension of the loader and drivers (layer null) or of one layer.
bool has_instance_extension(const Functions& fn, const char* name, const char* layer = nullptr) {
  uint32_t n = 0;
  fn.EnumerateInstanceExtensionProperties(layer, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  fn.EnumerateInstanceExtensionProperties(layer, &n, exts.data());
  for (auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

}  // namespace

Requirements requirements() { return Requirements{}; }

uint32_t int_element_bytes(const Context& ctx) { return ctx.int64() ? 8u : 4u; }

Context::Context(const ContextOptions& options) {
  validation_ = options.validation || env_flag("EMBER_VULKAN_VALIDATION");
  const char* sync = std::getenv("EMBER_VULKAN_SYNC_VALIDATION");
  sync_validation_ = validation_ && (sync && *sync ? std::strcmp(sync, "0") != 0 : options.synchronization_validation);
  on_message_ = options.on_validation_message;
  owns_instance_ = true;
  owns_device_ = true;
  try {
    create_instance(options);
    pick_physical_device(options);
    create_device(options);
    read_info(options);
    create_subsystems(options);
  } catch (...) {
    release();
    throw;
  }
}

Context::Context(const ExternalDevice& external, const ContextOptions& options) : external_(external) {
  // The host says which features it enabled on its device; Ember uses nothing else.
  int64_ = options.shader_int64;
  timeline_semaphores_ = options.timeline_semaphore;
  float16_ = options.shader_float16;
  float16_storage_ = options.storage_float16;
  if (!external.instance || !external.physical_device || !external.device)
    throw ArgumentError("vulkan: an external device needs its VkInstance, VkPhysicalDevice and VkDevice");
  validation_ = false;  // the host owns the instance and its layers
  instance_ = external.instance;
  physical_ = external.physical_device;
  device_ = external.device;
  queue_family_ = external.queue_family;
  queue_index_ = external.queue_index;
  try {
    // The host's own vkGetInstanceProcAddr when it gave one (its loader and layers), else the system loader's.
    fn_.load_instance(external.get_instance_proc_addr ? external.get_instance_proc_addr
                                                      : loader_get_instance_proc_addr(),
                      instance_);
    uint32_t nq = 0;
    fn_.GetPhysicalDeviceQueueFamilyProperties(physical_, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> families(nq);
    fn_.GetPhysicalDeviceQueueFamilyProperties(physical_, &nq, families.data());
    if (queue_family_ >= nq || !(families[queue_family_].queueFlags & VK_QUEUE_COMPUTE_BIT) ||
        queue_index_ >= families[queue_family_].queueCount)
      throw ArgumentError("vulkan: the external queue family " + std::to_string(queue_family_) + " / index " +
                          std::to_string(queue_index_) + " does not exist or cannot run compute work");
    if (options.float16_auto) adopt_float16_auto();
    fn_.load_device(device_);
    fn_.GetDeviceQueue(device_, queue_family_, queue_index_, &queue_);
    read_info(options);
    create_subsystems(options);
  } catch (...) {
    release();
    throw;
  }
}

Context::~Context() { release(); }

void Context::release() noexcept {
  if (device_ && fn_.DeviceWaitIdle) {
    // Only Ember's own work needs to finish; on a shared device waiting for the whole device would stall the host.
    if (stream_) {
      try {
        stream_->finish();
      } catch (...) {
      }
      // A driver may still touch the semaphores of Ember's last submit after its fence signalled: lavapipe's
      // queue thread signals the fence and only then links the signalled point into the timeline semaphore, so
      // the stream destroying that semaphore as soon as the fence read signalled let the thread write into
      // freed memory (a segfault in a lavapipe thread, a few runs in a hundred of vulkan_internals on a loaded
      // machine: tests/vulkan_teardown_test.cpp). Drain the queue once, under the host's lock on a shared one,
      // before the stream, the allocator and the device go; on a device of Ember's own nothing else waits.
      // Drained even when the finish above threw (a lost device answers at once).
      try {
        if (queue_) with_queue([&](VkQueue q) { fn_.QueueWaitIdle(q); });
      } catch (...) {
      }
    }
  }
  // A simulated loss left the GPU running what was submitted before it (a real loss does not): let that finish
  // before Ember's objects go, so destroying them stays valid.
  if (injection_) injection_->drain();
  stream_.reset();
  extensions_.clear();  // may free allocations and Vulkan objects: before the allocator and the device
  pipelines_.reset();
  allocator_.reset();
  if (owns_device_ && device_) fn_.DestroyDevice(device_, nullptr);
  if (messenger_ && fn_.DestroyDebugUtilsMessengerEXT) fn_.DestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (owns_instance_ && instance_) fn_.DestroyInstance(instance_, nullptr);
  device_ = VK_NULL_HANDLE;
  instance_ = VK_NULL_HANDLE;
  messenger_ = VK_NULL_HANDLE;
}

void Context::create_instance(const ContextOptions&) {
  const PFN_vkGetInstanceProcAddr gipa = loader_get_instance_proc_addr();
  fn_.load_global(gipa);
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "ember";
  app.pEngineName = "ember";
  app.apiVersion = VK_API_VERSION_1_2;
  std::vector<const char*> layers, extensions;
  if (validation_) {
    if (!has_layer(fn_, kValidationLayer))
      throw VulkanError("vulkan: validation requested but VK_LAYER_KHRONOS_validation is not installed "
                        "(Debian: vulkan-validationlayers)");
    layers.push_back(kValidationLayer);
  }
  const bool debug_utils = has_instance_extension(fn_, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  if (validation_ && debug_utils) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  // Synchronization validation is off in the layer by default; VK_EXT_validation_features (provided by the layer
  // itself) turns it on for this instance only, without the layer's settings file or environment.
  const VkValidationFeatureEnableEXT sync_feature = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  if (sync_validation_) {
    if (!has_instance_extension(fn_, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME, kValidationLayer))
      throw VulkanError("vulkan: synchronization validation requested but the installed VK_LAYER_KHRONOS_validation "
                        "lacks VK_EXT_validation_features (set EMBER_VULKAN_SYNC_VALIDATION=0 to go without it)");
    extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = &sync_feature;
    ci.pNext = &features;
  }
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  check(fn_.CreateInstance(&ci, nullptr, &instance_), "vkCreateInstance");
  fn_.load_instance(gipa, instance_);
  if (validation_ && debug_utils) install_messenger();
}

void Context::install_messenger() {
  VkDebugUtilsMessengerCreateInfoEXT ci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  ci.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  ci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  ci.pfnUserCallback = &Context::on_message;
  ci.pUserData = this;
  check(fn_.CreateDebugUtilsMessengerEXT(instance_, &ci, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
}

VKAPI_ATTR VkBool32 VKAPI_CALL Context::on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* self) {
  auto* ctx = static_cast<Context*>(self);
  std::string msg = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error: " : "warning: ";
  msg += data && data->pMessage ? data->pMessage : "(no message)";
  ctx->validation_count_.fetch_add(1);
  if (ctx->on_message_) ctx->on_message_(msg);
  else std::fprintf(stderr, "ember vulkan validation %s\n", msg.c_str());  // validation on without a hook
  std::lock_guard lock(ctx->messages_mutex_);
  if (ctx->messages_.size() < 64) ctx->messages_.push_back(std::move(msg));
  return VK_FALSE;
}

std::vector<std::string> Context::validation_messages() const {
  std::lock_guard lock(messages_mutex_);
  return messages_;
}

void Context::clear_validation_messages() {
  std::lock_guard lock(messages_mutex_);
  messages_.clear();
  validation_count_.store(0);
}

void Context::pick_physical_device(const ContextOptions& options) {
  uint32_t n = 0;
  check(fn_.EnumeratePhysicalDevices(instance_, &n, nullptr), "vkEnumeratePhysicalDevices");
  if (n == 0) throw VulkanError("vulkan: no physical device (install a driver; mesa-vulkan-drivers gives lavapipe)");
  std::vector<VkPhysicalDevice> devices(n);
  check(fn_.EnumeratePhysicalDevices(instance_, &n, devices.data()), "vkEnumeratePhysicalDevices");
  int index = options.device_index;
  if (const char* e = std::getenv("EMBER_VULKAN_DEVICE"); e && *e) index = std::atoi(e);
  if (index >= 0) {
    if (static_cast<uint32_t>(index) >= n)
      throw VulkanError("vulkan: device index " + std::to_string(index) + " out of range (" + std::to_string(n) +
                        " devices)");
    physical_ = devices[static_cast<uint32_t>(index)];
  } else {
    int best = 99;
    for (auto d : devices) {
      VkPhysicalDeviceProperties p;
      fn_.GetPhysicalDeviceProperties(d, &p);
      if (p.apiVersion < VK_API_VERSION_1_2) continue;
      if (type_rank(p.deviceType) < best) {
        best = type_rank(p.deviceType);
        physical_ = d;
      }
    }
    if (!physical_) throw VulkanError("vulkan: no device supports Vulkan 1.2");
  }
  uint32_t nq = 0;
  fn_.GetPhysicalDeviceQueueFamilyProperties(physical_, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  fn_.GetPhysicalDeviceQueueFamilyProperties(physical_, &nq, families.data());
  // By default a compute-only family (async compute on discrete GPUs), else any family with compute.
  QueuePreference preference = options.queue_preference;
  int family = options.queue_family;
  uint32_t queue_index = options.queue_index;
  apply_queue_env(preference, family, queue_index);
  const QueueChoice q = choose_queue(families, preference, family, queue_index);
  queue_family_ = q.family;
  queue_index_ = q.index;
}

void Context::create_device(const ContextOptions& options) {
  VkPhysicalDeviceVulkan11Features have11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features have12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  have12.pNext = &have11;
  VkPhysicalDeviceFeatures2 have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  have.pNext = &have12;
  fn_.GetPhysicalDeviceFeatures2(physical_, &have);
  // Without shaderInt64 (asked for, or missing) Int tensors are int32 on the device: a lower floor, not an error.
  int64_ = options.shader_int64 && !env_flag("EMBER_VULKAN_NO_INT64") && have.features.shaderInt64;
  // Ember's own device has no host command buffer to record into: it needs timeline semaphores to submit.
  if (!have12.timelineSemaphore) throw VulkanError("vulkan: the device lacks timelineSemaphore");
  if (!options.timeline_semaphore)
    throw ArgumentError("vulkan: Ember's own device always submits its work: timeline_semaphore = false applies to "
                        "adopted devices only");

  VkPhysicalDeviceVulkan11Features want11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features want12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  want12.timelineSemaphore = VK_TRUE;
  want12.pNext = &want11;
  VkPhysicalDeviceFeatures2 want{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  want.pNext = &want12;
  want.features.shaderInt64 = int64_ ? VK_TRUE : VK_FALSE;
  // f16 variants only when asked for and where the device has them (each of the two on its own feature).
  const Float16Wish f16 = float16_wish(options, /*read_env=*/true);
  float16_ = f16.arithmetic && have12.shaderFloat16;
  float16_storage_ = f16.storage && have11.storageBuffer16BitAccess;
  want12.shaderFloat16 = float16_ ? VK_TRUE : VK_FALSE;
  want11.storageBuffer16BitAccess = float16_storage_ ? VK_TRUE : VK_FALSE;

  const std::vector<float> priorities(queue_index_ + 1, 1.0f);  // the queues up to the one Ember uses
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueFamilyIndex = queue_family_;
  q.queueCount = queue_index_ + 1;
  q.pQueuePriorities = priorities.data();
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.pNext = &want;
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &q;
  check(fn_.CreateDevice(physical_, &ci, nullptr, &device_), "vkCreateDevice");
  fn_.load_device(device_);
  fn_.GetDeviceQueue(device_, queue_family_, queue_index_, &queue_);
}

void Context::adopt_float16_auto() {
  // The host enabled every f16 feature its physical device has: read which those are. shaderFloat16's struct is
  // core in Vulkan 1.2 (VK_KHR_shader_float16_int8 before): chained only on a 1.2 device, so a 1.1 device runs
  // f16 arithmetic only when the host says so explicitly (shader_float16).
  VkPhysicalDeviceProperties props{};
  fn_.GetPhysicalDeviceProperties(physical_, &props);
  VkPhysicalDevice16BitStorageFeatures storage{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features arithmetic{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDeviceFeatures2 have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  have.pNext = &storage;
  if (props.apiVersion >= VK_API_VERSION_1_2) storage.pNext = &arithmetic;
  fn_.GetPhysicalDeviceFeatures2(physical_, &have);
  float16_ = arithmetic.shaderFloat16 == VK_TRUE;
  float16_storage_ = storage.storageBuffer16BitAccess == VK_TRUE;
}

void Context::read_info(const ContextOptions& options) {
  VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p2.pNext = &sub;
  fn_.GetPhysicalDeviceProperties2(physical_, &p2);
  const auto& p = p2.properties;
  info_.name = p.deviceName;
  info_.vendor_id = p.vendorID;
  info_.device_id = p.deviceID;
  info_.api_version = p.apiVersion;
  info_.type = p.deviceType;
  info_.max_storage_buffer_range = p.limits.maxStorageBufferRange;
  info_.min_storage_buffer_offset_alignment = p.limits.minStorageBufferOffsetAlignment;
  info_.max_compute_shared_memory = p.limits.maxComputeSharedMemorySize;
  info_.max_workgroup_invocations = p.limits.maxComputeWorkGroupInvocations;
  info_.max_workgroup_count_x = p.limits.maxComputeWorkGroupCount[0];
  info_.subgroup_size = sub.subgroupSize;
  info_.unified_memory = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                         p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  info_.device_local_tensors = options.device_local_tensors || env_flag("EMBER_VULKAN_DEVICE_LOCAL");
  info_.synchronization_validation = sync_validation_;
  fn_.GetPhysicalDeviceMemoryProperties(physical_, &memory_props_);
}

void Context::create_subsystems(const ContextOptions& options) {
  allocator_ = std::make_unique<Allocator>(
      *this, MemoryOptions{options.host_allocator, options.memory_budget, options.tensor_buffer_usage});
  pipelines_ = std::make_unique<Pipelines>(*this, options.pipeline_cache, options.host_pipeline_cache);
  stream_ = std::make_unique<Stream>(*this, options.dispatches_per_submit);
  if (const int64_t after = injected_loss_from_env(); after >= 0) simulate_device_lost(static_cast<uint32_t>(after));
}

void Context::with_queue(const std::function<void(VkQueue)>& f) {
  if (external_.lock_queue) external_.lock_queue(external_.user);
  try {
    f(queue_);
  } catch (...) {
    if (external_.unlock_queue) external_.unlock_queue(external_.user);
    throw;
  }
  if (external_.unlock_queue) external_.unlock_queue(external_.user);
}

Context::Extension& Context::extension(const std::string& key,
                                      const std::function<std::unique_ptr<Extension>()>& make) {
  std::lock_guard lock(mutex_);
  for (auto& [k, e] : extensions_)
    if (k == key) return *e;
  extensions_.emplace_back(key, make());
  return *extensions_.back().second;
}

void Context::mark_lost(const char* call) {
  std::lock_guard lock(lost_mutex_);
  if (lost_.load()) return;
  lost_call_ = call;
  lost_.store(true, std::memory_order_release);
}

void Context::throw_result(VkResult r, const char* call) {
  if (r == VK_ERROR_DEVICE_LOST) mark_lost(call);
  vk::throw_result(r, call);
}

void Context::ensure_alive() const {
  if (!lost()) return;
  std::lock_guard lock(lost_mutex_);
  throw DeviceLost("vulkan: the device was lost (VK_ERROR_DEVICE_LOST from " + lost_call_ +
                   "); nothing runs on it any more: free every handle made on it, then create or adopt the device "
                   "again and reload saved records");
}

void Context::simulate_device_lost(uint32_t after) {
  std::lock_guard lock(mutex_);
  if (injection_) injection_->rearm(after);
  else injection_ = LossInjection::install(*this, fn_, after);
}

uint64_t Context::calls_after_simulated_loss() const { return injection_ ? injection_->calls_after_loss() : 0; }

void Context::synchronize() {
  std::lock_guard lock(mutex_);
  stream_->finish();
}

std::vector<uint8_t> Context::save_pipeline_cache() const { return pipelines_->save_cache(); }

namespace {
std::mutex g_default_mutex;
ContextOptions g_default_options;
// Never destroyed by static destruction: at exit, layers and drivers loaded after Ember's statics were built have
// already run their own destructors, and tearing a device down through them hangs or crashes (seen with the
// validation layer). The OS reclaims everything at exit; shutdown_default() tears down explicitly before that.
std::shared_ptr<Context>& g_default = *new std::shared_ptr<Context>;
std::string g_default_error;
}  // namespace

void shutdown_default() {
  std::shared_ptr<Context> last;
  {
    std::lock_guard lock(g_default_mutex);
    last = std::move(g_default);
  }
  last.reset();  // destroyed here unless tensors still hold it
}

void set_default_options(const ContextOptions& options) {
  std::lock_guard lock(g_default_mutex);
  g_default_options = options;
}

std::shared_ptr<Context> default_context() {
  std::lock_guard lock(g_default_mutex);
  if (!g_default) {
    if (!g_default_error.empty()) throw VulkanError(g_default_error);
    try {
      g_default = std::make_shared<Context>(g_default_options);
    } catch (const std::exception& e) {
      g_default_error = e.what();  // do not retry instance creation on every op
      throw;
    }
  }
  return g_default;
}

uint32_t physical_device_count(std::string* why) {
  std::string reason;
  uint32_t n = 0;
  try {
    const PFN_vkGetInstanceProcAddr gipa = loader_get_instance_proc_addr();
    Functions fn;
    fn.load_global(gipa);
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "ember";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ci.pApplicationInfo = &app;
    VkInstance instance = VK_NULL_HANDLE;
    if (VkResult r = fn.CreateInstance(&ci, nullptr, &instance); r != VK_SUCCESS) {
      reason = std::string("vkCreateInstance failed (") + result_name(r) + "): no Vulkan driver is installed";
    } else {
      fn.load_instance(gipa, instance);
      if (VkResult r = fn.EnumeratePhysicalDevices(instance, &n, nullptr); r != VK_SUCCESS) {
        reason = std::string("vkEnumeratePhysicalDevices failed (") + result_name(r) + ")";
        n = 0;
      } else if (n == 0) {
        reason = "no Vulkan physical device (a driver is needed; mesa-vulkan-drivers provides lavapipe)";
      }
      fn.DestroyInstance(instance, nullptr);
    }
  } catch (const std::exception& e) {  // no loader
    reason = e.what();
    n = 0;
  }
  if (why) *why = reason;
  return n;
}

bool available(std::string* why) {
  try {
    default_context();
    return true;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return false;
  }
}

}  // namespace ember::vk
