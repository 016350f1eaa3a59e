// ember::compile on Vulkan (issue 14): a captured training step as one vk::Plan, replayed as one command buffer
// (forward, backward and the Adam update) instead of the tape's closures issuing every op again. It is
// Vulkan::build_step_plan (engine/compile/step_plan.hpp), so `ember::compile<Autodiff<Capture<Vulkan>>>(...)`
// replays plans with no change to the step. The plan is built right after the capture, by running
// the tape's closures once more while the device captures:
//  * State: the params and optimizer moments the step reads get storage of the plan's own (filled with the
//    capture's results), and the plan ends with copies of the new values into it. After a replay the caller's
//    module and optimizer hold that storage: updated in place, as the CPU replay updates its cells.
//  * Inputs: the step's tensor arguments are plan inputs, copied in from the call's tensors by the replay.
//  * Per-step scalars: each Adam update reads its lr and bias corrections from a host-visible block of the plan's
//    (vk::adam_step, Plan::host_words), rewritten before each replay from the optimizer's report for that step.
//    Each dropout mask (the Bernoulli kernel) reads its key from one too: the replay draws the next key from ember's
//    global generator, in the step's order, so the masks are the ones eager steps would draw.
//  * Host checks (a step's own host_check) are not run: a command buffer cannot read back. The kernels' own
//    index checks are deferred into the plan's error words instead; a replay reports the previous replay's failed
//    check (IndexError) once it has completed.
//  * Intermediates: every cell an op wrote lets its value go once the plan holds the commands, so the plan's
//    arena shares their memory (plan_memory.hpp).
// Declined (the tape replays op by op, and plan_reason() says why): random draws other than Bernoulli masks (their
// values are drawn on the host and uploaded once), host reads the plan refuses (VkFFT, data-dependent reads), host
// record mode, tensors of other backends.
#include <fmt/format.h>

#include <set>

#include "backends/vulkan/compiled_step.hpp"
#include "backends/vulkan/plan.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "engine/compile/step_plan.hpp"
#include "engine/tensor/random.hpp"

namespace ember {
namespace compile_detail {
namespace {

using vk::Allocation;
using vk::Context;

// A cell's Vulkan tensor, of any kind (0 Float, 1 Int, 2 Bool; -1: not a Vulkan cell, or empty).
struct View {
  std::shared_ptr<Context> ctx;
  std::shared_ptr<Allocation> alloc;
  Shape shape;
  uint64_t bytes = 0;
  int kind = -1;
};

template <class T>
bool view_as(const CellBase& c, int kind, View& out) {
  const auto* cell = dynamic_cast<const Cell<vk::VulkanTensor<T>>*>(&c);
  if (!cell) return false;
  if (cell->v) out = {cell->v->ctx, cell->v->alloc, cell->v->shape, cell->v->bytes(), kind};
  return true;
}
View view(const CellBase& c) {
  View v;
  (void)(view_as<float>(c, 0, v) || view_as<int64_t>(c, 1, v) || view_as<uint32_t>(c, 2, v));
  return v;
}
template <class T>
bool set_as(CellBase& c, const View& like, const std::shared_ptr<Allocation>& alloc) {
  auto* cell = dynamic_cast<Cell<vk::VulkanTensor<T>>*>(&c);
  if (!cell) return false;
  cell->v = vk::VulkanTensor<T>{like.ctx, alloc, like.shape};
  return true;
}
// The cell now holds a tensor shaped like `like` over `alloc`.
void set_cell(CellBase& c, const View& like, const std::shared_ptr<Allocation>& alloc) {
  (void)(set_as<float>(c, like, alloc) || set_as<int64_t>(c, like, alloc) || set_as<uint32_t>(c, like, alloc));
}
const char* kind_name(int kind) { return kind == 0 ? "float" : kind == 1 ? "int" : "bool"; }

class VulkanStepPlan final : public StepPlan {
 public:
  std::shared_ptr<Context> ctx;
  std::shared_ptr<vk::Plan> plan;
  std::vector<View> state, inputs, outputs;  // the plan's state storage; the inputs' and outputs' shapes
  std::vector<std::shared_ptr<Allocation>> aside;  // copies of state read after the update rewrites it
  // What each of the plan's host blocks holds, in order: Adam update i's scalars (i >= 0), or a random key (-1).
  std::vector<int> blocks;
  std::size_t adam_updates = 0;

  void settle() override {
    // The previous replay reads the blocks the next one rewrites: it must have executed (a caller that read its loss
    // has waited already). Its deferred checks are then final.
    if (last_ == settled_) return;  // reported already (a failed check is thrown once)
    {
      std::lock_guard lock(ctx->mutex());
      ctx->stream().wait(last_);
    }
    settled_ = last_;
    plan->poll_errors();
  }

  void check_call(const CellList& now, const std::vector<const CellBase*>& args) const override {
    if (now.size() != state.size() || args.size() != inputs.size())
      throw ArgumentError("compile (vulkan plan): the replay does not match the captured step's layout");
    for (std::size_t i = 0; i < state.size(); ++i) {
      const View v = view(*now[i]);
      if (v.kind != state[i].kind || v.bytes != state[i].bytes || v.ctx != ctx)
        throw ArgumentError(fmt::format("compile (vulkan plan): state tensor {} is not the captured {} tensor {} on "
                                        "the plan's device",
                                        i, kind_name(state[i].kind), state[i].shape.to_string()));
    }
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const View a = view(*args[k]);
      if (a.kind != inputs[k].kind || a.shape != inputs[k].shape || a.ctx != ctx)
        throw ArgumentError(fmt::format("compile (vulkan plan): argument {} is not a {} tensor {} on the plan's device",
                                        k, kind_name(inputs[k].kind), inputs[k].shape.to_string()));
    }
  }

  void replay(const CellList& now, const std::vector<const CellBase*>& args, const std::vector<AdamStepArgs>& adam,
              const CellList& outs) override {
    // The state and arguments passed check_call (compile calls it before the optimizers count the step).
    if (adam.size() != adam_updates || outs.size() != outputs.size())
      throw ArgumentError("compile (vulkan plan): the replay does not match the captured step's layout");
    std::vector<std::shared_ptr<void>> keep;
    for (std::size_t i = 0; i < state.size(); ++i) {
      const View v = view(*now[i]);
      if (v.alloc != state[i].alloc) {  // the caller replaced its module or optimizer state: read it as it is
        std::lock_guard lock(ctx->mutex());
        if (v.bytes) ctx->stream().copy(v.alloc, 0, state[i].alloc, 0, v.bytes);
        set_cell(*now[i], state[i], state[i].alloc);
      }
    }
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const View a = view(*args[k]);
      plan->bind_input(k, a.alloc->buffer(), a.alloc->offset());
      keep.push_back(a.alloc);  // the caller may drop its argument before the replay executes
    }
    prepare(adam);
    for (std::size_t j = 0; j < outputs.size(); ++j) {
      auto y = ctx->allocator().allocate(std::max<uint64_t>(outputs[j].bytes, 4), vk::MemoryUse::Tensor);
      plan->bind_output(j, y->buffer(), y->offset());
      set_cell(*outs[j], outputs[j], y);
      keep.push_back(std::move(y));  // a caller that drops the result at once must not free what the replay writes
    }
    last_ = plan->submit(keep);
  }

  void prepare(const std::vector<AdamStepArgs>& adam) override {
    if (adam.size() != adam_updates)
      throw ArgumentError(fmt::format("compile (vulkan plan): {} Adam updates' scalars for a plan of {}", adam.size(),
                                      adam_updates));
    // Keys in the step's order, as the eager step's draws take them (one generator word per Bernoulli mask).
    std::lock_guard lock(global_rng().mu);
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      if (blocks[k] >= 0) {
        const std::array<float, 9> words = vk::adam_words(adam[static_cast<std::size_t>(blocks[k])]);
        plan->write_host_words(k, words.data(), static_cast<uint32_t>(sizeof(float) * words.size()));
      } else {
        const uint64_t key = global_rng().rng.next();
        const uint32_t words[2] = {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
        plan->write_host_words(k, words, sizeof words);
      }
    }
  }

  std::string describe() const override {
    return fmt::format("vulkan plan: {} dispatches, {} barriers, {} state tensors, {} inputs, {} per-step scalar "
                       "blocks, {} checks, intermediates {} KiB in a {} KiB arena",
                       plan->dispatches(), plan->barriers(), state.size(), inputs.size(), blocks.size(),
                       plan->checks(), plan->intermediate_bytes() / 1024, plan->arena_bytes() / 1024);
  }

 private:
  uint64_t last_ = 0;     // the timeline value of the last replay's submit
  uint64_t settled_ = 0;  // the last one waited for and polled
};

}  // namespace
}  // namespace compile_detail

vk::Plan& vulkan::plan_of(const compile_detail::StepPlan* p) {
  const auto* v = dynamic_cast<const compile_detail::VulkanStepPlan*>(p);
  if (!v)
    throw ArgumentError("vulkan::training_plan: the compiled step's last signature has no Vulkan plan (not captured "
                        "yet, declined: see plan_reason(), or not a Vulkan step)");
  return *v->plan;
}

using compile_detail::CellBase;
using compile_detail::CellList;
using compile_detail::PlanBuildScope;
using compile_detail::set_cell;
using compile_detail::view;
using compile_detail::View;
using compile_detail::VulkanStepPlan;
using vk::Allocation;

std::unique_ptr<compile_detail::StepPlan> Vulkan::build_step_plan(compile_detail::StepPlanParts& parts,
                                                                  std::string& why) {
  auto p = std::make_unique<VulkanStepPlan>();
  // Every cell the plan binds must be a Vulkan tensor of one context.
  for (const CellList* list : {&parts.state_in, &parts.state_out, &parts.inputs, &parts.outputs})
    for (const auto& c : *list) {
      const View v = c ? view(*c) : View{};
      if (v.kind < 0) {
        why = "a state, argument or result tensor is not a Vulkan tensor: the step replays op by op";
        return nullptr;
      }
      if (!p->ctx) p->ctx = v.ctx;
      if (v.ctx != p->ctx) {
        why = "the step's tensors live on more than one Vulkan device: it replays op by op";
        return nullptr;
      }
    }
  if (!p->ctx || parts.state_in.size() != parts.state_out.size()) {
    why = "the step has no Vulkan state to replay into";
    return nullptr;
  }
  const auto ctx = p->ctx;
  PlanBuildScope scope(parts);  // the cells it rebinds if it declines; ember's generator always
  try {
    vk::Plan::refuse_in_record_mode(*ctx);
    // The plan's state storage, holding the state the capture's eager run left (the values a first replay reads).
    for (const auto& c : parts.state_out) {
      const View o = view(*c);
      auto storage = ctx->allocator().allocate(std::max<uint64_t>(o.bytes, 4), vk::MemoryUse::Tensor);
      std::lock_guard lock(ctx->mutex());
      if (o.bytes) ctx->stream().copy(o.alloc, 0, storage, 0, o.bytes);
      p->state.push_back({ctx, storage, o.shape, o.bytes, o.kind});
    }
    for (std::size_t i = 0; i < parts.state_in.size(); ++i) set_cell(*parts.state_in[i], p->state[i], p->state[i].alloc);
    // The cells no op writes (constants made during the step) keep their values; the ones the ops rewrite below
    // are intermediates, released into the plan once it holds them.
    std::vector<const Allocation*> before;
    for (const auto& c : parts.tape.cells) before.push_back(view(*c).alloc.get());

    p->plan = std::make_shared<vk::Plan>(ctx);
    p->plan->begin();  // waits for the copies above
    for (const auto& c : parts.inputs) {
      View a = view(*c);
      set_cell(*c, a, p->plan->add_input(a.bytes));
      p->inputs.push_back(std::move(a));
    }
    p->blocks = compile_detail::run_ops_into_plan(parts.tape, [&] { return p->plan->host_blocks(); });
    p->adam_updates = parts.tape.adam.size();
    // Every replay ends by copying the new state into the storage the next one reads, and the results are copied
    // out after it. A new state value or a result that is itself some state storage (a step that swaps two state
    // tensors, or returns a param as it was) is copied aside first, so that no copy reads storage an earlier one
    // already rewrote.
    std::set<const Allocation*> storage;
    for (const View& v : p->state) storage.insert(v.alloc.get());
    const auto source = [&](View v, const Allocation* own) {
      if (v.bytes && storage.count(v.alloc.get()) && v.alloc.get() != own) {
        auto aside = ctx->allocator().allocate(v.bytes, vk::MemoryUse::Tensor);
        std::lock_guard lock(ctx->mutex());
        ctx->stream().copy(v.alloc, 0, aside, 0, v.bytes);
        p->aside.push_back(aside);
        v.alloc = std::move(aside);
      }
      return v;
    };
    std::vector<View> new_state;
    for (std::size_t i = 0; i < parts.state_out.size(); ++i)
      new_state.push_back(source(view(*parts.state_out[i]), p->state[i].alloc.get()));
    std::vector<std::pair<std::shared_ptr<Allocation>, VkDeviceSize>> outs;
    std::set<const CellBase*> keep;
    for (const auto& c : parts.outputs) {
      View y = source(view(*c), nullptr);
      outs.emplace_back(y.alloc, y.bytes);
      p->outputs.push_back(std::move(y));
      keep.insert(c.get());
    }
    for (std::size_t i = 0; i < new_state.size(); ++i) {
      const View& q = new_state[i];
      if (q.alloc == p->state[i].alloc || !q.bytes) continue;  // not rewritten by the step
      std::lock_guard lock(ctx->mutex());
      ctx->stream().copy(q.alloc, 0, p->state[i].alloc, 0, q.bytes);
    }
    for (std::size_t k = 0; k < parts.tape.cells.size(); ++k) {
      CellBase& c = *parts.tape.cells[k];
      if (!keep.count(&c) && view(c).alloc.get() != before[k]) c.reset();
    }
    for (std::size_t i = 0; i < parts.state_out.size(); ++i) set_cell(*parts.state_out[i], p->state[i], p->state[i].alloc);
    p->plan->end(outs);
  } catch (const std::exception& ex) {
    if (p->plan) p->plan->abort();
    scope.restore_cells();
    why = fmt::format("no Vulkan plan (the step replays op by op): {}", ex.what());
    return nullptr;
  }
  return p;
}

}  // namespace ember
