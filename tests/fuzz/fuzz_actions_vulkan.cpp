// The fuzzer's Vulkan rows (declared in fuzz_actions.hpp, placed in kActions by fuzz_actions.cpp): interop, the
// timeline, issue 17's embedding API (host-record mode, memory the host controls, resource states, device loss,
// plans, readback rings, the feature floor). The fuzz build has no Vulkan backend, so every call that needs one
// must refuse cleanly whatever it is given (the few that need none are checked for their answers); the arguments
// are fuzzed all the same (NULL and padded structs with fuzzed struct_size, live / freed / wrong-type /
// never-a-handle handles, any integers), so that a check ordered after a dereference, a struct read past
// struct_size or a handle not looked up before use shows up as an ASan / UBSan report or a broken rule.
//
// Plans and readback rings: no call can make a live one without a Vulkan device, so their pool rows stay empty
// here; their functions still meet NULL, freed, wrong-type and never-a-handle pointers, and their frees must refuse
// all but NULL (Ctx::free_picked).
#include <cstring>
#include <initializer_list>
#include <limits>

#include "tests/fuzz/fuzz_actions.hpp"

namespace ember_fuzz {
namespace {

// One of the edge values given, or (as often as any one of them) any value of T: the bytes for "any" are drawn only
// when it is chosen, so the input stays short.
template <class T>
T edge_or_any(Ctx& c, std::initializer_list<T> edges) {
  const std::size_t i = c.in.ConsumeIntegralInRange<std::size_t>(0, edges.size());
  return i < edges.size() ? edges.begin()[i] : c.in.ConsumeIntegral<T>();
}
// A VkBuffer / VkPipelineCache-like 64-bit handle: VK_NULL_HANDLE, small, all ones or any value.
uint64_t vk_handle(Ctx& c) { return edge_or_any<uint64_t>(c, {0, 1, 0x1000, std::numeric_limits<uint64_t>::max()}); }
// A queue family: Ember's usual 0, another, VK_QUEUE_FAMILY_IGNORED (~0u) or any value.
uint32_t queue_family(Ctx& c) { return edge_or_any<uint32_t>(c, {0, 1, ~0u}); }
// A VkCommandBuffer: NULL or a fake one (never dereferenced on a path that refuses).
void* command_buffer(Ctx& c) { return c.flag() ? nullptr : reinterpret_cast<void*>(uintptr_t{0x1000}); }

// Host allocator callbacks that must never run: no device means no memory block to ask for.
int32_t never_allocate(void*, const ember_vulkan_memory_request*, ember_vulkan_memory_block*) {
  violation("ember_vulkan_device_adopt_ex", "called the host allocator without a device");
}
void never_free(void*, const ember_vulkan_memory_block*) {
  violation("ember_vulkan_device_adopt_ex", "called the host's free_memory without a device");
}

}  // namespace

// ---------------------------------------------------------------- interop (ember_vulkan_device_adopt and after)
void vulkan(Ctx& c) {
  // Without the Vulkan backend (the fuzz build has none) every one of these must refuse cleanly, whatever it is given.
  ember_device* d = c.device();
  uint64_t value = 0;
  switch (c.in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: {
      Padded<ember_vulkan_requirements> r;
      r.value.struct_size = c.struct_size(sizeof r.value);
      CALL(ember_vulkan_requirements_query, c.flag() ? &r.value : nullptr);
      break;
    }
    case 1: {
      Padded<ember_vulkan_device_desc> desc;
      desc.value.struct_size = c.struct_size(sizeof desc.value);
      MAKE(ember_vulkan_device_adopt, c.flag() ? &desc.value : nullptr);
      break;
    }
    case 2: CALL(ember_vulkan_tensor_buffer, c.tensor(), &value, nullptr, nullptr); break;
    case 3: {
      std::vector<int64_t> s = c.shape();
      MAKE(ember_vulkan_tensor_wrap_buffer, d, c.in.ConsumeIntegral<uint64_t>(), uint64_t{0}, c.choice(kDtypes),
           s.empty() ? nullptr : s.data(), s.size());
      break;
    }
    case 4: CALL(ember_vulkan_submit, d, c.flag() ? &value : nullptr); break;
    default: CALL(ember_vulkan_synchronize, d);
  }
}

// ---------------------------------------------------------------- the timeline (issue 11 / 17)
void vulkan_timeline(Ctx& c) {
  // As vulkan(): without the backend each must refuse cleanly, whatever the device handle and values.
  ember_device* d = c.device();
  switch (c.in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: {
      uint64_t sem = 0;
      CALL(ember_vulkan_timeline_semaphore, d, c.flag() ? &sem : nullptr);
      break;
    }
    case 1: {
      const uint64_t semaphore = c.in.ConsumeIntegral<uint64_t>();
      CALL(ember_vulkan_wait_semaphore, d, semaphore, c.in.ConsumeIntegral<uint64_t>());
      break;
    }
    case 2: CALL(ember_vulkan_host_wait, d, c.in.ConsumeIntegral<uint64_t>()); break;
    default: {
      std::vector<uint8_t> buffer(c.capacity());
      size_t size = 0;
      CALL(ember_vulkan_pipeline_cache_data, d, buffer.empty() ? nullptr : buffer.data(), buffer.size(),
           c.flag() ? &size : nullptr);
    }
  }
}

// ---------------------------------------------------------------- issue 17 parts 1, 3: host-record mode
// Issue 17's Vulkan embedding functions: without the backend (the fuzz build has none) each must refuse cleanly.
// The command buffer is never dereferenced on that path; a fake non-NULL one checks that.
void vulkan_embedding(Ctx& c) {
  ember_device* d = c.device();
  switch (c.in.ConsumeIntegralInRange<int>(0, 6)) {
    case 0: {
      Padded<ember_vulkan_adopt_options> o;
      CALL(ember_vulkan_adopt_options_init, c.flag() ? &o.value : nullptr);
      break;
    }
    case 1: {
      Padded<ember_vulkan_device_desc> desc;
      desc.value.struct_size = c.struct_size(sizeof desc.value);
      Padded<ember_vulkan_adopt_options> o;
      if (c.flag()) Ctx::check("ember_vulkan_adopt_options_init", ember_vulkan_adopt_options_init(&o.value));
      o.value.struct_size = c.struct_size(sizeof o.value);
      const ember_vulkan_device_desc* dp = c.flag() ? &desc.value : nullptr;
      MAKE(ember_vulkan_device_adopt_ex, dp, c.flag() ? &o.value : nullptr);
      break;
    }
    case 2: {
      void* cmd = c.flag() ? nullptr : reinterpret_cast<void*>(uintptr_t{0x1000});
      CALL(ember_vulkan_record_begin, d, cmd, c.in.ConsumeIntegral<uint32_t>(), c.in.ConsumeIntegral<uint64_t>());
      break;
    }
    case 3: CALL(ember_vulkan_record_end, d); break;
    case 4: CALL(ember_vulkan_safe_frame, d, c.in.ConsumeIntegral<uint64_t>()); break;
    case 5: {
      uint64_t frames = 0, resources = 0;
      CALL(ember_vulkan_record_pending, d, c.flag() ? &frames : nullptr, c.flag() ? &resources : nullptr);
      break;
    }
    default:
      CALL(ember_vulkan_poll_errors, d);
      // Plans' device-side checks (issue 17 part 3): no plan exists without the backend; NULL must be refused.
      CALL(ember_vulkan_plan_poll_errors, static_cast<const ember_vulkan_plan*>(nullptr));
  }
}

// ---------------------------------------------------------------- issue 17 parts 4, 5: memory the host controls
void vulkan_memory(Ctx& c) {
  switch (c.in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0: {
      // Needs no backend: struct_size set, everything else cleared (a garbage-filled struct checks that).
      Padded<ember_vulkan_allocator> a;
      std::memset(static_cast<void*>(&a.value), 0xA5, sizeof a.value);
      const bool null_arg = c.flag();
      if (CALL(ember_vulkan_allocator_init, null_arg ? nullptr : &a.value) != EMBER_OK) break;
      if (null_arg) violation("ember_vulkan_allocator_init", "accepted NULL");
      if (a.value.struct_size != sizeof a.value || a.value.user || a.value.allocate_memory || a.value.free_memory)
        violation("ember_vulkan_allocator_init", "left a field other than struct_size set");
      break;
    }
    case 1: {
      Padded<ember_vulkan_memory_stats> s;
      s.value.struct_size = c.struct_size(sizeof s.value);
      ember_device* d = c.device();
      CALL(ember_vulkan_memory_stats_query, d, c.flag() ? &s.value : nullptr);
      break;
    }
    case 2: CALL(ember_vulkan_memory_trim, c.device()); break;
    case 3: {
      ember_device* d = c.device();
      CALL(ember_vulkan_memory_set_budget, d,
           edge_or_any<uint64_t>(c, {0, 1, uint64_t{1} << 20, std::numeric_limits<uint64_t>::max()}));
      break;
    }
    default: {
      // Adopt with every option fuzzed, a host allocator (of any struct_size, callbacks missing or present) included.
      Padded<ember_vulkan_allocator> a;
      if (c.flag()) Ctx::check("ember_vulkan_allocator_init", ember_vulkan_allocator_init(&a.value));
      a.value.struct_size = c.struct_size(sizeof a.value);
      a.value.allocate_memory = c.flag() ? never_allocate : nullptr;
      a.value.free_memory = c.flag() ? never_free : nullptr;
      Padded<ember_vulkan_adopt_options> o;
      Ctx::check("ember_vulkan_adopt_options_init", ember_vulkan_adopt_options_init(&o.value));
      o.value.allocator = c.flag() ? &a.value : nullptr;
      if (c.flag()) {
        o.value.max_dispatches_per_submit = c.in.ConsumeIntegral<uint32_t>();
        o.value.memory_budget = c.in.ConsumeIntegral<uint64_t>();
        o.value.tensor_buffer_usage = c.in.ConsumeIntegral<uint32_t>();
        o.value.shader_int64 = c.choice(2);
        o.value.timeline_semaphore = c.choice(2);
        // EMBER_VULKAN_FLOAT16_AUTO (-1) .. 3, one value past each end (-2, 4) and choice's extremes; not
        // choice(6) - 2, which overflows when choice draws INT32_MIN.
        o.value.shader_float16 = c.flag() ? c.choice(4) : -c.in.ConsumeIntegralInRange<int32_t>(0, 2);
        o.value.pipeline_cache = vk_handle(c);
      }
      o.value.struct_size = c.struct_size(sizeof o.value);
      Padded<ember_vulkan_device_desc> desc;
      desc.value.struct_size = c.struct_size(sizeof desc.value);
      const ember_vulkan_device_desc* dp = c.flag() ? &desc.value : nullptr;
      MAKE(ember_vulkan_device_adopt_ex, dp, &o.value);
    }
  }
}

// Resource states of host buffers: writable wrapped buffers, acquire / release halves, the state query.
void vulkan_resource_states(Ctx& c) {
  switch (c.in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0: {
      ember_device* d = c.device();
      const uint64_t buffer = vk_handle(c);
      const uint64_t offset = c.in.PickValueInArray<uint64_t>({0, 3, 256, std::numeric_limits<uint64_t>::max()});
      const int32_t dtype = c.choice(kDtypes);
      std::vector<int64_t> s = c.shape();
      const uint32_t flags = c.in.PickValueInArray<uint32_t>({0, EMBER_VULKAN_WRAP_WRITABLE, 2, ~0u});
      MAKE(ember_vulkan_tensor_wrap_buffer_ex, d, buffer, offset, dtype, s.empty() ? nullptr : s.data(), s.size(),
           flags);
      break;
    }
    case 1: CALL(ember_vulkan_tensor_write_wrapped, c.tensor(), c.tensor()); break;
    case 2: {
      ember_tensor* t = c.tensor();
      const uint32_t stage = c.in.ConsumeIntegral<uint32_t>(), access = c.in.ConsumeIntegral<uint32_t>();
      CALL(ember_vulkan_buffer_acquire, t, stage, access, queue_family(c));
      break;
    }
    case 3: {
      ember_tensor* t = c.tensor();
      const uint32_t stage = c.in.ConsumeIntegral<uint32_t>(), access = c.in.ConsumeIntegral<uint32_t>();
      CALL(ember_vulkan_buffer_release, t, stage, access, queue_family(c));
      break;
    }
    default: {
      Padded<ember_vulkan_buffer_state> s;
      s.value.struct_size = c.struct_size(sizeof s.value);
      ember_tensor* t = c.tensor();
      CALL(ember_vulkan_buffer_state_query, t, c.flag() ? &s.value : nullptr);
    }
  }
}

// ---------------------------------------------------------------- issue 17 part 8: device lost, queue choice
void vulkan_device_lost(Ctx& c) {
  ember_device* d = c.device();
  switch (c.in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0:
      CALL(ember_vulkan_simulate_device_lost, d, edge_or_any<uint32_t>(c, {0, 1, ~0u}));
      break;
    case 1: {
      int32_t lost = -1;
      const bool null_out = c.flag();
      if (CALL(ember_vulkan_device_is_lost, d, null_out ? nullptr : &lost) == EMBER_OK && !null_out &&
          lost != 0 && lost != 1)
        violation("ember_vulkan_device_is_lost", "succeeded without setting *lost to 0 or 1");
      break;
    }
    default: {
      uint32_t family = 0, index = 0;
      CALL(ember_vulkan_queue_info, d, c.flag() ? &family : nullptr, c.flag() ? &index : nullptr);
      // issue 17 part 6: the f16 variants in use are bits of EMBER_VULKAN_FEATURE_FLOAT16 | _STORAGE_16BIT only.
      uint32_t f16 = ~0u;
      const bool null_f16 = c.flag();
      if (CALL(ember_vulkan_float16_query, d, null_f16 ? nullptr : &f16) == EMBER_OK && !null_f16 &&
          (f16 & ~(EMBER_VULKAN_FEATURE_FLOAT16 | EMBER_VULKAN_FEATURE_STORAGE_16BIT)))
        violation("ember_vulkan_float16_query", "reported bits beyond the two f16 features");
    }
  }
}

// ---------------------------------------------------------------- issue 17 parts 2, 7: plans and warm-up
void vulkan_plan_build(Ctx& c) {
  switch (c.in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0: {
      ember_module* m = c.module();
      ember_device* d = c.device();
      const int32_t dtype = c.choice(kDtypes);
      std::vector<int64_t> s = c.shape();
      MAKE(ember_vulkan_plan_create, m, d, dtype, s.empty() ? nullptr : s.data(), s.size());
      break;
    }
    case 1: {
      ember_module* m = c.module();
      ember_device* d = c.device();
      const int32_t dtype = c.choice(kDtypes);
      std::vector<int64_t> s = c.shape();
      CALL(ember_vulkan_warmup, m, d, dtype, s.empty() ? nullptr : s.data(), s.size());
      break;
    }
    case 2: MAKE(ember_vulkan_plan_capture_begin, c.device()); break;
    case 3: {
      ember_vulkan_plan* p = c.plan();
      const int32_t dtype = c.choice(kDtypes);
      std::vector<int64_t> s = c.shape();
      MAKE(ember_vulkan_plan_add_input, p, dtype, s.empty() ? nullptr : s.data(), s.size());  // keeps the input
      break;
    }
    default: {
      ember_vulkan_plan* p = c.plan();
      std::vector<ember_tensor*> outputs = c.tensors();
      // A NULL array with a count is refused too.
      const bool null_array = outputs.empty() || c.in.ConsumeIntegralInRange<int>(0, 7) == 0;
      CALL(ember_vulkan_plan_capture_end, p, null_array ? nullptr : outputs.data(), outputs.size());
    }
  }
}

void vulkan_plan_use(Ctx& c) {
  ember_vulkan_plan* p = c.plan();
  const auto index = static_cast<size_t>(c.size());
  switch (c.in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: {
      size_t inputs = 0, outputs = 0;
      CALL(ember_vulkan_plan_counts, p, c.flag() ? &inputs : nullptr, c.flag() ? &outputs : nullptr);
      size_t f16_count = 0;
      uint64_t f16_bytes = 0;  // issue 17 part 6: a plan's f16 weight copies
      CALL(ember_vulkan_plan_f16_weights, p, c.flag() ? &f16_count : nullptr, c.flag() ? &f16_bytes : nullptr);
      break;
    }
    case 1:
    case 2: {
      Padded<ember_vulkan_plan_tensor_info> info;
      info.value.struct_size = c.struct_size(sizeof info.value);
      ember_vulkan_plan_tensor_info* out = c.flag() ? &info.value : nullptr;
      if (c.flag())
        CALL(ember_vulkan_plan_input_info, p, index, out);
      else
        CALL(ember_vulkan_plan_output_info, p, index, out);
      break;
    }
    case 3: {
      const uint64_t buffer = vk_handle(c), offset = c.in.ConsumeIntegral<uint64_t>();
      CALL(ember_vulkan_plan_bind_input, p, index, buffer, offset);
      break;
    }
    case 4: {
      const uint64_t buffer = vk_handle(c), offset = c.in.ConsumeIntegral<uint64_t>();
      CALL(ember_vulkan_plan_bind_output, p, index, buffer, offset);
      break;
    }
    case 5: CALL(ember_vulkan_plan_record, p, command_buffer(c)); break;
    case 6: CALL(ember_vulkan_plan_poll_errors, p); break;
    default: {
      uint64_t value = 0;
      CALL(ember_vulkan_plan_submit, p, c.flag() ? &value : nullptr);
    }
  }
}

void vulkan_plan_free(Ctx& c) { c.free_picked("ember_vulkan_plan_free", ember_vulkan_plan_free); }

// ---------------------------------------------------------------- issue 17 part 8: readback rings
void vulkan_readback(Ctx& c) {
  switch (c.in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: {
      // Sizes at and past the documented bounds (slots 1..4096, slot_bytes >= 1, slot_bytes * slots <= 4 GiB).
      ember_device* d = c.device();
      const uint64_t slot_bytes = edge_or_any<uint64_t>(
          c, {0, 1, 64, uint64_t{1} << 20, uint64_t{1} << 32, std::numeric_limits<uint64_t>::max()});
      const uint32_t slots = c.in.PickValueInArray<uint32_t>({0, 1, 3, 4096, 4097, ~0u});
      MAKE(ember_vulkan_readback_create, d, slot_bytes, slots);
      break;
    }
    case 1: {
      ember_vulkan_readback* ring = c.readback();
      ember_tensor* t = c.tensor();
      uint64_t ticket = 0;
      CALL(ember_vulkan_readback_enqueue, ring, t, c.flag() ? &ticket : nullptr);
      break;
    }
    default: {
      ember_vulkan_readback* ring = c.readback();
      const uint64_t ticket = edge_or_any<uint64_t>(c, {0, 1, 2});
      std::vector<uint8_t> dst(c.capacity());
      size_t size = 0;
      int32_t ready = 0;
      void* data = dst.empty() || c.in.ConsumeIntegralInRange<int>(0, 15) == 0 ? nullptr : dst.data();
      CALL(ember_vulkan_readback_poll, ring, ticket, data, dst.size(), c.flag() ? &size : nullptr,
           c.flag() ? &ready : nullptr);
    }
  }
}

void vulkan_readback_free(Ctx& c) { c.free_picked("ember_vulkan_readback_free", ember_vulkan_readback_free); }

// ---------------------------------------------------------------- issue 17 part 6: the feature floor
void vulkan_floor(Ctx& c) {
  if (c.flag()) {
    Padded<ember_vulkan_requirements2> r;
    r.value.struct_size = c.struct_size(sizeof r.value);
    CALL(ember_vulkan_requirements_query2, c.flag() ? &r.value : nullptr);
    return;
  }
  // A static table, answered without a backend: one EMBER_VULKAN_FEATURE_* bit is described (both strings are read
  // through, so a bad pointer is an ASan report), 0 and several bits are refused. A single bit not (yet) defined is
  // not judged: a later ember.h may define it.
  const uint32_t feature = edge_or_any<uint32_t>(
      c, {0, EMBER_VULKAN_FEATURE_SHADER_INT64, EMBER_VULKAN_FEATURE_TIMELINE_SEMAPHORE, EMBER_VULKAN_FEATURE_FLOAT16,
          EMBER_VULKAN_FEATURE_STORAGE_16BIT, EMBER_VULKAN_FEATURE_SHADER_INT64 | EMBER_VULKAN_FEATURE_FLOAT16, 16,
          0x80000000u, ~0u});
  const char* name = nullptr;
  const char* gives = nullptr;
  const bool want_name = c.flag(), want_gives = c.flag();
  const ember_status s =
      CALL(ember_vulkan_feature_describe, feature, want_name ? &name : nullptr, want_gives ? &gives : nullptr);
  const bool known = feature == EMBER_VULKAN_FEATURE_SHADER_INT64 ||
                     feature == EMBER_VULKAN_FEATURE_TIMELINE_SEMAPHORE || feature == EMBER_VULKAN_FEATURE_FLOAT16 ||
                     feature == EMBER_VULKAN_FEATURE_STORAGE_16BIT;
  const bool one_bit = feature != 0 && (feature & (feature - 1)) == 0;
  if (known && s != EMBER_OK) violation("ember_vulkan_feature_describe", "refused a defined feature bit");
  if (!one_bit && s == EMBER_OK) violation("ember_vulkan_feature_describe", "accepted 0 or several bits");
  if (s != EMBER_OK) return;
  if ((want_name && (!name || !std::strlen(name))) || (want_gives && (!gives || !std::strlen(gives))))
    violation("ember_vulkan_feature_describe", "succeeded with a NULL or empty description");
}

}  // namespace ember_fuzz
