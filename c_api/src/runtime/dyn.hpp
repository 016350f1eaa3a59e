#pragma once
// The runtime-dispatch layer behind ember.h: tensors whose backend, kind and rank are only known at run time.
// Plain C++ (no C types): c_api/src/api_*.cpp translate between ember.h and these functions.
//
// A DynTensor is a variant over the compiled backends of BackendTensor<B>, itself a variant over B's Float, Int
// and Bool primitives. Ops are written once as templates over B and reached through std::visit, so adding a
// backend means one more alternative in DynTensor / DynGrads / DynSequential / DynOptimizer, a BackendTraits row
// and its devices in devices.cpp (Vulkan: Autodiff<Vulkan>, under EMBER_HAS_VULKAN).
//
// Ranks are runtime values. Rank-agnostic ops call B's primitives directly, after the same validation the typed
// Tensor<B, D> does (engine/tensor/checks.hpp), which keeps the per-call overhead low. Composite ops and layers that
// only exist on Tensor<B, D> (softmax, Linear, LayerNorm, ...) go through with_rank, which instantiates them for
// D = 1..kMaxRank; a typed Tensor is only ever built from a primitive whose rank was checked to be D.
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"
// Set to 1 by ember_vulkan_dep when the Vulkan backend is built.
#ifndef EMBER_HAS_VULKAN
#define EMBER_HAS_VULKAN 0
#endif
#if EMBER_HAS_VULKAN
#include "backends/vulkan/vulkan_backend.hpp"
#endif

namespace ember::capi {

inline constexpr std::size_t kMaxRank = 8;

// Valid but not available in this build or on this machine (ember.h: EMBER_ERR_UNSUPPORTED).
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

// ---------------------------------------------------------------- backends
// Ids are ember.h's ember_backend values.
enum class BackendId : int32_t { Cpu = 0, Vulkan = 1, Cuda = 2 };

using CpuAd = Autodiff<Cpu<float>>;
#if EMBER_HAS_VULKAN
using VulkanAd = Autodiff<Vulkan>;
#endif

// A device as the C ABI sees it. index: the backend's device number (Vulkan: the physical device in enumeration
// order; -1 for a device adopted from the host, which has no number of Ember's).
struct DynDevice {
  BackendId backend = BackendId::Cpu;
  int32_t index = 0;
#if EMBER_HAS_VULKAN
  VulkanDevice vulkan;  // the context tensors of this device live on; always set for Vulkan devices
#endif
};

// Devices of each backend (devices.cpp). device_count is what can run here (0 when the backend is compiled but
// finds no device); make_device validates the index and opens (or reuses) the device.
int32_t device_count(BackendId backend);
DynDevice make_device(BackendId backend, int32_t index);
// Same backend and, for GPU backends, the same context.
bool same_device(const DynDevice& a, const DynDevice& b);
std::string device_name(const DynDevice& d);

// Per backend: its id and name, and the conversions between a DynDevice and the backend's own Device.
template <class B>
struct BackendTraits;
template <>
struct BackendTraits<CpuAd> {
  static constexpr BackendId id = BackendId::Cpu;
  static constexpr const char* name = "cpu";
  static CpuAd::Device device(const DynDevice&) { return {}; }
  static DynDevice dyn_device(const CpuAd::Device&) { return {}; }
};
#if EMBER_HAS_VULKAN
// Vulkan devices are numbered by the physical device; each number maps to one cached context (vulkan_devices.cpp).
int32_t vulkan_device_count();
DynDevice vulkan_device(int32_t index);
int32_t vulkan_device_index(const VulkanDevice& d);  // -1 for an adopted device
template <>
struct BackendTraits<VulkanAd> {
  static constexpr BackendId id = BackendId::Vulkan;
  static constexpr const char* name = "vulkan";
  static VulkanAd::Device device(const DynDevice& d) { return d.vulkan; }
  static DynDevice dyn_device(const VulkanAd::Device& d) { return {id, vulkan_device_index(d), d}; }
};
#endif

// Calls f(std::type_identity<B>{}) for the backend of `dev`.
template <class F>
decltype(auto) on_backend(const DynDevice& dev, F&& f) {
  switch (dev.backend) {
    case BackendId::Cpu:
      if (dev.index != 0) throw IndexError("device: cpu has one device (index 0), got " + std::to_string(dev.index));
      return f(std::type_identity<CpuAd>{});
#if EMBER_HAS_VULKAN
    case BackendId::Vulkan:
      // A DynDevice only gets a Vulkan backend id through make_device / adoption, which set the context.
      if (!dev.vulkan.context) throw ArgumentError("device: a vulkan device without a context");
      return f(std::type_identity<VulkanAd>{});
#endif
    default: break;
  }
  throw UnsupportedError("device: backend " + std::to_string(static_cast<int32_t>(dev.backend)) +
                         " is not compiled into this library");
}

// ---------------------------------------------------------------- tensors
enum class Kind : std::size_t { Float = 0, Int = 1, Bool = 2 };

template <class K>
constexpr std::size_t kind_index() {
  if constexpr (std::is_same_v<K, Float>) return 0;
  else if constexpr (std::is_same_v<K, Int>) return 1;
  else return 2;
}

template <class B>
struct BackendTensor {
  using Backend = B;
  // Alternatives by index (Float, Int, Bool): a backend may use one type for two kinds.
  std::variant<typename B::FloatPrimitive, typename B::IntPrimitive, typename B::BoolPrimitive> prim;
  Kind kind() const { return static_cast<Kind>(prim.index()); }
};

// One alternative per compiled backend.
#if EMBER_HAS_VULKAN
using DynTensor = std::variant<BackendTensor<CpuAd>, BackendTensor<VulkanAd>>;
#else
using DynTensor = std::variant<BackendTensor<CpuAd>>;
#endif

template <class B, class K>
BackendTensor<B> wrap(Primitive<B, K> p) {
  return BackendTensor<B>{decltype(BackendTensor<B>::prim)(std::in_place_index<kind_index<K>()>, std::move(p))};
}

// Calls f(K{}, primitive) with the tensor's kind tag and primitive.
template <class B, class F>
decltype(auto) visit_kind(const BackendTensor<B>& t, F&& f) {
  switch (t.kind()) {
    case Kind::Float: return f(Float{}, std::get<0>(t.prim));
    case Kind::Int: return f(Int{}, std::get<1>(t.prim));
    case Kind::Bool: break;
  }
  return f(Bool{}, std::get<2>(t.prim));
}

template <class B, class K>
constexpr DType kind_dtype() {
  if constexpr (std::is_same_v<K, Float>) return dtype_of<typename B::FloatElem>();
  else if constexpr (std::is_same_v<K, Int>) return dtype_of<typename B::IntElem>();
  else return DType::Bool;
}

template <class B>
DType tensor_dtype(const BackendTensor<B>& t) {
  return visit_kind(t, [](auto k, const auto&) { return kind_dtype<B, decltype(k)>(); });
}
template <class B>
Shape tensor_shape(const BackendTensor<B>& t) {
  return visit_kind(t, [](auto k, const auto& p) { return B::template shape<decltype(k)>(p); });
}
template <class B>
typename B::Device tensor_device(const BackendTensor<B>& t) {
  return visit_kind(t, [](auto k, const auto& p) { return B::template device<decltype(k)>(p); });
}
// Operands of one op must share a device: GPU kernels cannot read another context's memory.
template <class B>
void check_same_device(const BackendTensor<B>& a, const BackendTensor<B>& b, const char* op) {
  if (!(tensor_device(a) == tensor_device(b)))
    throw ArgumentError(std::string(op) + ": tensors live on different " + BackendTraits<B>::name + " devices");
}

inline const char* kind_name(Kind k) { return k == Kind::Float ? "float" : k == Kind::Int ? "int" : "bool"; }

template <class B>
const typename B::FloatPrimitive& float_of(const BackendTensor<B>& t, const std::string& what) {
  if (t.kind() != Kind::Float)
    throw KindError(what + " must be a float tensor, got " + std::string(dtype_name(tensor_dtype(t))));
  return std::get<0>(t.prim);
}
template <class B>
const typename B::IntPrimitive& int_of(const BackendTensor<B>& t, const std::string& what) {
  if (t.kind() != Kind::Int)
    throw KindError(what + " must be an int tensor, got " + std::string(dtype_name(tensor_dtype(t))));
  return std::get<1>(t.prim);
}
template <class B>
const typename B::BoolPrimitive& bool_of(const BackendTensor<B>& t, const std::string& what) {
  if (t.kind() != Kind::Bool)
    throw KindError(what + " must be a bool tensor, got " + std::string(dtype_name(tensor_dtype(t))));
  return std::get<2>(t.prim);
}

// Visits two tensors that must live on the same device; f(BackendTensor<B>, BackendTensor<B>) -> R.
template <class R, class F>
R visit_same(const DynTensor& a, const DynTensor& b, const char* op, F&& f) {
  return std::visit(
      [&](const auto& x, const auto& y) -> R {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::decay_t<decltype(y)>>) {
          check_same_device(x, y, op);
          return f(x, y);
        } else {
          throw ArgumentError(std::string(op) + ": tensors live on different backends");
        }
      },
      a, b);
}
// Unwraps `t` as a tensor of backend B (for lookups by tensor, like a gradient, where devices do not matter).
template <class B>
const BackendTensor<B>& as_backend(const DynTensor& t, const char* op) {
  if (auto* p = std::get_if<BackendTensor<B>>(&t)) return *p;
  throw ArgumentError(std::string(op) + ": tensors live on different backends");
}
// Unwraps `t` as a tensor of backend B on the device of `like` (another operand of the op).
template <class B>
const BackendTensor<B>& same_backend(const DynTensor& t, const BackendTensor<B>& like, const char* op) {
  const BackendTensor<B>& p = as_backend<B>(t, op);
  check_same_device(p, like, op);
  return p;
}

// ---------------------------------------------------------------- ranks and sizes
// Calls f(std::integral_constant<std::size_t, D>{}) for D = rank.
template <class F>
decltype(auto) with_rank(const char* op, std::size_t rank, F&& f) {
  switch (rank) {
    case 1: return f(std::integral_constant<std::size_t, 1>{});
    case 2: return f(std::integral_constant<std::size_t, 2>{});
    case 3: return f(std::integral_constant<std::size_t, 3>{});
    case 4: return f(std::integral_constant<std::size_t, 4>{});
    case 5: return f(std::integral_constant<std::size_t, 5>{});
    case 6: return f(std::integral_constant<std::size_t, 6>{});
    case 7: return f(std::integral_constant<std::size_t, 7>{});
    case 8: return f(std::integral_constant<std::size_t, 8>{});
    default: break;
  }
  throw UnsupportedError(std::string(op) + ": rank " + std::to_string(rank) + " is not supported (1.." +
                         std::to_string(kMaxRank) + ")");
}

// Rank 1..kMaxRank, dims >= 0, and numel * 8 bytes representable: shapes from callers (or produced from
// zero-element inputs, e.g. matmul of [n, 0] by [0, m]) can otherwise overflow the size arithmetic of a kernel.
inline void check_shape(const char* op, const Shape& s) {
  if (s.rank() < 1 || s.rank() > kMaxRank)
    throw ShapeError(std::string(op) + ": rank " + std::to_string(s.rank()) + " of " + s.to_string() +
                     " is outside 1.." + std::to_string(kMaxRank));
  check_dims(op, s);  // also bounds the non-zero dims of a zero-element shape (reductions of it would be huge)
}

// p reshaped to `rank` dims by leading 1s (NumPy alignment), recorded under autodiff like any reshape.
template <class B, class K>
Primitive<B, K> lift_rank(const Primitive<B, K>& p, std::size_t rank) {
  Shape s = B::template shape<K>(p);
  if (s.rank() >= rank) return p;
  s.dims.insert(s.dims.begin(), rank - s.rank(), 1);
  return B::template reshape<K>(p, s);
}

// A typed tensor view of a float primitive whose rank the caller checked to be D.
template <class B, std::size_t D, class K = Float>
Tensor<B, D, K> typed(const Primitive<B, K>& p) {
  return Tensor<B, D, K>(p);
}

// ---------------------------------------------------------------- gradients
template <class B>
struct BackendGrads {
  using Backend = B;
  typename B::Gradients grads;
};
#if EMBER_HAS_VULKAN
using DynGrads = std::variant<BackendGrads<CpuAd>, BackendGrads<VulkanAd>>;
#else
using DynGrads = std::variant<BackendGrads<CpuAd>>;
#endif

}  // namespace ember::capi
