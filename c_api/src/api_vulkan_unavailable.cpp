// ember.h: the Vulkan interop functions of a libember built without the Vulkan backend. They exist so that the
// exported ABI is the same in every build; each reports EMBER_ERR_UNSUPPORTED (api_vulkan.cpp is the real one).
#include "c_api/src/boundary.hpp"

using namespace ember::capi;

namespace {

ember_status unavailable(const char* fn) noexcept {
  return guard(fn, [] { throw UnsupportedError("this libember was built without the Vulkan backend"); });
}

}  // namespace

extern "C" {

ember_status ember_vulkan_requirements_query(ember_vulkan_requirements*) { return unavailable(__func__); }
ember_status ember_vulkan_device_adopt(const ember_vulkan_device_desc*, ember_device** out) {
  if (out) *out = nullptr;  // ember.h: *out is NULL on failure
  return unavailable(__func__);
}
ember_status ember_vulkan_tensor_buffer(const ember_tensor*, uint64_t*, uint64_t*, uint64_t*) {
  return unavailable(__func__);
}
ember_status ember_vulkan_tensor_wrap_buffer(const ember_device*, uint64_t, uint64_t, int32_t, const int64_t*, size_t,
                                             ember_tensor** out) {
  if (out) *out = nullptr;
  return unavailable(__func__);
}
ember_status ember_vulkan_submit(const ember_device*, uint64_t*) { return unavailable(__func__); }
ember_status ember_vulkan_timeline_semaphore(const ember_device*, uint64_t*) { return unavailable(__func__); }
ember_status ember_vulkan_wait_semaphore(const ember_device*, uint64_t, uint64_t) { return unavailable(__func__); }
ember_status ember_vulkan_host_wait(const ember_device*, uint64_t) { return unavailable(__func__); }
ember_status ember_vulkan_synchronize(const ember_device*) { return unavailable(__func__); }
ember_status ember_vulkan_pipeline_cache_data(const ember_device*, void*, size_t, size_t* size) {
  if (size) *size = 0;
  return unavailable(__func__);
}

}  // extern "C"
