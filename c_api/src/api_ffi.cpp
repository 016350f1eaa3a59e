// ember.h issue 12 (FFI-clean additions): the numeric version and an _init for every struct that had none.
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "c_api/src/boundary.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

// The one rule of every _init here: struct_size = this library's sizeof, every other byte zero (padding too, so a
// caller may compare structs bytewise). The whole struct is written because the caller's struct_size is not set
// yet (that is what the call is for).
template <class S>
ember_status zero_init(const char* fn, S* out, const char* what) {
  static_assert(std::is_trivially_copyable_v<S>);
  return guard(fn, [&] {
    if (!out) throw ArgumentError(fmt::format("{} is NULL", what));
    std::memset(static_cast<void*>(out), 0, sizeof *out);
    out->struct_size = sizeof *out;
  });
}

static_assert(EMBER_VERSION_NUMBER == EMBER_VERSION_MAJOR * 1000000 + EMBER_VERSION_MINOR * 1000 + EMBER_VERSION_PATCH,
              "EMBER_VERSION_NUMBER must follow EMBER_VERSION_MAJOR / MINOR / PATCH");

}  // namespace

extern "C" {

int32_t ember_version_number(void) { return EMBER_VERSION_NUMBER; }

ember_status ember_backend_info_init(ember_backend_info* info) { return zero_init(__func__, info, "info"); }
ember_status ember_param_info_init(ember_param_info* info) { return zero_init(__func__, info, "info"); }
ember_status ember_vulkan_requirements_init(ember_vulkan_requirements* out) { return zero_init(__func__, out, "out"); }
ember_status ember_vulkan_device_desc_init(ember_vulkan_device_desc* desc) { return zero_init(__func__, desc, "desc"); }
ember_status ember_vulkan_plan_tensor_info_init(ember_vulkan_plan_tensor_info* info) {
  return zero_init(__func__, info, "info");
}
ember_status ember_vulkan_memory_request_init(ember_vulkan_memory_request* request) {
  return zero_init(__func__, request, "request");
}
ember_status ember_vulkan_memory_block_init(ember_vulkan_memory_block* block) {
  return zero_init(__func__, block, "block");
}
ember_status ember_vulkan_memory_stats_init(ember_vulkan_memory_stats* stats) {
  return zero_init(__func__, stats, "stats");
}
ember_status ember_vulkan_buffer_state_init(ember_vulkan_buffer_state* state) {
  return zero_init(__func__, state, "state");
}
ember_status ember_vulkan_requirements2_init(ember_vulkan_requirements2* out) { return zero_init(__func__, out, "out"); }

}  // extern "C"
