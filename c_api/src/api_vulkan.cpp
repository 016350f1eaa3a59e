// ember.h: Vulkan interop. The arguments are validated here; the work is done by the Vulkan plugin
// (runtime/vulkan_interop.hpp), loaded on first use, so libember needs no Vulkan header or library. Without the
// backend (not compiled, or its plugin missing) every function reports EMBER_ERR_UNSUPPORTED with the reason.
#include <fmt/format.h>

#include <cstring>

#include "c_api/src/boundary.hpp"
#include "c_api/src/runtime/plugin_loader.hpp"
#include "c_api/src/runtime/vulkan_interop.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

constexpr std::size_t kRequirementsV1 = EMBER_STRUCT_END(ember_vulkan_requirements, device_extensions);
constexpr std::size_t kDeviceDescV1 = EMBER_STRUCT_END(ember_vulkan_device_desc, pipeline_cache_size);
constexpr std::size_t kAdoptOptionsV1 = EMBER_STRUCT_END(ember_vulkan_adopt_options, pipeline_cache);
constexpr std::size_t kAllocatorV1 = EMBER_STRUCT_END(ember_vulkan_allocator, free_memory);
constexpr std::size_t kMemoryStatsV1 = EMBER_STRUCT_END(ember_vulkan_memory_stats, host_blocks);
constexpr std::size_t kBufferStateV1 = EMBER_STRUCT_END(ember_vulkan_buffer_state, writable);

// ember_vulkan_requirements2 (issue 17 part 6). VK_API_VERSION_1_1 and VK_QUEUE_COMPUTE_BIT spelled out: this
// file includes no Vulkan header.
constexpr std::size_t kRequirements2V1 = EMBER_STRUCT_END(ember_vulkan_requirements2, device_extensions);
constexpr uint32_t kVulkanApi11 = (1u << 22) | (1u << 12);
constexpr uint32_t kQueueComputeBit = 0x2u;
constexpr uint32_t kOptionalFeatures =
    EMBER_VULKAN_FEATURE_SHADER_INT64 | EMBER_VULKAN_FEATURE_TIMELINE_SEMAPHORE | EMBER_VULKAN_FEATURE_FLOAT16 |
    EMBER_VULKAN_FEATURE_STORAGE_16BIT;

struct FeatureText {
  uint32_t bit;
  const char* name;
  const char* gives;
};
const FeatureText* feature_text(uint32_t feature) {
  static const FeatureText texts[] = {
      {EMBER_VULKAN_FEATURE_SHADER_INT64, "shaderInt64",
       "Int tensors are int64 on the device; without it they are int32 (values outside the int32 range are refused "
       "on upload, arithmetic wraps at 32 bits)"},
      {EMBER_VULKAN_FEATURE_TIMELINE_SEMAPHORE, "timelineSemaphore",
       "Ember submits its own work and signals a timeline semaphore the host waits on; without it Ember never "
       "submits and is usable only by recording into the host's command buffers (host-record mode)"},
      {EMBER_VULKAN_FEATURE_FLOAT16, "shaderFloat16",
       "with adopt option shader_float16 = 1, the GEMM behind matmul, linear and conv2d runs its f16 variant (f16 "
       "operands and products, f32 sums: about three significant digits); without it every Float op is f32"},
      {EMBER_VULKAN_FEATURE_STORAGE_16BIT, "storageBuffer16BitAccess",
       "with adopt option shader_float16 = EMBER_VULKAN_FLOAT16_STORAGE (or AUTO), plans keep the weights their "
       "GEMMs read as f16 copies made when they are built (half the weight bytes per replay, weights rounded to "
       "f16, f32 arithmetic); without it plans read f32 weights"},
  };
  for (const auto& t : texts)
    if (t.bit == feature) return &t;
  return nullptr;
}

ember_vulkan_adopt_options adopt_defaults() {
  ember_vulkan_adopt_options o{};
  o.struct_size = sizeof o;
  o.max_dispatches_per_submit = 64;
  o.shader_int64 = 1;
  o.timeline_semaphore = 1;
  return o;
}

void check_flag(int32_t v, const char* name) {
  if (v != 0 && v != 1) throw ArgumentError(fmt::format("options: {} is {} (0 or 1)", name, v));
}

ember_status adopt_with(const char* fn, const ember_vulkan_device_desc* desc,
                        const ember_vulkan_adopt_options* options, ember_device** out) {
  return guard(fn, [&] {
    auto& o = out_handle(out);  // *out is NULL on failure, UNSUPPORTED included
    const VulkanInterop& vk = vulkan_interop();
    const ember_vulkan_device_desc d = read_struct(desc, ember_vulkan_device_desc{}, kDeviceDescV1, "desc");
    if (!d.instance || !d.physical_device || !d.device)
      throw ArgumentError("desc: instance, physical_device and device are required");
    if (!d.lock_queue != !d.unlock_queue) throw ArgumentError("desc: set both lock_queue and unlock_queue, or neither");
    if (!d.pipeline_cache_data && d.pipeline_cache_size > 0)
      throw ArgumentError("desc: pipeline_cache_data is NULL with pipeline_cache_size " +
                          std::to_string(d.pipeline_cache_size));
    ember_vulkan_adopt_options opts =
        options ? read_struct(options, adopt_defaults(), kAdoptOptionsV1, "options") : adopt_defaults();
    ember_vulkan_allocator allocator{};
    if (opts.allocator) {  // copied: the host's struct need not outlive the call
      allocator = read_struct(opts.allocator, ember_vulkan_allocator{}, kAllocatorV1, "options.allocator");
      if (!allocator.allocate_memory || !allocator.free_memory)
        throw ArgumentError("options.allocator: allocate_memory and free_memory are both required");
      opts.allocator = &allocator;
    }
    check_flag(opts.shader_int64, "shader_int64");
    check_flag(opts.timeline_semaphore, "timeline_semaphore");
    if (opts.shader_float16 < EMBER_VULKAN_FLOAT16_AUTO ||
        opts.shader_float16 > (EMBER_VULKAN_FLOAT16_ARITHMETIC | EMBER_VULKAN_FLOAT16_STORAGE))
      throw ArgumentError(fmt::format("options: shader_float16 is {} (0, EMBER_VULKAN_FLOAT16_ARITHMETIC = 1, "
                                      "EMBER_VULKAN_FLOAT16_STORAGE = 2, both = 3, or EMBER_VULKAN_FLOAT16_AUTO = -1)",
                                      opts.shader_float16));
    o = make_handle<ember_device>(vk.adopt(d, opts));
  });
}

// The Vulkan device behind a handle; NULL (which elsewhere means the CPU) and other backends are refused.
const DynDevice& vulkan_of(const ember_device* device) {
  if (!device) throw ArgumentError("device is NULL (a Vulkan device is needed; NULL means the CPU)");
  const DynDevice& d = use(device, "device");
  if (d.backend != BackendId::Vulkan) throw ArgumentError("device is " + device_name(d) + ", not a Vulkan device");
  return d;
}

const DynTensor& vulkan_tensor_of(const ember_tensor* tensor) {
  const DynTensor& t = use(tensor, "tensor");
  if (t.runtime->id() != BackendId::Vulkan)
    throw ArgumentError("tensor lives on " + device_name(device(t)) + ", not on a Vulkan device");
  return t;
}

ember_status wrap_with(const char* fn, const ember_device* device, uint64_t vk_buffer, uint64_t offset, int32_t dtype,
                       const int64_t* shape, size_t rank, uint32_t flags, ember_tensor** out) {
  return guard(fn, [&] {
    auto& o = out_handle(out);  // *out is NULL on failure, UNSUPPORTED included
    const VulkanInterop& vk = vulkan_interop();
    const DynDevice& dev = vulkan_of(device);
    if (!vk_buffer) throw ArgumentError("vk_buffer is VK_NULL_HANDLE");
    if (flags & ~uint32_t{EMBER_VULKAN_WRAP_WRITABLE})
      throw ArgumentError(fmt::format("flags {:#x}: unknown bits (ember_vulkan_wrap_flags)", flags));
    const DType dt = to_dtype(dtype);
    if (rank == 0) throw ShapeError("shape: rank 0: a wrapped buffer has rank 1.." + std::to_string(kMaxRank));
    const Shape s = to_shape(shape, rank);
    check_shape("shape", s);
    const bool writable = (flags & EMBER_VULKAN_WRAP_WRITABLE) != 0;
    o = make_handle<ember_tensor>(writable ? vk.wrap_buffer_writable(dev, vk_buffer, offset, dt, s)
                                           : vk.wrap_buffer(dev, vk_buffer, offset, dt, s));
  });
}

}  // namespace

// Each function loads the interop first: without the backend every one of them answers UNSUPPORTED, whatever its
// arguments.
extern "C" {

ember_status ember_vulkan_requirements_query(ember_vulkan_requirements* out) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    ember_vulkan_requirements v = vk.requirements();
    write_struct(out, v, kRequirementsV1, "out");
  });
}

ember_status ember_vulkan_device_adopt(const ember_vulkan_device_desc* desc, ember_device** out) {
  return adopt_with(__func__, desc, nullptr, out);
}

ember_status ember_vulkan_tensor_buffer(const ember_tensor* tensor, uint64_t* vk_buffer, uint64_t* offset,
                                        uint64_t* size) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    auto& b = out_value(vk_buffer, "vk_buffer");
    const DynTensor& t = vulkan_tensor_of(tensor);
    const VulkanBufferView view = vk.tensor_buffer(t);
    b = view.buffer;
    if (offset) *offset = view.offset;
    if (size) *size = view.size;
  });
}

ember_status ember_vulkan_tensor_wrap_buffer(const ember_device* device, uint64_t vk_buffer, uint64_t offset,
                                             int32_t dtype, const int64_t* shape, size_t rank, ember_tensor** out) {
  return wrap_with(__func__, device, vk_buffer, offset, dtype, shape, rank, 0, out);
}

ember_status ember_vulkan_submit(const ember_device* device, uint64_t* timeline_value) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    auto& v = out_value(timeline_value, "timeline_value");
    v = vk.submit(vulkan_of(device));
  });
}

ember_status ember_vulkan_timeline_semaphore(const ember_device* device, uint64_t* semaphore) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    auto& s = out_value(semaphore, "semaphore");
    s = vk.timeline_semaphore(vulkan_of(device));
  });
}

ember_status ember_vulkan_wait_semaphore(const ember_device* device, uint64_t host_timeline_semaphore,
                                         uint64_t value) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    const DynDevice& dev = vulkan_of(device);
    if (!host_timeline_semaphore) throw ArgumentError("host_timeline_semaphore is VK_NULL_HANDLE");
    vk.wait_semaphore(dev, host_timeline_semaphore, value);
  });
}

ember_status ember_vulkan_host_wait(const ember_device* device, uint64_t value) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    vk.host_wait(vulkan_of(device), value);
  });
}

ember_status ember_vulkan_synchronize(const ember_device* device) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    vk.synchronize(vulkan_of(device));
  });
}

ember_status ember_vulkan_pipeline_cache_data(const ember_device* device, void* buffer, size_t capacity,
                                              size_t* size) {
  return guard(__func__, [&] {
    auto& n = out_value(size, "size");
    n = 0;
    const VulkanInterop& vk = vulkan_interop();
    const std::vector<uint8_t> bytes = vk.pipeline_cache_data(vulkan_of(device));
    n = bytes.size();
    if (capacity == 0) return;  // a size query (ember.h's Strings rule): EMBER_OK with the size
    if (capacity < bytes.size())
      throw StatusError(EMBER_ERR_BUFFER_TOO_SMALL, fmt::format("buffer of {} bytes for {}", capacity, bytes.size()));
    if (!buffer && !bytes.empty()) throw ArgumentError("buffer is NULL");
    if (!bytes.empty()) std::memcpy(buffer, bytes.data(), bytes.size());
  });
}

// ---------------------------------------------------------------- issue 17: adopt options
ember_status ember_vulkan_adopt_options_init(ember_vulkan_adopt_options* options) {
  return guard(__func__, [&] {
    if (!options) throw ArgumentError("options is NULL");
    *options = adopt_defaults();
  });
}

ember_status ember_vulkan_device_adopt_ex(const ember_vulkan_device_desc* desc,
                                          const ember_vulkan_adopt_options* options, ember_device** out) {
  return adopt_with(__func__, desc, options, out);
}

// ---------------------------------------------------------------- issue 17 parts 1 and 3: host-record mode, deferred
// device-side checks
ember_status ember_vulkan_record_begin(const ember_device* device, void* vk_command_buffer, uint32_t queue_family,
                                       uint64_t frame_index) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    const DynDevice& dev = vulkan_of(device);
    if (!vk_command_buffer) throw ArgumentError("vk_command_buffer is NULL");
    vk.record_begin(dev, vk_command_buffer, queue_family, frame_index);
  });
}

ember_status ember_vulkan_record_end(const ember_device* device) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    vk.record_end(vulkan_of(device));
  });
}

ember_status ember_vulkan_safe_frame(const ember_device* device, uint64_t safe_frame_index) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    vk.safe_frame(vulkan_of(device), safe_frame_index);
  });
}

ember_status ember_vulkan_record_pending(const ember_device* device, uint64_t* frames, uint64_t* resources) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    auto& f = out_value(frames, "frames");
    const auto [n, r] = vk.record_pending(vulkan_of(device));
    f = n;
    if (resources) *resources = r;
  });
}

ember_status ember_vulkan_poll_errors(const ember_device* device) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    vk.poll_errors(vulkan_of(device));
  });
}

// ---------------------------------------------------------------- issue 17 part 8: device lost, readback, queue
ember_status ember_vulkan_simulate_device_lost(const ember_device* device, uint32_t after) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    vk.simulate_device_lost(vulkan_of(device), after);
  });
}

ember_status ember_vulkan_device_is_lost(const ember_device* device, int32_t* lost) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    auto& l = out_value(lost, "lost");
    l = vk.device_lost(vulkan_of(device)) ? 1 : 0;
  });
}

ember_status ember_vulkan_queue_info(const ember_device* device, uint32_t* queue_family, uint32_t* queue_index) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    const VulkanQueueInfo q = vk.queue_info(vulkan_of(device));
    if (queue_family) *queue_family = q.family;
    if (queue_index) *queue_index = q.index;
  });
}

ember_status ember_vulkan_readback_create(const ember_device* device, uint64_t slot_bytes, uint32_t slots,
                                          ember_vulkan_readback** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const VulkanInterop& vk = vulkan_interop();
    const DynDevice& dev = vulkan_of(device);
    constexpr uint32_t kMaxSlots = 4096;
    constexpr uint64_t kMaxBytes = uint64_t{1} << 32;
    if (slot_bytes == 0) throw ArgumentError("slot_bytes is 0");
    if (slots == 0 || slots > kMaxSlots) throw ArgumentError(fmt::format("slots is {} (1..{})", slots, kMaxSlots));
    if (slot_bytes > kMaxBytes / slots)
      throw ArgumentError(fmt::format("{} slots of {} bytes exceed 4 GiB", slots, slot_bytes));
    o = make_handle<ember_vulkan_readback>(vk.readback_create(dev, slot_bytes, slots));
  });
}

ember_status ember_vulkan_readback_enqueue(ember_vulkan_readback* ring, const ember_tensor* tensor, uint64_t* ticket) {
  return guard(__func__, [&] {
    vulkan_interop();
    auto& t = out_value(ticket, "ticket");
    t = 0;
    const auto& rb = use(ring, "ring");
    const DynTensor& x = vulkan_tensor_of(tensor);
    t = rb->enqueue(x);
  });
}

ember_status ember_vulkan_readback_poll(ember_vulkan_readback* ring, uint64_t ticket, void* dst, size_t capacity,
                                       size_t* size, int32_t* ready) {
  return guard(__func__, [&] {
    vulkan_interop();
    auto& r = out_value(ready, "ready");
    r = 0;
    const auto& rb = use(ring, "ring");
    const uint64_t n = rb->bytes(ticket);
    if (size) *size = static_cast<size_t>(n);
    if (capacity == 0 && size && n > 0) return;  // a size query (ember.h's Strings rule): EMBER_OK, *ready 0
    if (capacity < n)
      throw StatusError(EMBER_ERR_BUFFER_TOO_SMALL, fmt::format("buffer of {} bytes for ticket {}'s {} bytes",
                                                                capacity, ticket, n));
    if (!dst && n > 0) throw ArgumentError("dst is NULL");
    r = rb->poll(ticket, dst) ? 1 : 0;
  });
}

ember_status ember_vulkan_readback_free(ember_vulkan_readback* ring) { return free_handle(ring, __func__); }

// ---------------------------------------------------------------- issue 17 parts 4 and 5: memory the host
// controls, resource states for host buffers
ember_status ember_vulkan_allocator_init(ember_vulkan_allocator* allocator) {
  return guard(__func__, [&] {
    if (!allocator) throw ArgumentError("allocator is NULL");
    *allocator = ember_vulkan_allocator{};
    allocator->struct_size = sizeof *allocator;
  });
}

ember_status ember_vulkan_memory_stats_query(const ember_device* device, ember_vulkan_memory_stats* out) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    const DynDevice& dev = vulkan_of(device);
    write_struct(out, vk.memory_stats(dev), kMemoryStatsV1, "out");
  });
}

ember_status ember_vulkan_memory_trim(const ember_device* device) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    vk.memory_trim(vulkan_of(device));
  });
}

ember_status ember_vulkan_memory_set_budget(const ember_device* device, uint64_t budget) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    vk.set_memory_budget(vulkan_of(device), budget);
  });
}

ember_status ember_vulkan_tensor_wrap_buffer_ex(const ember_device* device, uint64_t vk_buffer, uint64_t offset,
                                                int32_t dtype, const int64_t* shape, size_t rank, uint32_t flags,
                                                ember_tensor** out) {
  return wrap_with(__func__, device, vk_buffer, offset, dtype, shape, rank, flags, out);
}

ember_status ember_vulkan_tensor_write_wrapped(const ember_tensor* wrapped, const ember_tensor* src) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    const DynTensor& dst = vulkan_tensor_of(wrapped);
    const DynTensor& from = use(src, "src");
    if (from.runtime->id() != BackendId::Vulkan)
      throw ArgumentError("src lives on " + device_name(device(from)) + ", not on a Vulkan device");
    vk.write_wrapped(dst, from);
  });
}

ember_status ember_vulkan_buffer_acquire(const ember_tensor* tensor, uint32_t src_stage, uint32_t src_access,
                                         uint32_t src_queue_family) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    vk.buffer_acquire(vulkan_tensor_of(tensor), src_stage, src_access, src_queue_family);
  });
}

ember_status ember_vulkan_buffer_release(const ember_tensor* tensor, uint32_t dst_stage, uint32_t dst_access,
                                         uint32_t dst_queue_family) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    vk.buffer_release(vulkan_tensor_of(tensor), dst_stage, dst_access, dst_queue_family);
  });
}

ember_status ember_vulkan_buffer_state_query(const ember_tensor* tensor, ember_vulkan_buffer_state* out) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    const DynTensor& t = vulkan_tensor_of(tensor);
    write_struct(out, vk.buffer_state(t), kBufferStateV1, "out");
  });
}

// ---------------------------------------------------------------- issue 17 part 6: lower feature floor
// A static description (the floor is a property of Ember's shaders and code, not of any device); the interop is
// still loaded first so that a build without the Vulkan backend answers UNSUPPORTED like every function here.
ember_status ember_vulkan_requirements_query2(ember_vulkan_requirements2* out) {
  return guard(__func__, [&] {
    (void)vulkan_interop();
    ember_vulkan_requirements2 v{};
    v.api_version = kVulkanApi11;
    v.spirv_version = 0x00010300u;
    v.queue_flags = kQueueComputeBit;
    v.required_features = 0;
    v.optional_features = kOptionalFeatures;
    v.device_extension_count = 0;
    v.device_extensions = nullptr;
    write_struct(out, v, kRequirements2V1, "out");
  });
}

ember_status ember_vulkan_feature_describe(uint32_t feature, const char** name, const char** gives) {
  return guard(__func__, [&] {
    const FeatureText* text = feature_text(feature);
    if (!text)
      throw ArgumentError(fmt::format("feature {:#x} is not one EMBER_VULKAN_FEATURE_* bit (known: {:#x})", feature,
                                      kOptionalFeatures));
    if (name) *name = text->name;
    if (gives) *gives = text->gives;
  });
}

// --- issue 17 part 6: f16 variants
ember_status ember_vulkan_float16_query(const ember_device* device, uint32_t* features) {
  return guard(__func__, [&] {
    auto& v = out_value(features, "features");
    v = vulkan_interop().float16_variants(vulkan_of(device));
  });
}

}  // extern "C"
