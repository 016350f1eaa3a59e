#pragma once
// The C ABI fuzzer's state for one input: a small pool of handles of every type, the argument pickers that turn
// input bytes into arguments (live, NULL, freed and wrong-type handles; in-range and hostile values), and the checked
// call wrappers that enforce ember.h's rules on every call:
//   * a status of the ember_status_code range comes back (a crash, abort or UB is caught by libFuzzer / ASan / UBSan);
//   * a failure leaves a message naming the function in ember_last_error(), and *out set to NULL;
//   * a success that returns a handle returns a live one.
// A broken rule aborts, so libFuzzer keeps the input as a crash artifact.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "ember.h"

namespace ember_fuzz {

// The handle types, in the order of the pool's rows. The Vulkan plan and readback rows stay empty in a build without
// the Vulkan backend (the fuzz build: no creating call can succeed there); they still give the Vulkan rows their
// handle arguments (NULL, freed, wrong-type and never-a-handle pointers) and would hold live ones with a device.
enum Kind : int {
  kDevice, kTensor, kGrads, kModule, kOptimizer, kRecord, kLoadReport, kScheduler, kVulkanPlan, kVulkanReadback,
  kKinds
};

template <class H> constexpr Kind kind_of();
template <> constexpr Kind kind_of<ember_device>() { return kDevice; }
template <> constexpr Kind kind_of<ember_tensor>() { return kTensor; }
template <> constexpr Kind kind_of<ember_grads>() { return kGrads; }
template <> constexpr Kind kind_of<ember_module>() { return kModule; }
template <> constexpr Kind kind_of<ember_optimizer>() { return kOptimizer; }
template <> constexpr Kind kind_of<ember_record>() { return kRecord; }
template <> constexpr Kind kind_of<ember_load_report>() { return kLoadReport; }
template <> constexpr Kind kind_of<ember_scheduler>() { return kScheduler; }
template <> constexpr Kind kind_of<ember_vulkan_plan>() { return kVulkanPlan; }
template <> constexpr Kind kind_of<ember_vulkan_readback>() { return kVulkanReadback; }

// The last parameter type of an ember_* function: the H** of a creating call.
template <class F> struct LastParam;
template <class R, class... A> struct LastParam<R (*)(A...)> {
  using type = std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>;
};
template <class F> using MadeHandle = std::remove_pointer_t<std::remove_pointer_t<typename LastParam<F>::type>>;

[[noreturn]] void violation(const char* fn, const std::string& what);
// The process's scratch dir for the files the input saves and loads (a.rec, b.rec; emptied before each input).
const std::string& scratch_dir();

// A versioned struct in a buffer 64 bytes larger, so that struct_size may claim a newer (larger) struct honestly.
template <class T>
struct Padded {
  T value{};
  unsigned char newer_fields[64]{};
};

class Ctx {
 public:
  static constexpr std::size_t kSlots = 6;  // per handle type: small, so that calls often meet the same handles

  explicit Ctx(FuzzedDataProvider& in) : in(in) {}
  ~Ctx();  // frees every handle still in the pool and leaves the no-grad scopes it entered
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;

  FuzzedDataProvider& in;

  // ------------------------------------------------------------ argument pickers
  // A handle argument: usually a pool slot (live, or NULL when empty), sometimes NULL, a handle of another type, a
  // freed handle or a pointer that was never a handle. ember.h promises all of these are reported (handle values are
  // resolved through the slot table, never dereferenced; a freed one never becomes live again), so passing them is
  // the caller misuse under test.
  template <class H>
  H* pick() {
    return static_cast<H*>(pick_raw(kind_of<H>()));
  }
  ember_tensor* tensor() { return pick<ember_tensor>(); }
  ember_device* device() { return pick<ember_device>(); }
  ember_module* module() { return pick<ember_module>(); }
  ember_optimizer* optimizer() { return pick<ember_optimizer>(); }
  ember_grads* grads() { return pick<ember_grads>(); }
  ember_record* record() { return pick<ember_record>(); }
  ember_load_report* report() { return pick<ember_load_report>(); }
  ember_scheduler* scheduler() { return pick<ember_scheduler>(); }
  ember_vulkan_plan* plan() { return pick<ember_vulkan_plan>(); }
  ember_vulkan_readback* readback() { return pick<ember_vulkan_readback>(); }
  // n tensors (n from the input, 0..4) in a heap array of exactly n (ASan sees any read past it).
  std::vector<ember_tensor*> tensors();

  // An enum value: mostly one of the n valid ones, sometimes just outside, negative or extreme.
  int32_t choice(int32_t n);
  bool flag() { return in.ConsumeBool(); }
  // A dim index: mostly -3..3, sometimes extreme.
  int64_t dim();
  // A size (shape dim, count, index): mostly 0..4, sometimes negative or huge (allocations that must fail cleanly).
  int64_t size();
  // A double: mostly small, sometimes NaN, inf, huge or denormal.
  double real();
  // A length for a caller buffer: mostly small, sometimes 0.
  std::size_t capacity();
  // A shape array: a rank (0..9; rank > 8 must be refused) and that many dims.
  std::vector<int64_t> shape();
  // struct_size for a versioned struct of size `full`: mostly full, sometimes 0, too small or larger.
  uint32_t struct_size(uint32_t full);
  // A file path: in this input's scratch dir, empty, NULL, or unwritable.
  const char* path();

  // ------------------------------------------------------------ checked calls
  // Calls fn(args..., &out) and keeps the handle made in a pool slot (freeing the slot's previous handle after the
  // call, so the call may still see it). Sometimes out itself is NULL, which must fail cleanly.
  template <class F, class... A>
  void make(const char* name, F fn, std::tuple<A...> args) {
    using H = MadeHandle<F>;
    const bool null_out = in.ConsumeIntegralInRange<int>(0, 31) == 0;
    H* out = reinterpret_cast<H*>(uintptr_t{1});  // must be overwritten: NULL on failure, a handle on success
    ember_clear_error();
    const ember_status s = std::apply(fn, std::tuple_cat(args, std::tuple<H**>{null_out ? nullptr : &out}));
    check(name, s);
    if (null_out) return;
    if (s != EMBER_OK) {
      if (out) violation(name, "failed without setting *out to NULL");
      return;
    }
    if (!out) violation(name, "returned EMBER_OK and a NULL handle");
    keep(out, name);
  }
  // Calls fn(args...) for its status only.
  template <class F, class... A>
  ember_status call(const char* name, F fn, std::tuple<A...> args) {
    ember_clear_error();
    const ember_status s = std::apply(fn, args);
    check(name, s);
    return s;
  }
  // Enforces the error rules on `s`, the status `name` returned.
  static void check(const char* name, ember_status s);
  // Puts a handle the harness now owns into a pool slot chosen by the input.
  template <class H>
  void keep(H* h, const char* made_by) {
    keep_raw(kind_of<H>(), h, made_by);
  }
  // Frees the handle in a slot chosen by the input (and remembers its address as a freed handle).
  void free_one(Kind k);
  // Calls fn (an ember_*_free) on a picked handle argument. A handle of the pool's own row is freed through the pool
  // (its slot must not dangle); anything else is NULL (a no-op) or no live handle of H's type (NULL, freed,
  // another type's, never a handle), which fn must refuse: freeing another type's live handle would leave the pool
  // holding a dangling one, and release() could not tell.
  template <class H>
  void free_picked(const char* name, ember_status (*fn)(H*)) {
    H* h = pick<H>();
    if (h && release_pooled(kind_of<H>(), h)) return;
    if (call(name, fn, std::tuple{h}) == EMBER_OK && h)
      violation(name, "accepted a pointer that is no live handle of its type");
  }

  int no_grad_depth = 0;  // scopes entered minus exited by this input, left at the end

 private:
  void* pick_raw(Kind k);
  void keep_raw(Kind k, void* h, const char* made_by);
  void release(Kind k, std::size_t slot);
  bool release_pooled(Kind k, void* h);  // frees h through its pool slot of kind k, if it has one

  std::array<std::array<void*, kSlots>, kKinds> pool_{};
  std::array<void*, 8> freed_{};  // addresses of freed handles (never dereferenced by the harness)
  std::size_t freed_next_ = 0;
};

}  // namespace ember_fuzz

// One row of the action table: `MAKE(ember_tensor_unary, c.tensor(), c.choice(27));`. The arguments are drawn in
// order (a braced list is evaluated left to right), so an input replays the same calls.
#define MAKE(fn, ...) c.make(#fn, fn, std::tuple{__VA_ARGS__})
#define CALL(fn, ...) c.call(#fn, fn, std::tuple{__VA_ARGS__})
