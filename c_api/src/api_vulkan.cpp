// ember.h: Vulkan interop (this libember has the Vulkan backend; api_vulkan_unavailable.cpp is the other build).
// Vulkan handles cross the C boundary as void* (dispatchable) and uint64_t (non-dispatchable), so ember.h needs no
// <vulkan/vulkan.h>; the conversions are here.
#include <cstring>
#include <type_traits>

#include "backends/vulkan/interop.hpp"
#include "c_api/src/boundary.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

constexpr std::size_t kRequirementsV1 = EMBER_STRUCT_END(ember_vulkan_requirements, device_extensions);
constexpr std::size_t kDeviceDescV1 = EMBER_STRUCT_END(ember_vulkan_device_desc, pipeline_cache_size);

// Non-dispatchable handles are pointers on 64-bit platforms and uint64_t on 32-bit ones.
template <class H>
H handle_from_u64(uint64_t v) {
  if constexpr (std::is_pointer_v<H>) return reinterpret_cast<H>(static_cast<std::uintptr_t>(v));
  else return static_cast<H>(v);
}
template <class H>
uint64_t handle_to_u64(H h) {
  if constexpr (std::is_pointer_v<H>) return static_cast<uint64_t>(reinterpret_cast<std::uintptr_t>(h));
  else return static_cast<uint64_t>(h);
}

// The Vulkan device behind a handle; NULL (which elsewhere means the CPU) and other backends are refused.
VulkanDevice vulkan_of(const ember_device* device) {
  if (!device) throw ArgumentError("device is NULL (a Vulkan device is needed; NULL means the CPU)");
  const DynDevice& d = use(device, "device");
  if (d.backend != BackendId::Vulkan) throw ArgumentError("device is " + device_name(d) + ", not a Vulkan device");
  return d.vulkan;
}

const BackendTensor<VulkanAd>& vulkan_tensor_of(const ember_tensor* tensor) {
  const DynTensor& t = use(tensor, "tensor");
  if (auto* v = std::get_if<BackendTensor<VulkanAd>>(&t)) return *v;
  throw ArgumentError("tensor lives on " + device_name(device(t)) + ", not on a Vulkan device");
}

// What requirements() lists, kept for the process: ember.h hands out the names with static storage.
const std::vector<const char*>& required_extensions() {
  static const std::vector<const char*> names = vulkan::requirements().device_extensions;
  return names;
}

}  // namespace

extern "C" {

ember_status ember_vulkan_requirements_query(ember_vulkan_requirements* out) {
  return guard(__func__, [&] {
    const vulkan::Requirements r = vulkan::requirements();
    ember_vulkan_requirements v{};
    v.api_version = r.api_version;
    v.queue_flags = r.queue_flags;
    v.shader_int64 = r.shader_int64 ? 1 : 0;
    v.timeline_semaphore = r.timeline_semaphore ? 1 : 0;
    v.device_extension_count = static_cast<uint32_t>(required_extensions().size());
    v.device_extensions = required_extensions().empty() ? nullptr : required_extensions().data();
    write_struct(out, v, kRequirementsV1, "out");
  });
}

ember_status ember_vulkan_device_adopt(const ember_vulkan_device_desc* desc, ember_device** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const ember_vulkan_device_desc d = read_struct(desc, ember_vulkan_device_desc{}, kDeviceDescV1, "desc");
    if (!d.instance || !d.physical_device || !d.device)
      throw ArgumentError("desc: instance, physical_device and device are required");
    if (!d.lock_queue != !d.unlock_queue) throw ArgumentError("desc: set both lock_queue and unlock_queue, or neither");
    if (!d.pipeline_cache_data && d.pipeline_cache_size > 0)
      throw ArgumentError("desc: pipeline_cache_data is NULL with pipeline_cache_size " +
                          std::to_string(d.pipeline_cache_size));
    vulkan::ExternalDevice ext;
    ext.instance = static_cast<VkInstance>(d.instance);
    ext.physical_device = static_cast<VkPhysicalDevice>(d.physical_device);
    ext.device = static_cast<VkDevice>(d.device);
    ext.queue_family = d.queue_family;
    ext.queue_index = d.queue_index;
    ext.get_instance_proc_addr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(d.get_instance_proc_addr);
    ext.lock_queue = d.lock_queue;
    ext.unlock_queue = d.unlock_queue;
    ext.user = d.user;
    vulkan::ContextOptions options;
    if (d.pipeline_cache_size > 0) {
      const auto* bytes = static_cast<const uint8_t*>(d.pipeline_cache_data);
      options.pipeline_cache.assign(bytes, bytes + d.pipeline_cache_size);
    }
    VulkanDevice dev = vulkan::adopt(ext, options);
    o = make_handle<ember_device>(DynDevice{BackendId::Vulkan, -1, std::move(dev)});
  });
}

ember_status ember_vulkan_tensor_buffer(const ember_tensor* tensor, uint64_t* vk_buffer, uint64_t* offset,
                                        uint64_t* size) {
  return guard(__func__, [&] {
    auto& b = out_value(vk_buffer, "vk_buffer");
    const vulkan::BufferView view = visit_kind(vulkan_tensor_of(tensor), [](auto k, const auto& p) {
      if constexpr (std::is_same_v<decltype(k), Float>) return vulkan::buffer_of(p.value);  // the autodiff value
      else return vulkan::buffer_of(p);
    });
    b = handle_to_u64(view.buffer);
    if (offset) *offset = view.offset;
    if (size) *size = view.size;
  });
}

ember_status ember_vulkan_tensor_wrap_buffer(const ember_device* device, uint64_t vk_buffer, uint64_t offset,
                                             int32_t dtype, const int64_t* shape, size_t rank, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const VulkanDevice dev = vulkan_of(device);
    if (!vk_buffer) throw ArgumentError("vk_buffer is VK_NULL_HANDLE");
    const DType dt = to_dtype(dtype);
    const Shape s = to_shape(shape, rank);
    check_shape("shape", s);
    const auto buffer = handle_from_u64<VkBuffer>(vk_buffer);
    switch (dt) {
      case DType::F32:
        o = make_handle<ember_tensor>(
            DynTensor(wrap<VulkanAd, Float>(VulkanAd::from_inner(vulkan::wrap_buffer<float>(dev, buffer, offset, s)))));
        return;
      case DType::I64:
        o = make_handle<ember_tensor>(DynTensor(wrap<VulkanAd, Int>(vulkan::wrap_buffer<int64_t>(dev, buffer, offset, s))));
        return;
      case DType::Bool:
        o = make_handle<ember_tensor>(
            DynTensor(wrap<VulkanAd, Bool>(vulkan::wrap_buffer<uint32_t>(dev, buffer, offset, s))));
        return;
      default: break;
    }
    throw KindError("dtype " + std::string(dtype_name(dt)) +
                    " cannot be wrapped: Vulkan tensors store F32, I64 and BOOL (as 32-bit words)");
  });
}

ember_status ember_vulkan_submit(const ember_device* device, uint64_t* timeline_value) {
  return guard(__func__, [&] {
    auto& v = out_value(timeline_value, "timeline_value");
    v = vulkan::submit(vulkan_of(device));
  });
}

ember_status ember_vulkan_timeline_semaphore(const ember_device* device, uint64_t* semaphore) {
  return guard(__func__, [&] {
    auto& s = out_value(semaphore, "semaphore");
    s = handle_to_u64(vulkan::timeline(vulkan_of(device)));
  });
}

ember_status ember_vulkan_wait_semaphore(const ember_device* device, uint64_t host_timeline_semaphore,
                                         uint64_t value) {
  return guard(__func__, [&] {
    const VulkanDevice dev = vulkan_of(device);
    if (!host_timeline_semaphore) throw ArgumentError("host_timeline_semaphore is VK_NULL_HANDLE");
    vulkan::wait_for(dev, handle_from_u64<VkSemaphore>(host_timeline_semaphore), value);
  });
}

ember_status ember_vulkan_host_wait(const ember_device* device, uint64_t value) {
  return guard(__func__, [&] { vulkan::host_wait(vulkan_of(device), value); });
}

ember_status ember_vulkan_synchronize(const ember_device* device) {
  return guard(__func__, [&] { vulkan::synchronize(vulkan_of(device)); });
}

ember_status ember_vulkan_pipeline_cache_data(const ember_device* device, void* buffer, size_t capacity,
                                              size_t* size) {
  return guard(__func__, [&] {
    auto& n = out_value(size, "size");
    n = 0;
    const std::vector<uint8_t> bytes = vulkan_of(device).get()->save_pipeline_cache();
    n = bytes.size();
    if (capacity < bytes.size())
      throw StatusError(EMBER_ERR_BUFFER_TOO_SMALL,
                        "buffer of " + std::to_string(capacity) + " bytes for " + std::to_string(bytes.size()));
    if (!buffer && !bytes.empty()) throw ArgumentError("buffer is NULL");
    if (!bytes.empty()) std::memcpy(buffer, bytes.data(), bytes.size());
  });
}

}  // extern "C"
