#pragma once
// A backend's own replay of a captured step (engine/compile/README.md, "Device plans"): beyond running the tape's
// closures op by op, a backend may record the whole step once into its device command stream and replay that
// (Vulkan: a vk::Plan, a command buffer a host can also record into its own frame). compile.hpp calls
// build_step_plan<B> (B: the backend under Capture) once per captured signature: B::build_step_plan where B has
// one (an optional backend member, like the optional ops), else nothing, and the tape replays op by op.
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/ops.hpp"
#include "engine/compile/tape.hpp"

namespace ember::compile_detail {

using CellList = std::vector<std::shared_ptr<CellBase>>;

// What a plan is built from: a step just captured (and run eagerly), its cells holding that run's values.
struct StepPlanParts {
  Tape& tape;
  const CellList& inputs;     // the step's tensor arguments (private cells; per replay: that call's arguments)
  const CellList& state_in;   // the state the step read, paired with
  const CellList& state_out;  // the state it wrote (the caller's module and optimizer hold these cells now)
  const CellList& outputs;    // the step's results
};

class StepPlan {
 public:
  virtual ~StepPlan() = default;
  // Called before each replay, before the optimizers count its step: waits until the previous replay executed
  // where the next one must (it rewrites what that one reads), and throws the previous replay's failed device
  // checks (an IndexError for a bad target), so that a failed step does not advance the optimizers.
  virtual void settle() {}
  // One step: `state` are the cells the caller holds now (their values are read, and afterwards they hold the new
  // state); `args` the call's tensor arguments, in order; `adam` each recorded Adam update's scalars for this step
  // (in the tape's order); `outputs` receive the results (fresh values, cells made from the captured outputs).
  virtual void replay(const CellList& state, const std::vector<const CellBase*>& args,
                      const std::vector<AdamStepArgs>& adam, const CellList& outputs) = 0;
  // For a host that submits the plan itself (Vulkan: recorded into a command buffer of its own): writes one step's
  // per-step values (the Adam scalars `adam`, the random keys the step draws) where the plan reads them. The host
  // makes sure its previous submit of the plan has executed first.
  virtual void prepare(const std::vector<AdamStepArgs>& adam) = 0;
  // One line for compile's callers: what the plan is (e.g. "vulkan plan: 41 dispatches, 9 copies").
  virtual std::string describe() const = 0;
};

// Null (with `why` left empty): B builds no plans. A builder that declines says why in `why`; the capture then
// replays the tape, and compile's plan_reason() reads it. A builder leaves the parts' cells as they were when it
// declines.
template <class B>
std::unique_ptr<StepPlan> build_step_plan(StepPlanParts& parts, std::string& why) {
  if constexpr (requires { B::build_step_plan(parts, why); })
    return B::build_step_plan(parts, why);
  else
    return nullptr;
}

}  // namespace ember::compile_detail
