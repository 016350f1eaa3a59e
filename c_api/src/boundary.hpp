#pragma once
// The C boundary: what every exported function in api_*.cpp shares.
//
//  * guard(fn, body) runs the body and turns any C++ exception into an ember_status plus a per-thread message
//    "<fn>: <what>"; nothing escapes into C.
//  * Handles are opaque values (slot index, generation, kind: handle_slots.hpp) resolved through a lock-free slot
//    table, so NULL, freed, wrong-type and forged handles are reported instead of dereferenced, and a stale handle
//    stays stale after its slot is reused.
//  * Versioned structs are read by copying the caller's struct_size bytes over a defaults-initialized struct.
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "c_api/src/handle_slots.hpp"
#include "c_api/src/runtime/optimizer.hpp"
#include "c_api/src/runtime/tensor_ops.hpp"
#include "ember.h"

// The opaque types of ember.h, empty on purpose: the exported signatures, and so the DWARF abidw turns into the
// ABI baseline (c_api/abi/), see no C++ internals. A handle object is a Handle<H> (below) deriving from them.
struct ember_device {};
struct ember_tensor {};
struct ember_grads {};
struct ember_module {};
struct ember_optimizer {};
struct ember_record {};
struct ember_load_report {};
struct ember_scheduler {};
struct ember_vulkan_readback {};
struct ember_vulkan_plan {};  // issue 17: Vulkan plans
struct ember_compiled {};     // issue 14: compiled forwards

namespace ember::capi {

// A failure with an explicit status (bad handles, small buffers).
class StatusError : public Error {
 public:
  StatusError(ember_status s, const std::string& what) : Error(what), status(s) {}
  ember_status status;
};

ember_status fail(const char* fn) noexcept;  // maps the exception being handled

template <class F>
ember_status guard(const char* fn, F&& body) noexcept {
  try {
    body();
    return EMBER_OK;
  } catch (...) {
    return fail(fn);
  }
}

// ---------------------------------------------------------------- handles
// HandleKind and the slot table that maps handle values to objects: handle_slots.hpp.

struct SchedulerState;  // api_scheduler.cpp
class VulkanReadback;   // runtime/vulkan_interop.hpp
struct VulkanPlanState;  // api_vulkan_plan.cpp
struct CompiledState;    // api_compile.cpp

template <class H> struct HandleTraits;
template <> struct HandleTraits<ember_device> { using Value = DynDevice; static constexpr HandleKind kind = HandleKind::Device; };
template <> struct HandleTraits<ember_tensor> { using Value = DynTensor; static constexpr HandleKind kind = HandleKind::Tensor; };
template <> struct HandleTraits<ember_grads> { using Value = DynGrads; static constexpr HandleKind kind = HandleKind::Grads; };
template <> struct HandleTraits<ember_module> {
  using Value = std::shared_ptr<ModuleState>;
  static constexpr HandleKind kind = HandleKind::Module;
};
template <> struct HandleTraits<ember_optimizer> {
  using Value = std::shared_ptr<OptimizerState>;
  static constexpr HandleKind kind = HandleKind::Optimizer;
};
template <> struct HandleTraits<ember_record> { using Value = Record; static constexpr HandleKind kind = HandleKind::Record; };
template <> struct HandleTraits<ember_load_report> {
  using Value = LoadReport;
  static constexpr HandleKind kind = HandleKind::LoadReport;
};
template <> struct HandleTraits<ember_scheduler> {
  using Value = std::shared_ptr<SchedulerState>;
  static constexpr HandleKind kind = HandleKind::Scheduler;
};
template <> struct HandleTraits<ember_vulkan_readback> {
  using Value = std::shared_ptr<VulkanReadback>;
  static constexpr HandleKind kind = HandleKind::VulkanReadback;
};
template <> struct HandleTraits<ember_vulkan_plan> {
  using Value = std::shared_ptr<VulkanPlanState>;
  static constexpr HandleKind kind = HandleKind::VulkanPlan;
};
template <> struct HandleTraits<ember_compiled> {
  using Value = std::shared_ptr<CompiledState>;
  static constexpr HandleKind kind = HandleKind::Compiled;
};
template <class H> constexpr HandleKind kind_of() { return HandleTraits<H>::kind; }

// The object a live handle stands for. It is not what the ember_* pointer points to (a handle value is an encoded
// slot, never dereferenced): only the slot table leads from one to the other, so nothing can cast its way around
// the liveness check.
template <class H>
struct Handle {
  typename HandleTraits<H>::Value value;
  // In-place updates of this handle's value (ember_tensor_version; tensors only): the handle is the tensor's
  // identity at the boundary, its value an immutable snapshot that an in-place op replaces.
  uint64_t version = 0;
};

// Throws StatusError: NULL_HANDLE for NULL, INVALID_HANDLE (saying freed, wrong type or not a handle) otherwise.
[[noreturn]] void bad_handle(const void* p, HandleKind k, const char* arg);
// The object of the live handle p of kind k (lock-free), or bad_handle.
inline void* resolve(const void* p, HandleKind k, const char* arg) {
  if (void* object = HandleSlots::instance().find(p, k)) return object;
  bad_handle(p, k, arg);
}

// The value behind a live handle (throws StatusError otherwise).
template <class H>
const typename HandleTraits<H>::Value& use(const H* h, const char* arg) {
  return static_cast<const Handle<H>*>(resolve(h, kind_of<H>(), arg))->value;
}
template <class H>
typename HandleTraits<H>::Value& use_mut(H* h, const char* arg) {
  return static_cast<Handle<H>*>(resolve(h, kind_of<H>(), arg))->value;
}
// The whole live handle (its value and its version), for in-place updates.
template <class H>
Handle<H>& use_handle(H* h, const char* arg) {
  return *static_cast<Handle<H>*>(resolve(h, kind_of<H>(), arg));
}
template <class H>
const Handle<H>& use_handle(const H* h, const char* arg) {
  return *static_cast<const Handle<H>*>(resolve(h, kind_of<H>(), arg));
}

// A new handle holding `value`.
template <class H, class V>
H* make_handle(V&& value) {
  auto object = std::make_unique<Handle<H>>(Handle<H>{typename HandleTraits<H>::Value(std::forward<V>(value))});
  H* h = static_cast<H*>(HandleSlots::instance().issue(object.get(), kind_of<H>()));
  object.release();  // owned by the slot table until free_handle / destroy_handle
  return h;
}

// Ends the handle h and deletes its object; false (nothing done) when h is not a live handle of H's kind.
template <class H>
bool destroy_handle(H* h) noexcept {
  void* object = HandleSlots::instance().retire(h, kind_of<H>());
  delete static_cast<Handle<H>*>(object);
  return object != nullptr;
}

// Validates `out`, clears *out, and returns a reference to it for the result.
template <class T>
T*& out_handle(T** out) {
  if (!out) throw ArgumentError("out is NULL");
  *out = nullptr;
  return *out;
}
template <class T>
T& out_value(T* out, const char* name) {
  if (!out) throw ArgumentError(std::string(name) + " is NULL");
  return *out;
}

// Tensors held as params by modules or optimizers (tensor_refs.hpp): true when the handle stays alive.
bool caller_free_shared_tensor(ember_tensor* t);

// ember_*_free: NULL is a no-op; a handle that is not live is reported (freed, wrong type, not a handle), never
// freed twice, and a stale one never reaches the object that now uses its slot.
template <class H>
ember_status free_handle(H* h, const char* fn) noexcept {
  if (!h) return EMBER_OK;
  return guard(fn, [&] {
    if constexpr (std::is_same_v<H, ember_tensor>) {
      if (caller_free_shared_tensor(h)) return;
    }
    if (!destroy_handle(h)) bad_handle(h, kind_of<H>(), "handle");
  });
}

// ---------------------------------------------------------------- versioned structs
// The size of the first version of a struct: up to and including its last v1 field. Spelled with the field, not
// sizeof, so that appending fields later keeps accepting callers built against the first version.
#define EMBER_STRUCT_END(type, last_v1_field) (offsetof(type, last_v1_field) + sizeof(type::last_v1_field))
// The C name of a struct type (ember_conv2d_options), from the compiler's spelling of this function's signature:
// the messages of read_struct name the struct without a table that every new struct would have to join.
template <class T>
constexpr std::string_view struct_name() {
  constexpr std::string_view f = __PRETTY_FUNCTION__;  // "... [with T = ember_x; ...]" (GCC), "... [T = ember_x]"
  constexpr std::size_t start = f.find("T = ") + 4;
  return f.substr(start, f.find_first_of(";]", start) - start);
}
// The offset of the first non-zero byte of bytes [from, to) of `p`, or `to` when all are zero.
std::size_t first_nonzero_byte(const void* p, std::size_t from, std::size_t to) noexcept;
// The caller's struct (struct_size bytes of it, at least `min_size`) over `defaults`. A struct from a newer ember.h
// (struct_size above ours) is accepted only when the fields this version does not know are all zero, i.e. left at
// their defaults by its _init: a non-zero one asks for something this Ember cannot do, so it is refused rather
// than silently ignored.
template <class T>
T read_struct(const T* in, T defaults, std::size_t min_size, const char* name) {
  if (!in) throw ArgumentError(std::string(name) + " is NULL");
  if (in->struct_size < min_size)
    throw ArgumentError(std::string(name) + ": struct_size " + std::to_string(in->struct_size) +
                        " is smaller than any version of the struct (" + std::to_string(min_size) + ")");
  if (in->struct_size > sizeof(T)) {
    const std::size_t at = first_nonzero_byte(in, sizeof(T), in->struct_size);
    if (at < in->struct_size)
      throw ArgumentError(fmt::format("{} ({}): struct_size {} is larger than this Ember's struct ({} bytes) and the "
                                      "unknown tail is not zero (byte at offset {}): a field of a newer ember.h that "
                                      "this version cannot honour",
                                      name, struct_name<T>(), in->struct_size, sizeof(T), at));
  }
  std::memcpy(static_cast<void*>(&defaults), in, std::min<std::size_t>(in->struct_size, sizeof(T)));
  defaults.struct_size = sizeof(T);
  return defaults;
}
// Writes `value` into the caller's struct, at most its struct_size bytes.
template <class T>
void write_struct(T* out, T value, std::size_t min_size, const char* name) {
  if (!out) throw ArgumentError(std::string(name) + " is NULL");
  if (out->struct_size < min_size)
    throw ArgumentError(std::string(name) + ": struct_size " + std::to_string(out->struct_size) +
                        " is smaller than any version of the struct (" + std::to_string(min_size) + "); set it to sizeof");
  const uint32_t caller_size = out->struct_size;
  value.struct_size = caller_size;
  std::memcpy(static_cast<void*>(out), &value, std::min<std::size_t>(caller_size, sizeof(T)));
}

// Text into a caller buffer with ember.h's Strings rule.
void write_text(const std::string& text, char* buf, std::size_t capacity, std::size_t* length);

// ---------------------------------------------------------------- enum conversion (range-checked)
DType to_dtype(int32_t v, const char* what = "dtype");
const DynDevice& device_or_default(const ember_device* d);
Shape to_shape(const int64_t* dims, std::size_t rank, const char* what = "shape");

}  // namespace ember::capi
