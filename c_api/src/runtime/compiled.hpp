#pragma once
// issue 14: ember_compile / ember_module_compile / ember.compile(model) -- a forward (and its backward) captured once
// per input signature and replayed afterwards, over runtime tensors (engine/compile/README.md, "C ABI and Python").
//
// Backend-agnostic interface, implemented in compiled_cpu.cpp inside the capture runtime's library (it needs both
// the builtin CPU runtime's and the capture runtime's typed tensors). The api layer (api_compile.cpp) owns the
// handles: it gives the current values of the state handles as DynTensor slots that the call may swap and must
// restore, and a forward that turns DynTensors into handles for the caller's callback.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "c_api/src/runtime/dyn.hpp"

namespace ember::capi {

// How the last call ran (ember.h: ember_compiled_call_kind).
enum class CompiledCallKind : int32_t { Eager = 0, Captured = 1, Replayed = 2 };

class CompiledForward {
 public:
  virtual ~CompiledForward() = default;
  // The state's slots (the values the state handles hold now): a capture swaps them for its own tensors during the
  // callback and restores them on every path.
  virtual std::vector<DynTensor*> state_slots() = 0;
  // Runs the caller's forward on `inputs`, giving `n_outputs` results (throws what it failed with).
  virtual std::vector<DynTensor> forward(int32_t mode, const std::vector<DynTensor>& inputs, std::size_t n_outputs) = 0;
};

class Compiled {
 public:
  virtual ~Compiled() = default;
  virtual std::vector<DynTensor> call(CompiledForward& fwd, int32_t mode, const std::vector<DynTensor>& inputs,
                                      std::size_t n_outputs) = 0;
  virtual CompiledCallKind last_call() const = 0;
  // Why the last call ran eagerly ("" unless last_call() is Eager).
  virtual std::string fallback_reason() const = 0;
};

// Defined by the capture runtime (compiled_cpu.cpp).
std::unique_ptr<Compiled> make_compiled();

}  // namespace ember::capi
