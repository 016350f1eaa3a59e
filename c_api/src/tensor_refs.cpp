// Shared ownership of tensor handles held as params (tensor_refs.hpp).
#include "c_api/src/tensor_refs.hpp"

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "c_api/src/boundary.hpp"

namespace ember::capi {
namespace {

struct Owners {
  std::size_t holders = 0;
  std::size_t caller_refs = 1;  // the reference of whoever made the handle
};

// Handles without holders are not in the table: ember_tensor_free of an ordinary tensor costs one lookup. Leaked
// on purpose, like the handle registry.
std::mutex& table_mutex() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::unordered_map<const ember_tensor*, Owners>& table() {
  static auto* t = new std::unordered_map<const ember_tensor*, Owners>;
  return *t;
}
// The table's size, written under the mutex after each change: while no handle is held (a program without
// modules or optimizers over its tensors, the Python binding) ember_tensor_free skips the mutex and the lookup. A
// handle in the table was put there before the caller could free it, so its free never reads a stale 0.
std::atomic<std::size_t> g_entries{0};
void count_entries() { g_entries.store(table().size(), std::memory_order_release); }

void destroy(ember_tensor* t) noexcept { destroy_handle(t); }

}  // namespace

void retain_tensor(ember_tensor* t) {
  std::lock_guard lock(table_mutex());
  ++table()[t].holders;
  count_entries();
}

// An entry goes back to being an ordinary handle (no entry: no holder, one caller reference) as soon as it can.
static void normalize(std::unordered_map<const ember_tensor*, Owners>::iterator it) {
  if (it->second.holders == 0 && it->second.caller_refs == 1) table().erase(it);
  count_entries();
}

void release_tensor(ember_tensor* t) noexcept {
  {
    std::lock_guard lock(table_mutex());
    auto it = table().find(t);
    if (it == table().end()) return;
    --it->second.holders;
    if (it->second.holders > 0 || it->second.caller_refs > 0) {
      normalize(it);
      return;
    }
    table().erase(it);
    count_entries();
  }
  destroy(t);
}

void add_caller_ref(ember_tensor* t) {
  std::lock_guard lock(table_mutex());
  ++table()[t].caller_refs;
  count_entries();
}

bool caller_free_shared_tensor(ember_tensor* t) {
  if (g_entries.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard lock(table_mutex());
  auto it = table().find(t);
  if (it == table().end()) return false;
  if (it->second.caller_refs == 0)
    throw StatusError(EMBER_ERR_INVALID_HANDLE,
                      "the tensor was already freed as often as it was handed out (a module or optimizer still holds "
                      "it as a param)");
  --it->second.caller_refs;
  if (it->second.holders == 0 && it->second.caller_refs == 0) {
    table().erase(it);
    count_entries();
    return false;
  }
  normalize(it);
  return true;
}

}  // namespace ember::capi
