#pragma once
// The handle slot table: what an ember_* handle value means (boundary.hpp wraps it for the api_*.cpp files).
//
// A handle is not an address. Its value encodes a slot index, the slot's generation when the handle was issued and
// the handle's kind (HandleValue below); Ember never dereferences it, and only this table maps it to the object.
// Freeing a handle bumps its slot's generation, so the stale value stays recognizable as freed forever, even after
// the slot (or the object's old address) has been reused by a new handle of the same type: a stale handle can never
// reach, or free, another object (issue 12; an address registry could not tell them apart).
//
// Lookups take no lock: slots live in fixed-size chunks that never move or go away, and each slot's generation and
// kind are one atomic word, read before and after the object pointer. Issuing and freeing a handle pop and push a
// lock-free free list (one compare-exchange each), so a small op's C path contains no lock at all.
#include <atomic>
#include <cstdint>

namespace ember::capi {

// Every kind in one place: the handle value carries it (5 bits, 0 never used).
enum class HandleKind : uint8_t {
  Device = 1, Tensor, Grads, Module, Optimizer, Record, LoadReport, Scheduler,
  VulkanReadback,  // issue 17 part 8
  VulkanPlan,  // issue 17: Vulkan plans
  Compiled,  // issue 14: compiled forwards
};
constexpr HandleKind kLastHandleKind = HandleKind::Compiled;  // (kinds are appended: keep this the last one)
const char* handle_type_name(HandleKind k) noexcept;

// The bit layout of a handle value (64-bit only: a 32-bit pointer could not hold a generation worth having).
//   bits 0..4   kind (1..31; 0 is never issued)
//   bits 5..31  slot index (134M slots)
//   bits 32..63 generation (1..2^32-1; 0 is never issued, so small integers such as 0x1 are never handles)
struct HandleValue {
  static_assert(sizeof(void*) == 8, "Ember's handle encoding needs 64-bit pointers");
  static_assert(static_cast<unsigned>(kLastHandleKind) < 32, "a handle kind must fit the value's 5 kind bits");
  static constexpr unsigned kKindBits = 5, kIndexBits = 27;
  static constexpr uint64_t kKindMask = (uint64_t{1} << kKindBits) - 1;
  static constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;

  static uint64_t bits(const void* h) noexcept { return static_cast<uint64_t>(reinterpret_cast<std::uintptr_t>(h)); }
  static uint32_t index(uint64_t v) noexcept { return static_cast<uint32_t>((v >> kKindBits) & kIndexMask); }
  static uint32_t generation(uint64_t v) noexcept { return static_cast<uint32_t>(v >> 32); }
  static uint8_t kind(uint64_t v) noexcept { return static_cast<uint8_t>(v & kKindMask); }
  static void* make(uint32_t index, uint32_t generation, uint8_t kind) noexcept {
    const uint64_t v = (uint64_t{generation} << 32) | (uint64_t{index} << kKindBits) | kind;
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(v));
  }
};

class HandleSlots {
 public:
  static constexpr unsigned kChunkBits = 12;  // 4096 slots (128 KiB) per chunk
  static constexpr uint32_t kChunkSize = uint32_t{1} << kChunkBits;
  static constexpr uint32_t kMaxChunks = uint32_t{1} << (HandleValue::kIndexBits - kChunkBits);

  struct Slot {
    // generation << 8 | kind while live; (next generation) << 8 with kind 0 while free; 0 before first use. The
    // generation only grows; a slot whose 32-bit generation is used up is retired (state kRetired, never reused),
    // so no stale value can ever match again.
    std::atomic<uint64_t> state{0};
    std::atomic<void*> object{nullptr};
    std::atomic<uint32_t> next_free{0};  // free list link: index + 1 of the next free slot, 0 at the end
  };
  static constexpr uint64_t kRetired = (uint64_t{1} << 32) << 8;  // a generation above every issued one
  static uint64_t live_state(uint32_t generation, HandleKind k) noexcept {
    return (uint64_t{generation} << 8) | static_cast<uint8_t>(k);
  }

  // The object behind `h` when h is a live handle of kind k, else nullptr (the caller reports why: explain()).
  // Lock-free; a handle freed and reissued while this runs is seen as not live, never as the new object.
  void* find(const void* h, HandleKind k) const noexcept {
    const uint64_t v = HandleValue::bits(h);
    if (HandleValue::kind(v) != static_cast<uint8_t>(k)) return nullptr;
    const Slot* s = slot(HandleValue::index(v));
    if (!s) return nullptr;
    const uint64_t want = live_state(HandleValue::generation(v), k);
    if (s->state.load(std::memory_order_acquire) != want) return nullptr;
    void* object = s->object.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);  // the re-check below is ordered after the object's read
    return s->state.load(std::memory_order_relaxed) == want ? object : nullptr;
  }
  // A new handle of kind k for `object` (never null). Throws std::bad_alloc when no slot can be had.
  void* issue(void* object, HandleKind k);
  // Ends the live handle `h` of kind k and returns its object (the caller deletes it); nullptr when h is not a live
  // handle of kind k (nothing changes). Of two threads freeing the same handle at once, exactly one gets the object.
  void* retire(const void* h, HandleKind k) noexcept;
  // What `h` is as a handle of the kind its value names (HandleValue::kind), for the error messages.
  enum class Verdict { Live, Freed, NotAHandle };
  Verdict explain(const void* h) const noexcept;

  static HandleSlots& instance() noexcept;

 private:
  friend struct HandleSlotsTestAccess;  // tests/c_api/handle_slots_test.cpp: a slot's generation near its end

  // The slot of `index`, or nullptr when its chunk was never made (an index no handle was issued with). Slots are
  // shared state the table's const lookups read and its writers change: a const table hands out mutable slots.
  Slot* slot(uint32_t index) const noexcept {
    Slot* chunk = chunks_[index >> kChunkBits].load(std::memory_order_acquire);
    return chunk ? &chunk[index & (kChunkSize - 1)] : nullptr;
  }
  // The slot of an index that was issued once (on the free list, being freed): its chunk exists.
  Slot& issued_slot(uint32_t index) const noexcept {
    return chunks_[index >> kChunkBits].load(std::memory_order_acquire)[index & (kChunkSize - 1)];
  }
  Slot& slot_for_issue(uint32_t index);  // allocates the slot's chunk on first use
  bool pop_free(uint32_t& index) noexcept;
  void push_free(uint32_t index) noexcept;

  std::atomic<Slot*> chunks_[kMaxChunks]{};
  std::atomic<uint32_t> fresh_{0};      // the first slot index never handed out
  std::atomic<uint64_t> free_head_{0};  // (ABA tag << 32) | (index + 1) of the first free slot; index part 0: empty
};

}  // namespace ember::capi
