#pragma once
// One backend behind the C ABI, type-erased: what libember calls on the runtime of a handle. The CPU's is compiled
// into libember; each GPU backend's lives in its plugin (libember-<name>.so, plugin_api.hpp), so libember links no
// GPU library. The only implementation is RuntimeImpl<B> (runtime_impl.hpp), which forwards to the ops written once
// as templates over B.
//
// Plugins are built by the same compiler in the same build as libember (plugin_api.hpp checks a build stamp), so
// the interface passes C++ types (std::string, TensorData, Record) and lets engine exceptions cross it: they are
// the engine's types (engine/tensor/error.hpp), which boundary.cpp maps to statuses.
#include <optional>
#include <vector>

#include "c_api/src/runtime/inplace_op.hpp"
#include "c_api/src/runtime/op_list.hpp"
#include "c_api/src/runtime/optimizer.hpp"
#include "engine/backend/conv_transpose.hpp"  // ConvTranspose2dOptions (issue 13)
#include "engine/nn/loss/reduction.hpp"

namespace ember::capi {

class BackendRuntime {
 public:
  virtual ~BackendRuntime() = default;

  virtual BackendId id() const = 0;

  // Devices: count is what can run here (0 when none is found; never throws), make_device validates the index and
  // opens (or reuses) the device, same_device is true when tensors of both may meet in one op.
  virtual int32_t device_count() const = 0;
  virtual DynDevice make_device(int32_t index) const = 0;
  virtual bool same_device(const DynDevice& a, const DynDevice& b) const = 0;
  virtual std::string device_name(const DynDevice& d) const = 0;

  // Process state that a plugin keeps in its own copy of the engine (it links its own): this thread's no-grad
  // flag, which libember copies in before each call (dispatch.cpp), and the global RNG, seeded by ember_seed.
  virtual bool& no_grad_flag() const = 0;
  virtual void seed(uint64_t seed) const = 0;

#define EMBER_X(R, name, params, args, from) virtual R name params const = 0;
  EMBER_RUNTIME_OPS(EMBER_X)
#undef EMBER_X
};

}  // namespace ember::capi
