#pragma once
// The runtime-dispatch layer's functions (dyn.hpp), as api_*.cpp call them: creation, queries, the engine's ops
// with runtime rank, autodiff, modules and optimizers. Every function validates its arguments and throws the
// engine's typed errors (ShapeError, KindError, ...) or UnsupportedError; none of them crashes on bad input.
//
// The backend-specific ones are op_list.hpp's rows: each runs on the runtime of its first handle (dispatch.cpp).
// Float dtypes give Float tensors, integer dtypes Int, Bool Bool; values convert to the backend's element types.
// backward is seeded with ones, or with `grad` (same shape): the gradients of sum(x * grad).
#include <optional>
#include <vector>

#include "c_api/src/runtime/backend_runtime.hpp"

namespace ember::capi {

#define EMBER_X(R, name, params, args, from) R name params;
EMBER_RUNTIME_OPS(EMBER_X)
#undef EMBER_X

// ---------------------------------------------------------------- devices (dispatch.cpp)
// Devices of each backend: device_count is what can run here (0 when the backend is compiled but finds no device,
// or its plugin cannot be loaded); make_device validates the index and opens (or reuses) the device.
int32_t device_count(BackendId backend);
DynDevice make_device(BackendId backend, int32_t index);
const DynDevice& cpu_device();  // the default device (ember.h: a NULL device)
// Same backend and, for GPU backends, the same context.
bool same_device(const DynDevice& a, const DynDevice& b);
std::string device_name(const DynDevice& d);

// ---------------------------------------------------------------- backend-independent (dispatch.cpp)
DynTensor arange(const DynDevice& dev, DType dtype, int64_t start, int64_t end, int64_t step);
DynTensor random(const DynDevice& dev, const Distribution& dist, uint64_t seed, const Shape& shape);
DynTensor transpose(const DynTensor& x, int64_t d0, int64_t d1);
// Per-thread nestable no-grad scope. exit without enter throws ArgumentError.
void no_grad_enter();
void no_grad_exit();
bool grad_enabled();
// Seeds the global RNG of every runtime, loaded now or later.
void seed_all(uint64_t seed);

}  // namespace ember::capi
