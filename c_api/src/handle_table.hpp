#pragma once
// The set of live handles of one registry shard (boundary.cpp): address -> kind, in an open-addressing table with
// linear probing. Every ember_* call looks its handles up here and every new or freed handle writes it, so the
// table allocates only when it grows (a std::unordered_map allocated one node per insert and freed it per erase,
// a third of a small op's C cost). Erase shifts the following entries back (no tombstones), so lookups stay short
// however many handles come and go. Not thread-safe: the shard's mutex guards it.
#include <cstdint>
#include <cstring>
#include <memory>

namespace ember::capi {

template <class Kind>
class HandleTable {
 public:
  // The kind stored for `p`, or nullptr when p is not in the table. p must not be null (the empty-slot marker).
  const Kind* find(const void* p) const {
    if (count_ == 0) return nullptr;
    for (std::size_t i = home(p);; i = next(i)) {
      if (slots_[i].key == p) return &slots_[i].kind;
      if (!slots_[i].key) return nullptr;
    }
  }
  // Adds p (or replaces its kind).
  void insert_or_assign(const void* p, Kind k) {
    if ((count_ + 1) * 4 > capacity_ * 3) grow();  // load factor <= 3/4: probes stay short
    std::size_t i = home(p);
    while (slots_[i].key && slots_[i].key != p) i = next(i);
    if (!slots_[i].key) ++count_;
    slots_[i] = {p, k};
  }
  // Removes p; false when it was not there.
  bool erase(const void* p) {
    if (count_ == 0) return false;
    std::size_t i = home(p);
    while (slots_[i].key != p) {
      if (!slots_[i].key) return false;
      i = next(i);
    }
    // Backward-shift deletion: move later entries of the probe run into the hole when the hole lies on the way from
    // their home slot to where they are, so every remaining key is still reachable without tombstones.
    for (std::size_t j = next(i);; j = next(j)) {
      if (!slots_[j].key) break;
      const std::size_t h = home(slots_[j].key);
      const bool hole_between = i <= j ? (h <= i || h > j) : (h <= i && h > j);
      if (hole_between) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = {};
    --count_;
    return true;
  }
  std::size_t size() const { return count_; }

 private:
  struct Slot {
    const void* key = nullptr;
    Kind kind{};
  };
  std::size_t home(const void* p) const {
    // Fibonacci hashing of the address without its alignment bits: consecutive allocations spread over the table.
    const auto h = (reinterpret_cast<std::uintptr_t>(p) >> 4) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h >> (64 - bits_));
  }
  std::size_t next(std::size_t i) const { return (i + 1) & (capacity_ - 1); }
  void grow() {
    auto old = std::move(slots_);
    const std::size_t old_capacity = capacity_;
    bits_ = old ? bits_ + 1 : 6;
    capacity_ = std::size_t(1) << bits_;
    slots_ = std::make_unique<Slot[]>(capacity_);
    count_ = 0;
    for (std::size_t i = 0; i < old_capacity; ++i)
      if (old[i].key) insert_or_assign(old[i].key, old[i].kind);
  }

  std::unique_ptr<Slot[]> slots_;
  std::size_t capacity_ = 0;
  unsigned bits_ = 0;
  std::size_t count_ = 0;
};

}  // namespace ember::capi
