// The Vulkan plugin's side of ember.h's ember_vulkan_* functions: converting the C handles (void* / uint64_t) to
// Vulkan's and calling the backend's interop (backends/vulkan/interop.hpp). api_vulkan.cpp has validated the
// arguments and checked that devices and tensors are of this runtime.
#include "c_api/src/plugins/vulkan_interop_impl.hpp"

#include <fmt/format.h>

#include <type_traits>

#include "backends/vulkan/interop.hpp"
#include "backends/vulkan/readback.hpp"
#include "backends/vulkan/resource_state.hpp"
#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/plan.hpp"
#include "c_api/src/runtime/backend_tensor.hpp"

namespace ember::capi {
namespace {

using VulkanAd = Autodiff<Vulkan>;

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

// What requirements() lists, kept for the process: ember.h hands out the names with static storage.
const std::vector<const char*>& required_extensions() {
  static const std::vector<const char*> names = vulkan::requirements().device_extensions;
  return names;
}

const VulkanDevice& vulkan_of(const DynDevice& d) {
  on_backend<VulkanAd>(d, [](auto) {});
  return BackendTraits<VulkanAd>::device(d);
}

// The storage of a Vulkan tensor of any kind (autodiff floats: their value).
template <class F>
auto with_storage(const DynTensor& t, F&& f) {
  return visit_kind(as_backend<VulkanAd>(t, "tensor"), [&](auto k, const auto& p) {
    if constexpr (std::is_same_v<decltype(k), Float>) return f(p.value);
    else return f(p);
  });
}

class Readback final : public VulkanReadback {
 public:
  Readback(std::shared_ptr<vk::Context> ctx, uint64_t slot_bytes, uint32_t slots)
      : ring_(std::move(ctx), slot_bytes, slots) {}
  uint64_t enqueue(const DynTensor& t) override {
    return with_storage(t, [&](const auto& p) {
      if (p.ctx != ring_.context()) throw ArgumentError("tensor lives on another Vulkan device than the ring");
      return ring_.enqueue(p.alloc, p.bytes());
    });
  }
  uint64_t bytes(uint64_t ticket) const override { return ring_.bytes(ticket); }
  bool poll(uint64_t ticket, void* dst) override { return ring_.poll(ticket, dst); }

 private:
  vk::ReadbackRing ring_;
};

// The host's C callbacks as the backend's HostAllocator; the struct is copied at adopt, so the host's copy need not
// outlive the call.
vk::HostAllocator host_allocator_of(const ember_vulkan_allocator& a) {
  vk::HostAllocator h;
  h.allocate = [a](const vk::HostAllocator::Request& r, vk::HostAllocator::Grant& g) {
    ember_vulkan_memory_request req{};
    req.struct_size = sizeof req;
    req.size = r.size;
    req.alignment = r.alignment;
    req.memory_type_bits = r.memory_type_bits;
    req.required_flags = r.required;
    req.preferred_flags = r.preferred;
    req.mapped = r.mapped ? 1 : 0;
    req.staging = r.staging ? 1 : 0;
    ember_vulkan_memory_block out{};
    out.struct_size = sizeof out;
    const int32_t result = a.allocate_memory(a.user, &req, &out);
    if (result != 0) return result < 0 ? static_cast<VkResult>(result) : VK_ERROR_UNKNOWN;
    g.memory = handle_from_u64<VkDeviceMemory>(out.memory);
    g.offset = out.offset;
    g.mapped = out.mapped;
    g.memory_type = out.memory_type;
    g.allocation = out.allocation;
    return VK_SUCCESS;
  };
  h.release = [a](const vk::HostAllocator::Grant& g) {
    ember_vulkan_memory_block b{};
    b.struct_size = sizeof b;
    b.memory = handle_to_u64(g.memory);
    b.offset = g.offset;
    b.mapped = g.mapped;
    b.memory_type = g.memory_type;
    b.allocation = g.allocation;
    a.free_memory(a.user, &b);
  };
  return h;
}

// A Vulkan tensor's context, storage, element size and kind (an autodiff float tensor: its value).
struct Storage {
  std::shared_ptr<vk::Context> ctx;
  std::shared_ptr<vk::Allocation> alloc;
  uint64_t bytes = 0;
  Kind kind = Kind::Float;
};
Storage storage_of(const DynTensor& t) {
  return visit_kind(as_backend<VulkanAd>(t, "tensor"), [](auto k, const auto& p) {
    const auto& v = [&]() -> const auto& {
      if constexpr (std::is_same_v<decltype(k), Float>) return p.value;
      else return p;
    }();
    const Kind kind = std::is_same_v<decltype(k), Float> ? Kind::Float
                      : std::is_same_v<decltype(k), Int> ? Kind::Int
                                                         : Kind::Bool;
    return Storage{v.ctx, v.alloc, v.bytes(), kind};
  });
}

vk::Plan& plan_of(const std::shared_ptr<void>& p) { return *static_cast<vk::Plan*>(p.get()); }

class VulkanInteropImpl final : public VulkanInterop {
 public:
  ember_vulkan_requirements requirements() const override {
    const vulkan::Requirements r = vulkan::requirements();
    ember_vulkan_requirements v{};
    v.api_version = r.api_version;
    v.queue_flags = r.queue_flags;
    v.shader_int64 = r.shader_int64 ? 1 : 0;
    v.timeline_semaphore = r.timeline_semaphore ? 1 : 0;
    v.device_extension_count = static_cast<uint32_t>(required_extensions().size());
    v.device_extensions = required_extensions().empty() ? nullptr : required_extensions().data();
    return v;
  }

  DynDevice adopt(const ember_vulkan_device_desc& d, const ember_vulkan_adopt_options& o) const override {
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
    options.dispatches_per_submit = o.max_dispatches_per_submit;
    if (o.allocator) options.host_allocator = host_allocator_of(*o.allocator);
    options.memory_budget = o.memory_budget;
    options.tensor_buffer_usage = o.tensor_buffer_usage;
    options.shader_int64 = o.shader_int64 != 0;
    options.timeline_semaphore = o.timeline_semaphore != 0;
    // shader_float16: EMBER_VULKAN_FLOAT16_* (bit 0 arithmetic, bit 1 storage, -1 auto; checked in api_vulkan.cpp).
    options.float16_auto = o.shader_float16 == EMBER_VULKAN_FLOAT16_AUTO;
    options.shader_float16 = !options.float16_auto && (o.shader_float16 & EMBER_VULKAN_FLOAT16_ARITHMETIC) != 0;
    options.storage_float16 = !options.float16_auto && (o.shader_float16 & EMBER_VULKAN_FLOAT16_STORAGE) != 0;
    options.host_pipeline_cache = handle_from_u64<VkPipelineCache>(o.pipeline_cache);
    return BackendTraits<VulkanAd>::dyn_device(vulkan::adopt(ext, options));
  }

  VulkanBufferView tensor_buffer(const DynTensor& t) const override {
    const vulkan::BufferView view = visit_kind(as_backend<VulkanAd>(t, "tensor"), [](auto k, const auto& p) {
      if constexpr (std::is_same_v<decltype(k), Float>) return vulkan::buffer_of(p.value);  // the autodiff value
      else return vulkan::buffer_of(p);
    });
    return {handle_to_u64(view.buffer), view.offset, view.size};
  }

  DynTensor wrap_buffer(const DynDevice& d, uint64_t buffer_u64, uint64_t offset, DType dtype,
                        const Shape& s) const override {
    return wrap_any(d, buffer_u64, offset, dtype, s, false);
  }
  DynTensor wrap_buffer_writable(const DynDevice& d, uint64_t buffer_u64, uint64_t offset, DType dtype,
                                 const Shape& s) const override {
    return wrap_any(d, buffer_u64, offset, dtype, s, true);
  }
  DynTensor wrap_any(const DynDevice& d, uint64_t buffer_u64, uint64_t offset, DType dtype, const Shape& s,
                     bool writable) const {
    const VulkanDevice& dev = vulkan_of(d);
    const auto buffer = handle_from_u64<VkBuffer>(buffer_u64);
    switch (dtype) {
      case DType::F32:
        return wrap<VulkanAd, Float>(
            VulkanAd::from_inner(vulkan::wrap_buffer<float>(dev, buffer, offset, s, writable)));
      case DType::I64: return wrap<VulkanAd, Int>(vulkan::wrap_buffer<int64_t>(dev, buffer, offset, s, writable));
      case DType::Bool: return wrap<VulkanAd, Bool>(vulkan::wrap_buffer<uint32_t>(dev, buffer, offset, s, writable));
      default: break;
    }
    throw KindError(fmt::format("dtype {} cannot be wrapped: Vulkan tensors store F32, I64 and BOOL (as 32-bit words)",
                                dtype_name(dtype)));
  }

  uint64_t submit(const DynDevice& d) const override { return vulkan::submit(vulkan_of(d)); }
  uint64_t timeline_semaphore(const DynDevice& d) const override {
    return handle_to_u64(vulkan::timeline(vulkan_of(d)));
  }
  void wait_semaphore(const DynDevice& d, uint64_t semaphore, uint64_t value) const override {
    vulkan::wait_for(vulkan_of(d), handle_from_u64<VkSemaphore>(semaphore), value);
  }
  void host_wait(const DynDevice& d, uint64_t value) const override { vulkan::host_wait(vulkan_of(d), value); }
  void synchronize(const DynDevice& d) const override { vulkan::synchronize(vulkan_of(d)); }
  std::vector<uint8_t> pipeline_cache_data(const DynDevice& d) const override {
    return vulkan_of(d).get()->save_pipeline_cache();
  }
  // --- issue 17 parts 1 and 3: host-record mode, deferred device-side checks
  void record_begin(const DynDevice& d, void* command_buffer, uint32_t queue_family,
                    uint64_t frame_index) const override {
    vulkan::record_begin(vulkan_of(d), static_cast<VkCommandBuffer>(command_buffer), queue_family, frame_index);
  }
  void record_end(const DynDevice& d) const override { vulkan::record_end(vulkan_of(d)); }
  void safe_frame(const DynDevice& d, uint64_t safe_frame_index) const override {
    vulkan::safe_frame(vulkan_of(d), safe_frame_index);
  }
  std::pair<uint64_t, uint64_t> record_pending(const DynDevice& d) const override {
    const vk::PendingFrames p = vulkan::pending_frames(vulkan_of(d));
    return {p.frames, p.resources};
  }
  void poll_errors(const DynDevice& d) const override { vulkan::poll_errors(vulkan_of(d)); }

  // --- issue 17 part 8: device lost, readback ring, queue choice
  void simulate_device_lost(const DynDevice& d, uint32_t after) const override {
    vulkan_of(d).get()->simulate_device_lost(after);
  }
  bool device_lost(const DynDevice& d) const override { return vulkan_of(d).get()->lost(); }
  VulkanQueueInfo queue_info(const DynDevice& d) const override {
    const auto ctx = vulkan_of(d).get();
    return {ctx->queue_family(), ctx->queue_index()};
  }
  std::shared_ptr<VulkanReadback> readback_create(const DynDevice& d, uint64_t slot_bytes,
                                                  uint32_t slots) const override {
    return std::make_shared<Readback>(vulkan_of(d).get(), slot_bytes, slots);
  }

  // --- issue 17 parts 4 and 5
  ember_vulkan_memory_stats memory_stats(const DynDevice& d) const override {
    const vk::MemoryTotals t = vulkan::memory_stats(vulkan_of(d));
    ember_vulkan_memory_stats s{};
    s.reserved = t.reserved;
    s.in_use = t.in_use;
    s.peak_reserved = t.peak_reserved;
    s.budget = t.budget;
    s.blocks = static_cast<uint32_t>(t.blocks);
    s.host_blocks = static_cast<uint32_t>(t.host_blocks);
    return s;
  }
  void memory_trim(const DynDevice& d) const override { vulkan::memory_trim(vulkan_of(d)); }
  void set_memory_budget(const DynDevice& d, uint64_t budget) const override {
    vulkan::set_memory_budget(vulkan_of(d), budget);
  }
  void write_wrapped(const DynTensor& wrapped, const DynTensor& src) const override {
    const Storage dst = storage_of(wrapped), from = storage_of(src);
    if (dst.ctx != from.ctx) throw ArgumentError("src lives on another device than the wrapped buffer");
    if (dst.kind != from.kind)
      throw KindError(fmt::format("src is a {} tensor, the wrapped buffer holds {} elements", kind_name(from.kind),
                                  kind_name(dst.kind)));
    if (dst.bytes != from.bytes)
      throw ShapeError(fmt::format("src has {} bytes of elements, the wrapped buffer range {}", from.bytes, dst.bytes));
    vk::write_wrapped(*dst.ctx, dst.alloc, from.alloc, dst.bytes);
  }
  void buffer_acquire(const DynTensor& t, uint32_t stage, uint32_t access, uint32_t family) const override {
    const Storage s = storage_of(t);
    vk::acquire(*s.ctx, s.alloc, stage, access, family);
  }
  void buffer_release(const DynTensor& t, uint32_t stage, uint32_t access, uint32_t family) const override {
    const Storage s = storage_of(t);
    vk::release(*s.ctx, s.alloc, stage, access, family);
  }
  ember_vulkan_buffer_state buffer_state(const DynTensor& t) const override {
    const Storage s = storage_of(t);
    const vk::BufferState b = vk::buffer_state(*s.ctx, *s.alloc);
    ember_vulkan_buffer_state out{};
    out.write_stage = b.write_stage;
    out.write_access = b.write_access;
    out.usage = b.usage;
    out.queue_family = b.queue_family;
    out.wrapped = b.wrapped ? 1 : 0;
    out.writable = b.writable ? 1 : 0;
    return out;
  }
  // --- issue 17 parts 2 and 7: plans and warm-up
  std::shared_ptr<void> plan_begin(const DynDevice& d) const override {
    auto plan = std::make_shared<vk::Plan>(vulkan_of(d).get());
    plan->begin();
    return plan;
  }
  DynTensor plan_add_input(const std::shared_ptr<void>& p, const DynDevice& d, DType dtype,
                           const Shape& s) const override {
    const auto ctx = vulkan_of(d).get();
    auto make = [&]<class T>(T*) {
      vk::VulkanTensor<T> t{ctx, nullptr, s};
      t.alloc = plan_of(p).add_input(t.bytes());
      return t;
    };
    switch (dtype) {
      case DType::F32: return wrap<VulkanAd, Float>(VulkanAd::from_inner(make(static_cast<float*>(nullptr))));
      case DType::I64: return wrap<VulkanAd, Int>(make(static_cast<int64_t*>(nullptr)));
      case DType::Bool: return wrap<VulkanAd, Bool>(make(static_cast<uint32_t*>(nullptr)));
      default: break;
    }
    throw KindError(fmt::format("dtype {}: plan inputs are F32, I64 or BOOL (what Vulkan tensors store)",
                                dtype_name(dtype)));
  }
  void plan_end(const std::shared_ptr<void>& p, const std::vector<DynTensor>& outputs) const override {
    std::vector<std::pair<std::shared_ptr<vk::Allocation>, VkDeviceSize>> storage;
    for (const auto& t : outputs) {
      const Storage s = storage_of(t);
      storage.emplace_back(s.alloc, VkDeviceSize{s.bytes});
    }
    plan_of(p).end(storage);
  }
  void plan_abort(const std::shared_ptr<void>& p) const override { plan_of(p).abort(); }
  void plan_bind(const std::shared_ptr<void>& p, bool output, std::size_t index, uint64_t buffer,
                 uint64_t offset) const override {
    if (output) plan_of(p).bind_output(index, handle_from_u64<VkBuffer>(buffer), offset);
    else plan_of(p).bind_input(index, handle_from_u64<VkBuffer>(buffer), offset);
  }
  void plan_record(const std::shared_ptr<void>& p, void* command_buffer) const override {
    plan_of(p).record(static_cast<VkCommandBuffer>(command_buffer));
  }
  uint64_t plan_submit(const std::shared_ptr<void>& p) const override { return plan_of(p).submit(); }
  void plan_poll_errors(const std::shared_ptr<void>& p) const override { plan_of(p).poll_errors(); }
  void plan_refuse_in_record_mode(const DynDevice& d) const override {
    vk::Plan::refuse_in_record_mode(*vulkan_of(d).get());
  }
  // --- issue 17 part 6: f16 variants
  uint32_t float16_variants(const DynDevice& d) const override {
    const vk::Context& ctx = *vulkan_of(d).get();
    return (ctx.float16() ? EMBER_VULKAN_FEATURE_FLOAT16 : 0u) |
           (ctx.float16_storage() ? EMBER_VULKAN_FEATURE_STORAGE_16BIT : 0u);
  }
  std::pair<std::size_t, uint64_t> plan_f16_weights(const std::shared_ptr<void>& p) const override {
    return {plan_of(p).f16_weights(), plan_of(p).f16_weight_bytes()};
  }
  bool timeline_semaphores(const DynDevice& d) const override { return vulkan_of(d).get()->timeline_semaphores(); }
};

}  // namespace

const VulkanInterop& vulkan_interop_impl() {
  static const auto* impl = new VulkanInteropImpl;  // leaked: see runtime_instance
  return *impl;
}

}  // namespace ember::capi
