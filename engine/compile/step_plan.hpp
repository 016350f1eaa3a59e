#pragma once
// A backend's own replay of a captured step (engine/compile/README.md, "Device plans"): beyond running the tape's
// closures op by op, a backend may record the whole step once into its device command stream and replay that
// (Vulkan: a vk::Plan, a command buffer a host can also record into its own frame). compile.hpp calls
// build_step_plan<B> (B: the backend under Capture) once per captured signature: B::build_step_plan where B has
// one (an optional backend member, like the optional ops), else nothing, and the tape replays op by op.
#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "engine/backend/ops.hpp"
#include "engine/compile/tape.hpp"
#include "engine/tensor/error.hpp"
#include "engine/tensor/random.hpp"

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
  // Called before each replay, before the optimizers count its step: throws ArgumentError when the call's state or
  // arguments do not fit the plan (a tensor on another device, a state tensor of another size), so that a call that
  // cannot replay does not advance the optimizers either.
  virtual void check_call(const CellList& state, const std::vector<const CellBase*>& args) const = 0;
  // One step: `state` are the cells the caller holds now (their values are read, and afterwards they hold the new
  // state); `args` the call's tensor arguments, in order; `adam` each recorded Adam update's scalars for this step
  // (in the tape's order); `outputs` receive the results (fresh values, cells made from the captured outputs).
  // `state` and `args` have passed check_call.
  virtual void replay(const CellList& state, const std::vector<const CellBase*>& args,
                      const std::vector<AdamStepArgs>& adam, const CellList& outputs) = 0;
  // For a host that submits the plan itself (Vulkan: recorded into a command buffer of its own): writes one step's
  // per-step values (the Adam scalars `adam`, the random keys the step draws) where the plan reads them. The host
  // makes sure its previous submit of the plan has executed first. Only where host_submits().
  virtual void prepare(const std::vector<AdamStepArgs>& adam) = 0;
  // Whether a host may submit the plan itself (prepare). A CUDA graph is launched by Ember's replays only.
  virtual bool host_submits() const { return true; }
  // One line for compile's callers: what the plan is (e.g. "vulkan plan: 41 dispatches, 9 copies").
  virtual std::string describe() const = 0;
};

// What building a plan changes, put back by its builder: the cells it rebinds (state, inputs), restored when it
// declines (the tape then replays over them as they were), and ember's global generator, always: the tape's random
// draws take generator words while the device records them, and the capture's eager run already took this step's.
class PlanBuildScope {
 public:
  explicit PlanBuildScope(const StepPlanParts& parts)
      : touched_{&parts.state_in, &parts.state_out, &parts.inputs}, generator_([] {
          std::lock_guard lock(global_rng().mu);
          return global_rng().rng;
        }()) {
    for (const CellList* list : touched_)
      for (const auto& c : *list) saved_.push_back(c->clone());
  }
  PlanBuildScope(const PlanBuildScope&) = delete;
  PlanBuildScope& operator=(const PlanBuildScope&) = delete;
  ~PlanBuildScope() {
    std::lock_guard lock(global_rng().mu);
    global_rng().rng = generator_;
  }
  void restore_cells() {
    std::size_t k = 0;
    for (const CellList* list : touched_)
      for (const auto& c : *list) c->copy_from(*saved_[k++]);
  }

 private:
  std::vector<const CellList*> touched_;
  CellList saved_;
  Rng generator_;
};

// Runs the tape's ops while the device records them into a plan (the host checks are left out: the kernels' own
// checks are deferred into the plan instead) and says what each per-step block the ops asked the plan for holds, in
// order: -1 a random draw's key, i >= 0 the tape's Adam update i's scalars. `blocks_so_far()` counts the plan's
// blocks. Throws ArgumentError (the plan declines) for a random draw that made no key block (drawn on the host and
// uploaded: a plan would repeat its values) or when the Adam updates and their blocks disagree.
template <class BlocksSoFar>
std::vector<int> run_ops_into_plan(Tape& tape, BlocksSoFar&& blocks_so_far) {
  const std::set<std::size_t> checks(tape.check_ops.begin(), tape.check_ops.end());
  const std::set<std::size_t> draws(tape.random_ops.begin(), tape.random_ops.end());
  std::vector<int> blocks;
  int adam_updates = 0;
  for (std::size_t k = 0; k < tape.ops.size(); ++k) {
    if (checks.count(k)) continue;
    const std::size_t had = blocks_so_far();
    tape.ops[k]();
    const std::size_t made = blocks_so_far() - had;
    if (draws.count(k)) {
      if (made != 1)
        throw ArgumentError("a random draw other than a Bernoulli mask (its values are drawn on the host and "
                            "uploaded: a plan would repeat them)");
      blocks.push_back(-1);
    } else {
      for (std::size_t b = 0; b < made; ++b) blocks.push_back(adam_updates++);
    }
  }
  if (static_cast<std::size_t>(adam_updates) != tape.adam.size())
    throw ArgumentError(fmt::format("{} Adam updates but {} per-step scalar blocks in the plan", tape.adam.size(),
                                    adam_updates));
  return blocks;
}

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
