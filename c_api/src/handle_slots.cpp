// The handle slot table (handle_slots.hpp): issuing, retiring and explaining handle values.
#include "c_api/src/handle_slots.hpp"

#include <new>

namespace ember::capi {

const char* handle_type_name(HandleKind k) noexcept {
  switch (k) {
    case HandleKind::Device: return "ember_device";
    case HandleKind::Tensor: return "ember_tensor";
    case HandleKind::Grads: return "ember_grads";
    case HandleKind::Module: return "ember_module";
    case HandleKind::Optimizer: return "ember_optimizer";
    case HandleKind::Record: return "ember_record";
    case HandleKind::LoadReport: return "ember_load_report";
    case HandleKind::Scheduler: return "ember_scheduler";
    case HandleKind::VulkanReadback: return "ember_vulkan_readback";
    case HandleKind::VulkanPlan: return "ember_vulkan_plan";
    case HandleKind::Compiled: return "ember_compiled";
  }
  return "handle";
}

HandleSlots& HandleSlots::instance() noexcept {
  // Leaked on purpose: handles freed during static destruction (a host's global objects) must still find it.
  static HandleSlots* slots = new HandleSlots;
  return *slots;
}

HandleSlots::Slot& HandleSlots::slot_for_issue(uint32_t index) {
  std::atomic<Slot*>& c = chunks_[index >> kChunkBits];
  Slot* chunk = c.load(std::memory_order_acquire);
  if (!chunk) {
    // Two threads may start the same chunk: the first to publish wins, the other drops its copy. A chunk, once
    // published, stays where it is for the life of the process (lookups read it without a lock).
    Slot* fresh = new Slot[kChunkSize];
    if (c.compare_exchange_strong(chunk, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) {
      chunk = fresh;
    } else {
      delete[] fresh;
    }
  }
  return chunk[index & (kChunkSize - 1)];
}

// A Treiber stack of slot indices. The head's upper half is a tag bumped by every change, so a pop that read a
// head, lost the processor and comes back after other pops and pushes restored the same index fails its
// compare-exchange instead of installing a stale link (the ABA problem).
bool HandleSlots::pop_free(uint32_t& index) noexcept {
  uint64_t head = free_head_.load(std::memory_order_acquire);
  for (;;) {
    const uint32_t first = static_cast<uint32_t>(head);
    if (first == 0) return false;
    const uint64_t next = ((head >> 32) + 1) << 32 | issued_slot(first - 1).next_free.load(std::memory_order_relaxed);
    if (free_head_.compare_exchange_weak(head, next, std::memory_order_acquire, std::memory_order_acquire)) {
      index = first - 1;
      return true;
    }
  }
}

void HandleSlots::push_free(uint32_t index) noexcept {
  Slot& s = issued_slot(index);
  uint64_t head = free_head_.load(std::memory_order_relaxed);
  for (;;) {
    s.next_free.store(static_cast<uint32_t>(head), std::memory_order_relaxed);
    const uint64_t next = ((head >> 32) + 1) << 32 | (uint64_t{index} + 1);
    if (free_head_.compare_exchange_weak(head, next, std::memory_order_release, std::memory_order_relaxed)) return;
  }
}

void* HandleSlots::issue(void* object, HandleKind k) {
  uint32_t index;
  uint32_t generation = 1;
  if (pop_free(index)) {
    generation = static_cast<uint32_t>(issued_slot(index).state.load(std::memory_order_relaxed) >> 8);
  } else {
    index = fresh_.fetch_add(1, std::memory_order_relaxed);
    if (index >= kMaxChunks * kChunkSize) {
      fresh_.fetch_sub(1, std::memory_order_relaxed);
      throw std::bad_alloc();  // 134M live handles: reported as out of memory
    }
  }
  Slot& s = slot_for_issue(index);
  s.object.store(object, std::memory_order_relaxed);
  s.state.store(live_state(generation, k), std::memory_order_release);  // publishes the object with the state
  return HandleValue::make(index, generation, static_cast<uint8_t>(k));
}

void* HandleSlots::retire(const void* h, HandleKind k) noexcept {
  const uint64_t v = HandleValue::bits(h);
  if (HandleValue::kind(v) != static_cast<uint8_t>(k)) return nullptr;
  const uint32_t generation = HandleValue::generation(v);
  Slot* s = slot(HandleValue::index(v));
  if (!s || generation == 0) return nullptr;
  uint64_t live = live_state(generation, k);
  const bool used_up = generation == UINT32_MAX;
  const uint64_t freed = used_up ? kRetired : uint64_t{generation + 1} << 8;
  // Only the thread whose compare-exchange ends the generation owns the object and the slot from here on.
  if (!s->state.compare_exchange_strong(live, freed, std::memory_order_acq_rel, std::memory_order_relaxed))
    return nullptr;
  void* object = s->object.exchange(nullptr, std::memory_order_relaxed);
  if (!used_up) push_free(HandleValue::index(v));
  return object;
}

HandleSlots::Verdict HandleSlots::explain(const void* h) const noexcept {
  const uint64_t v = HandleValue::bits(h);
  const uint8_t kind = HandleValue::kind(v);
  const uint32_t generation = HandleValue::generation(v);
  if (kind == 0 || kind > static_cast<uint8_t>(kLastHandleKind) || generation == 0) return Verdict::NotAHandle;
  const Slot* s = slot(HandleValue::index(v));
  if (!s) return Verdict::NotAHandle;
  const uint64_t state = s->state.load(std::memory_order_acquire);
  if (state == live_state(generation, static_cast<HandleKind>(kind))) return Verdict::Live;
  // The slot has moved past this generation: the value was issued once and freed since. A generation at or above
  // the slot's was never issued (a forged or corrupted value).
  return generation < (state >> 8) ? Verdict::Freed : Verdict::NotAHandle;
}

}  // namespace ember::capi
