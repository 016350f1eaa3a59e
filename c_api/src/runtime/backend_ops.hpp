#pragma once
// The runtime's ops as templates over B (an Autodiff backend), one per op_list.hpp row: written once, defined in
// the file of their group (creation.cpp, ops_math.cpp, ...), and instantiated there for the backend that file is
// being compiled for (runtime_backend.hpp), once in libember for the CPU and once in each GPU plugin.
#include "c_api/src/runtime/backend_runtime.hpp"
#include "c_api/src/runtime/backend_tensor.hpp"
#include "c_api/src/runtime/runtime_backend.hpp"

namespace ember::capi::ops {

#define EMBER_X(R, name, params, args, from) \
  template <class B>                         \
  R name params;
EMBER_RUNTIME_OPS(EMBER_X)
#undef EMBER_X

}  // namespace ember::capi::ops

// Ends each ops file: `EMBER_RUNTIME_MATH_OPS(EMBER_INSTANTIATE_OP)` compiles its group for RuntimeBackend.
#define EMBER_INSTANTIATE_OP(R, name, params, args, from) template R ops::name<RuntimeBackend> params;
