#pragma once
// The C boundary: what every exported function in api_*.cpp shares.
//
//  * guard(fn, body) runs the body and turns any C++ exception into an ember_status plus a per-thread message
//    "<fn>: <what>"; nothing escapes into C.
//  * Handles are heap objects registered in a process-wide registry of live handles with their type, so NULL,
//    already-freed and wrong-type handles are reported instead of dereferenced. A freed address reused by a new
//    handle of the same type is indistinguishable (documented in ember.h).
//  * Versioned structs are read by copying the caller's struct_size bytes over a defaults-initialized struct.
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

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

// ---------------------------------------------------------------- handle registry
enum class HandleKind : uint8_t {
  Device = 1, Tensor, Grads, Module, Optimizer, Record, LoadReport, Scheduler,
  VulkanReadback,  // issue 17 part 8
  VulkanPlan,  // issue 17: Vulkan plans
};

struct SchedulerState;  // api_scheduler.cpp
class VulkanReadback;   // runtime/vulkan_interop.hpp
struct VulkanPlanState;  // api_vulkan_plan.cpp

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
template <class H> constexpr HandleKind kind_of() { return HandleTraits<H>::kind; }

// What an ember_* pointer really points to.
template <class H>
struct Handle : H {
  typename HandleTraits<H>::Value value;
  // In-place updates of this handle's value (ember_tensor_version; tensors only): the handle is the tensor's
  // identity at the boundary, its value an immutable snapshot that an in-place op replaces.
  uint64_t version = 0;
};

void register_handle(const void* p, HandleKind k);
// Throws StatusError (NULL_HANDLE / INVALID_HANDLE) unless p is a live handle of kind k.
void check_handle(const void* p, HandleKind k, const char* arg);
// Removes p from the registry; false when it was not a live handle of kind k (nothing to free).
bool unregister_handle(const void* p, HandleKind k);

// The value behind a live handle (throws StatusError otherwise).
template <class H>
const typename HandleTraits<H>::Value& use(const H* h, const char* arg) {
  check_handle(h, kind_of<H>(), arg);
  return static_cast<const Handle<H>*>(h)->value;
}
template <class H>
typename HandleTraits<H>::Value& use_mut(H* h, const char* arg) {
  check_handle(h, kind_of<H>(), arg);
  return static_cast<Handle<H>*>(h)->value;
}
// The whole live handle (its value and its version), for in-place updates.
template <class H>
Handle<H>& use_handle(H* h, const char* arg) {
  check_handle(h, kind_of<H>(), arg);
  return *static_cast<Handle<H>*>(h);
}

// A new registered handle holding `value`.
template <class H, class V>
H* make_handle(V&& value) {
  std::unique_ptr<Handle<H>> h(new Handle<H>{{}, typename HandleTraits<H>::Value(std::forward<V>(value))});
  register_handle(static_cast<H*>(h.get()), kind_of<H>());
  return h.release();
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

// ember_*_free: NULL is a no-op; a handle that is not live is reported, never freed twice.
template <class H>
ember_status free_handle(H* h, const char* fn) noexcept {
  if (!h) return EMBER_OK;
  return guard(fn, [&] {
    if constexpr (std::is_same_v<H, ember_tensor>) {
      if (caller_free_shared_tensor(h)) return;
    }
    if (!unregister_handle(h, kind_of<H>()))
      throw StatusError(EMBER_ERR_INVALID_HANDLE, "handle is not a live handle of this type (already freed?)");
    delete static_cast<Handle<H>*>(h);
  });
}

// ---------------------------------------------------------------- versioned structs
// The size of the first version of a struct: up to and including its last v1 field. Spelled with the field, not
// sizeof, so that appending fields later keeps accepting callers built against the first version.
#define EMBER_STRUCT_END(type, last_v1_field) (offsetof(type, last_v1_field) + sizeof(type::last_v1_field))
// The caller's struct (struct_size bytes of it, at least `min_size`) over `defaults`.
template <class T>
T read_struct(const T* in, T defaults, std::size_t min_size, const char* name) {
  if (!in) throw ArgumentError(std::string(name) + " is NULL");
  if (in->struct_size < min_size)
    throw ArgumentError(std::string(name) + ": struct_size " + std::to_string(in->struct_size) +
                        " is smaller than any version of the struct (" + std::to_string(min_size) + ")");
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
