// ember.h: status names, versions, global settings, backends and devices.
#include <fmt/format.h>

#include "backends/cpu/parallel.hpp"
#include "c_api/src/boundary.hpp"
#include "records/recorder.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

// The row of backends/backend_list.hpp for an ember_backend value.
const BackendInfo& backend_row(int32_t b) {
  for (const BackendInfo& row : kBackends)
    if (static_cast<int32_t>(row.id) == b) return row;
  throw ArgumentError(fmt::format("unknown backend {}", b));
}

constexpr std::size_t kBackendInfoV1 = EMBER_STRUCT_END(ember_backend_info, name);

}  // namespace

extern "C" {

const char* ember_status_name(ember_status s) {
  static constexpr const char* names[] = {
      "EMBER_OK",           "EMBER_ERR_INVALID_ARGUMENT", "EMBER_ERR_NULL_HANDLE",  "EMBER_ERR_SHAPE",
      "EMBER_ERR_DTYPE",    "EMBER_ERR_INDEX",            "EMBER_ERR_OUT_OF_MEMORY", "EMBER_ERR_IO",
      "EMBER_ERR_RECORD",   "EMBER_ERR_UNSUPPORTED",      "EMBER_ERR_INTERNAL",     "EMBER_ERR_INVALID_HANDLE",
      "EMBER_ERR_BUFFER_TOO_SMALL", "EMBER_ERR_DEVICE_LOST"};
  if (s < 0 || s >= static_cast<ember_status>(sizeof names / sizeof names[0])) return "EMBER_ERR_UNKNOWN";
  return names[s];
}

const char* ember_version(void) { return ember::engine_version(); }
int32_t ember_abi_version(void) { return EMBER_ABI_VERSION; }

ember_status ember_seed(uint64_t seed) {
  return guard(__func__, [&] { seed_all(seed); });
}

ember_status ember_set_num_threads(int32_t n) {
  return guard(__func__, [&] {
    if (n < 1 || n > 4096) throw ArgumentError("n must be in 1..4096, got " + std::to_string(n));
    cpu::set_num_threads(n);
  });
}

ember_status ember_backend_query(int32_t backend, ember_backend_info* info) {
  return guard(__func__, [&] {
    const BackendInfo& row = backend_row(backend);
    ember_backend_info v{};
    v.backend = backend;
    v.compiled = row.compiled;
    // A GPU backend's plugin is loaded here (the count is probed once); 0 when it cannot be loaded.
    v.device_count = row.compiled ? device_count(row.id) : 0;
    v.usable = v.device_count > 0;
    v.float_dtype = static_cast<int32_t>(DType::F32);  // every backend stores floats as f32
    v.name = row.name.data();  // a NUL-terminated literal of the list
    write_struct(info, v, kBackendInfoV1, "info");
  });
}

ember_status ember_backend_list(int32_t* backends, size_t capacity, size_t* count) {
  return guard(__func__, [&] {
    auto& n = out_value(count, "count");
    if (!backends && capacity > 0) throw ArgumentError("backends is NULL with capacity " + std::to_string(capacity));
    std::size_t k = 0;
    for (const BackendInfo& row : kBackends) {
      if (!row.compiled) continue;
      if (k < capacity) backends[k] = static_cast<int32_t>(row.id);
      ++k;
    }
    n = k;
    if (capacity == 0) return;  // a length query (ember.h's Strings rule): EMBER_OK with the count
    if (k > capacity)
      throw StatusError(EMBER_ERR_BUFFER_TOO_SMALL, std::to_string(k) + " backends, capacity " + std::to_string(capacity));
  });
}

ember_status ember_device_create(int32_t backend, int32_t index, ember_device** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    o = make_handle<ember_device>(make_device(backend_row(backend).id, index));  // loads a GPU backend's plugin
  });
}

ember_status ember_device_info(const ember_device* device, int32_t* backend, int32_t* index) {
  return guard(__func__, [&] {
    const DynDevice& d = use(device, "device");
    if (backend) *backend = static_cast<int32_t>(d.backend);
    if (index) *index = d.index;
  });
}

ember_status ember_device_free(ember_device* device) { return free_handle(device, __func__); }

ember_status ember_no_grad_enter(void) {
  return guard(__func__, [] { no_grad_enter(); });
}
ember_status ember_no_grad_exit(void) {
  return guard(__func__, [] { no_grad_exit(); });
}
ember_status ember_is_grad_enabled(int32_t* enabled) {
  return guard(__func__, [&] { out_value(enabled, "enabled") = grad_enabled() ? 1 : 0; });
}

}  // extern "C"
