#pragma once
// The runtime-dispatch layer behind ember.h: handles to devices and tensors whose backend, kind and rank are only
// known at run time. Plain C++ (no C types): c_api/src/api_*.cpp translate between ember.h and these types.
//
// Backend-agnostic on purpose: no backend header is included here, so libember's core (api_*.cpp, the dispatch
// functions of tensor_ops.hpp, the plugin loader) links no GPU library. Each handle carries the BackendRuntime
// (backend_runtime.hpp) that made it and a type-erased payload that only that runtime reads (a BackendTensor<B>,
// backend_tensor.hpp). The CPU runtime is compiled into libember; each GPU backend's runtime is a plugin loaded on
// first use (plugin_loader.hpp). Ops are written once as templates over B (ops_*.cpp, sequential.cpp, ...) and
// compiled into every runtime.
//
// Ranks are runtime values. Rank-agnostic ops call B's primitives directly, after the same validation the typed
// Tensor<B, D> does (engine/tensor/checks.hpp), which keeps the per-call overhead low. Composite ops and layers that
// only exist on Tensor<B, D> (softmax, Linear, LayerNorm, ...) go through with_rank, which instantiates them for
// D = 1..kMaxRank; a typed Tensor is only ever built from a primitive whose rank was checked to be D.
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "backends/backend_list.hpp"
#include "engine/ember.hpp"

namespace ember::capi {

inline constexpr std::size_t kMaxRank = 8;

// Valid but not available in this build or on this machine (ember.h: EMBER_ERR_UNSUPPORTED).
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

class BackendRuntime;

// A device as the C ABI sees it. index: the backend's device number (Vulkan: the physical device in enumeration
// order; -1 for a device adopted from the host, which has no number of Ember's). Made by its runtime only.
struct DynDevice {
  BackendId backend = BackendId::Cpu;
  int32_t index = 0;
  const BackendRuntime* runtime = nullptr;
  std::shared_ptr<const void> native;  // the backend's own Device (B::Device), read by `runtime` only
};

// A tensor, a set of gradients: the runtime that made them and its payload (BackendTensor<B> / BackendGrads<B>).
struct DynTensor {
  const BackendRuntime* runtime = nullptr;
  std::shared_ptr<const void> payload;
};
struct DynGrads {
  const BackendRuntime* runtime = nullptr;
  std::shared_ptr<const void> payload;
};

// Scaling of a DFT (ember.h: ember_fft_norm, NumPy's `norm`): Backward scales the inverse by 1/n, Forward the
// forward transform by 1/n, Ortho both by 1/sqrt(n).
enum class FftNorm : int32_t { Backward = 0, Forward = 1, Ortho = 2 };

// ---------------------------------------------------------------- kinds
enum class Kind : std::size_t { Float = 0, Int = 1, Bool = 2 };

inline const char* kind_name(Kind k) { return k == Kind::Float ? "float" : k == Kind::Int ? "int" : "bool"; }

inline void check_dtype(const char* op, DType d) {
  if (!dtype_is_float(d) && !dtype_is_int(d) && d != DType::Bool)
    throw ArgumentError(std::string(op) + ": unknown dtype " + std::to_string(static_cast<int32_t>(d)));
}

// ---------------------------------------------------------------- ranks and sizes
// Calls f(std::integral_constant<std::size_t, D>{}) for D = rank. There is no typed Tensor<B, 0>: callers with a
// rank-0 operand view it as [1] first (backend_tensor.hpp: at_least_1d) when the op means anything for a scalar.
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

// Rank 0..kMaxRank, dims >= 0, and numel * 8 bytes representable: shapes from callers (or produced from
// zero-element inputs, e.g. matmul of [n, 0] by [0, m]) can otherwise overflow the size arithmetic of a kernel.
// Rank 0 is a scalar (one element, shape []); backend_tensor.hpp says how ops meet it.
inline void check_shape(const char* op, const Shape& s) {
  if (s.rank() > kMaxRank)
    throw ShapeError(std::string(op) + ": rank " + std::to_string(s.rank()) + " of " + s.to_string() +
                     " is outside 0.." + std::to_string(kMaxRank));
  check_dims(op, s);  // also bounds the non-zero dims of a zero-element shape (reductions of it would be huge)
}

}  // namespace ember::capi
