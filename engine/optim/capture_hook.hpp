#pragma once
// How a graph capture (engine/compile) learns an optimizer step's host scalars, which change from step to step:
// the lr (a schedule) and Adam's bias corrections 1 - beta^t from the param's step count. A replay must recompute
// them for its own step, never reuse the captured values. Optimizers report to the listener of the thread, which
// is set only while a capture records.
#include <functional>
#include <string>

#include "engine/backend/ops.hpp"

namespace ember {

class OptimizerCaptureListener {
 public:
  virtual ~OptimizerCaptureListener() = default;
  // Every param update that OptimizerBase::apply runs, by optimizer kind ("Adam", "SGD", ...).
  virtual void update_begun(const void* optimizer, const std::string& kind) = 0;
  // The scalars of the Adam update about to be issued: `advance(lr)` counts one more step on that param's slot and
  // returns the update's arguments for that lr; `lr` is the value this step was given.
  virtual void adam_scalars(const void* optimizer, double lr, std::function<AdamStepArgs(double lr)> advance) = 0;
};

inline OptimizerCaptureListener*& optimizer_capture_listener() {
  static thread_local OptimizerCaptureListener* listener = nullptr;
  return listener;
}

}  // namespace ember
