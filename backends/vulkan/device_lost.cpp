#include "backends/vulkan/device_lost.hpp"

#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>

#include "backends/vulkan/context.hpp"

namespace ember::vk {
namespace {

// Function pointers carry no context, so each armed context gets a slot and wrappers instantiated for that slot.
struct Slot {
  bool used = false;  // under slots_mutex()
  Context* ctx = nullptr;
  Functions real;  // the table as it was before wrapping
  std::atomic<int64_t> remaining{0};
  std::atomic<bool> fired{false};
  std::atomic<uint64_t> after_loss{0};
};
std::array<Slot, LossInjection::kMaxArmed>& slots() {
  static auto* s = new std::array<Slot, LossInjection::kMaxArmed>;  // leaked: wrappers may run during exit
  return *s;
}
std::mutex& slots_mutex() {
  static auto* m = new std::mutex;
  return *m;
}

// True when the call must report VK_ERROR_DEVICE_LOST. `counted`: a submit or a blocking wait, the calls the
// countdown is made of; queries and idle waits only see a loss that already happened.
bool lost_now(Slot& s, bool counted) {
  if (s.fired.load()) {
    s.after_loss.fetch_add(1);
    return true;
  }
  if (counted && s.remaining.fetch_sub(1) <= 0) {
    s.fired.store(true);
    return true;
  }
  return false;
}

template <int I>
struct Wrappers {
  static VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit(VkQueue q, uint32_t n, const VkSubmitInfo* s, VkFence f) {
    Slot& sl = slots()[I];
    return lost_now(sl, true) ? VK_ERROR_DEVICE_LOST : sl.real.QueueSubmit(q, n, s, f);
  }
  static VKAPI_ATTR VkResult VKAPI_CALL WaitForFences(VkDevice d, uint32_t n, const VkFence* f, VkBool32 all,
                                                      uint64_t timeout) {
    Slot& sl = slots()[I];
    return lost_now(sl, timeout != 0) ? VK_ERROR_DEVICE_LOST : sl.real.WaitForFences(d, n, f, all, timeout);
  }
  static VKAPI_ATTR VkResult VKAPI_CALL WaitSemaphores(VkDevice d, const VkSemaphoreWaitInfo* w, uint64_t timeout) {
    Slot& sl = slots()[I];
    return lost_now(sl, timeout != 0) ? VK_ERROR_DEVICE_LOST : sl.real.WaitSemaphores(d, w, timeout);
  }
  static VKAPI_ATTR VkResult VKAPI_CALL GetFenceStatus(VkDevice d, VkFence f) {
    Slot& sl = slots()[I];
    return lost_now(sl, false) ? VK_ERROR_DEVICE_LOST : sl.real.GetFenceStatus(d, f);
  }
  static VKAPI_ATTR VkResult VKAPI_CALL GetSemaphoreCounterValue(VkDevice d, VkSemaphore s, uint64_t* v) {
    Slot& sl = slots()[I];
    return lost_now(sl, false) ? VK_ERROR_DEVICE_LOST : sl.real.GetSemaphoreCounterValue(d, s, v);
  }
  static VKAPI_ATTR VkResult VKAPI_CALL QueueWaitIdle(VkQueue q) {
    Slot& sl = slots()[I];
    return lost_now(sl, false) ? VK_ERROR_DEVICE_LOST : sl.real.QueueWaitIdle(q);
  }
  static VKAPI_ATTR VkResult VKAPI_CALL DeviceWaitIdle(VkDevice d) {
    Slot& sl = slots()[I];
    return lost_now(sl, false) ? VK_ERROR_DEVICE_LOST : sl.real.DeviceWaitIdle(d);
  }
};

// The wrapped entry points, for copying into / out of a table.
#define EMBER_VK_WRAPPED(X) \
  X(QueueSubmit)            \
  X(WaitForFences)          \
  X(WaitSemaphores)         \
  X(GetFenceStatus)         \
  X(GetSemaphoreCounterValue) \
  X(QueueWaitIdle)          \
  X(DeviceWaitIdle)

template <int I>
void wrap(Functions& fn) {
#define EMBER_VK_WRAP(name) fn.name = &Wrappers<I>::name;
  EMBER_VK_WRAPPED(EMBER_VK_WRAP)
#undef EMBER_VK_WRAP
}

template <std::size_t... I>
constexpr std::array<void (*)(Functions&), sizeof...(I)> wrap_table(std::index_sequence<I...>) {
  return {&wrap<static_cast<int>(I)>...};
}
constexpr auto kWrap = wrap_table(std::make_index_sequence<LossInjection::kMaxArmed>{});

}  // namespace

std::unique_ptr<LossInjection> LossInjection::install(Context& ctx, Functions& fn, uint32_t after) {
  std::lock_guard lock(slots_mutex());
  for (int i = 0; i < kMaxArmed; ++i) {
    Slot& s = slots()[static_cast<std::size_t>(i)];
    if (s.used) continue;
    s.used = true;
    s.ctx = &ctx;
    s.real = fn;
    s.remaining.store(after);
    s.fired.store(false);
    s.after_loss.store(0);
    kWrap[static_cast<std::size_t>(i)](fn);
    return std::unique_ptr<LossInjection>(new LossInjection(fn, i));
  }
  throw VulkanError("vulkan: simulated device loss is armed on " + std::to_string(kMaxArmed) +
                         " contexts already (free one first)");
}

LossInjection::~LossInjection() {
  std::lock_guard lock(slots_mutex());
  Slot& s = slots()[static_cast<std::size_t>(slot_)];
#define EMBER_VK_RESTORE(name) fn_.name = s.real.name;
  EMBER_VK_WRAPPED(EMBER_VK_RESTORE)
#undef EMBER_VK_RESTORE
  s.used = false;
  s.ctx = nullptr;
}

void LossInjection::rearm(uint32_t after) {
  Slot& s = slots()[static_cast<std::size_t>(slot_)];
  if (!s.fired.load()) s.remaining.store(after);
}

bool LossInjection::fired() const { return slots()[static_cast<std::size_t>(slot_)].fired.load(); }

uint64_t LossInjection::calls_after_loss() const {
  return slots()[static_cast<std::size_t>(slot_)].after_loss.load();
}

void LossInjection::drain() {
  Slot& s = slots()[static_cast<std::size_t>(slot_)];
  if (!s.fired.load()) return;
  s.ctx->with_queue([&](VkQueue q) { s.real.QueueWaitIdle(q); });
}

int64_t injected_loss_from_env() {
  const char* v = std::getenv("EMBER_VULKAN_INJECT_DEVICE_LOST");
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (*end != '\0' || n < 0 || n > UINT32_MAX)
    throw ArgumentError(std::string("EMBER_VULKAN_INJECT_DEVICE_LOST=") + v +
                        ": expected the number of submits / waits that still succeed (0, 1, ...)");
  return n;
}

}  // namespace ember::vk
