// The handle slot table on its own (c_api/src/handle_slots.hpp, compiled into this test): what ember.h's Handles rule
// rests on, including what the C ABI cannot reach in a test's time (a slot whose 32-bit generation is used up) and
// issue / retire / find racing on one private table.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "c_api/src/handle_slots.hpp"

namespace ember::capi {

struct HandleSlotsTestAccess {
  // Moves the live handle h's slot to generation g (as if it had been freed and reissued that often) and returns
  // the handle value the slot now stands for.
  static void* jump_generation(HandleSlots& t, void* h, uint32_t g) {
    const uint64_t v = HandleValue::bits(h);
    const auto kind = static_cast<HandleKind>(HandleValue::kind(v));
    t.slot(HandleValue::index(v))->state.store(HandleSlots::live_state(g, kind));
    return HandleValue::make(HandleValue::index(v), g, HandleValue::kind(v));
  }
};

namespace {

using Verdict = HandleSlots::Verdict;

std::unique_ptr<HandleSlots> table() { return std::make_unique<HandleSlots>(); }  // 256 KiB of chunk pointers

TEST(HandleSlotTable, IssueFindRetireExplain) {
  auto t = table();
  int a = 0, b = 0;
  void* ha = t->issue(&a, HandleKind::Tensor);
  EXPECT_EQ(t->find(ha, HandleKind::Tensor), &a);
  EXPECT_EQ(t->find(ha, HandleKind::Module), nullptr);  // the kind is part of the value
  EXPECT_EQ(t->retire(ha, HandleKind::Module), nullptr);
  EXPECT_EQ(t->explain(ha), Verdict::Live);
  EXPECT_EQ(t->retire(ha, HandleKind::Tensor), &a);
  EXPECT_EQ(t->retire(ha, HandleKind::Tensor), nullptr);  // once
  EXPECT_EQ(t->explain(ha), Verdict::Freed);
  void* hb = t->issue(&b, HandleKind::Tensor);  // the same slot, the next generation
  EXPECT_EQ(HandleValue::index(HandleValue::bits(hb)), HandleValue::index(HandleValue::bits(ha)));
  EXPECT_EQ(HandleValue::generation(HandleValue::bits(hb)), HandleValue::generation(HandleValue::bits(ha)) + 1);
  EXPECT_EQ(t->find(ha, HandleKind::Tensor), nullptr);
  EXPECT_EQ(t->find(hb, HandleKind::Tensor), &b);
  EXPECT_EQ(t->explain(ha), Verdict::Freed);
  // Never issued: a generation ahead of the slot's, generation 0, kind 0 or unknown, a slot of no chunk.
  const uint32_t slot = HandleValue::index(HandleValue::bits(hb));
  const uint8_t tensor = static_cast<uint8_t>(HandleKind::Tensor);
  for (void* forged : {HandleValue::make(slot, 7, tensor), HandleValue::make(slot, 0, tensor),
                       HandleValue::make(slot, 2, 0), HandleValue::make(slot, 2, 31),
                       HandleValue::make(HandleSlots::kChunkSize * 5, 1, tensor)}) {
    EXPECT_EQ(t->find(forged, HandleKind::Tensor), nullptr);
    EXPECT_EQ(t->retire(forged, HandleKind::Tensor), nullptr);
    EXPECT_EQ(t->explain(forged), Verdict::NotAHandle);
  }
  EXPECT_EQ(t->find(hb, HandleKind::Tensor), &b);  // none of that touched the live handle
}

TEST(HandleSlotTable, SlotWithItsLastGenerationIsRetiredNeverReused) {
  auto t = table();
  int a = 0, b = 0;
  void* h = HandleSlotsTestAccess::jump_generation(*t, t->issue(&a, HandleKind::Record), UINT32_MAX);
  EXPECT_EQ(t->find(h, HandleKind::Record), &a);
  EXPECT_EQ(t->retire(h, HandleKind::Record), &a);
  EXPECT_EQ(t->explain(h), Verdict::Freed);  // stays freed: no generation above it can be issued
  void* next = t->issue(&b, HandleKind::Record);
  EXPECT_NE(HandleValue::index(HandleValue::bits(next)), HandleValue::index(HandleValue::bits(h)));
  EXPECT_EQ(t->find(h, HandleKind::Record), nullptr);
  EXPECT_EQ(t->explain(h), Verdict::Freed);
}

// Threads issuing, finding and retiring on one table, so that slots are reused all the time and the free list is
// contended: every find of a live handle gives its own object, every retired value stays dead, no two live handles
// share a slot, and every slot comes back (the free list loses and duplicates none).
TEST(HandleSlotTable, ConcurrentIssueFindRetire) {
  auto t = table();
  constexpr int kThreads = 4, kRounds = 200000, kLive = 8;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      std::vector<int> objects(kLive);
      std::vector<void*> live(kLive, nullptr), dead;
      for (int i = 0; i < kRounds; ++i) {
        const int k = (i * 5 + th) % kLive;
        if (live[k]) {
          if (t->find(live[k], HandleKind::Tensor) != &objects[k]) ++errors;
          if (t->retire(live[k], HandleKind::Tensor) != &objects[k]) ++errors;
          dead.push_back(live[k]);
          live[k] = nullptr;
        } else {
          live[k] = t->issue(&objects[k], HandleKind::Tensor);
        }
        if (!dead.empty()) {
          void* d = dead[static_cast<std::size_t>(i) % dead.size()];
          if (t->find(d, HandleKind::Tensor) || t->explain(d) != Verdict::Freed) ++errors;
        }
        if (dead.size() > 64) dead.erase(dead.begin());
      }
      for (int k = 0; k < kLive; ++k)
        if (live[k] && t->retire(live[k], HandleKind::Tensor) != &objects[k]) ++errors;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  // All slots are free again: issuing as many handles as threads ever held at once reuses them, all distinct.
  std::set<uint32_t> slots;
  int dummy = 0;
  for (int i = 0; i < kThreads * kLive; ++i)
    slots.insert(HandleValue::index(HandleValue::bits(t->issue(&dummy, HandleKind::Tensor))));
  EXPECT_EQ(slots.size(), static_cast<std::size_t>(kThreads * kLive));
  EXPECT_LT(*slots.rbegin(), static_cast<uint32_t>(kThreads * kLive));  // no fresh slot was needed
}

}  // namespace
}  // namespace ember::capi
