// issue 14: the Compiled object behind ember_compile (compiled.hpp), for CPU float32 tensors: captures a caller's
// forward on the capture runtime (Autodiff<Capture<Cpu<float>>>, runtime_cpu_capture.cpp) and its backward with it,
// then replays both on the builtin CPU runtime's tensors (engine/compile/README.md, "C ABI and Python").
//
// Compiled with the capture runtime (EMBER_RUNTIME_CPU_CAPTURE): RuntimeBackend is the capture backend here; the
// builtin runtime's tensors are Autodiff<Cpu<float>>'s, whose runtime_instance runtime_cpu.cpp instantiates.
#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "c_api/src/runtime/backend_ops.hpp"
#include "c_api/src/runtime/compiled.hpp"

namespace ember::capi {
namespace {

using Eager = Autodiff<Cpu<float>>;  // the builtin runtime's backend: what callers' tensors are
using Cap = Capture<Cpu<float>>;
using CB = RuntimeBackend;  // Autodiff<Cap>: the capture runtime's backend
static_assert(std::is_same_v<CB, Autodiff<Cap>>, "compiled_cpu.cpp is compiled for the capture runtime");
using FP = Cpu<float>::FloatPrimitive;
using AdFP = Eager::FloatPrimitive;  // autodiff::AdTensor<FP>
using CellF = compile_detail::Cell<FP>;
using Cells = std::vector<std::shared_ptr<compile_detail::CellBase>>;

// A capture that cannot be used for this call's results (the forward runs again, eagerly).
class Unusable : public Error {
 public:
  using Error::Error;
};

const AdFP& eager_float(const DynTensor& t) { return std::get<0>(as_backend<Eager>(t, "compile").prim); }

std::string describe(const DynTensor& t) {
  const BackendRuntime& r = *t.runtime;
  return fmt::format("{} {}", r.device_name(r.device(t)), dtype_name(r.dtype(t)));
}

// One captured signature: the tape of its forward [0, fwd_ops) and backward [fwd_ops, end), and the cells they use.
struct Entry {
  compile_detail::Tape tape;
  std::string refusal;  // non-empty: this signature runs eagerly
  std::vector<std::shared_ptr<CellF>> state, inputs, outputs;
  std::size_t fwd_ops = 0;
  Cells snapshot_cells;  // what the backward segment may read: state, inputs, every cell the forward made
  bool backward = false;
  std::shared_ptr<CellF> seed;                  // the gradient of the output, refilled by each backward
  std::vector<std::size_t> grad_targets;        // state index, or n_state + input index, of each tracked operand
  std::vector<std::shared_ptr<CellF>> grads;    // per grad target: its gradient cell (null: not reached)

  Cells take_snapshot() const {
    Cells s;
    s.reserve(snapshot_cells.size());
    for (const auto& c : snapshot_cells) s.push_back(c->clone());
    return s;
  }
  void restore(const Cells& s) const {
    for (std::size_t i = 0; i < s.size(); ++i) snapshot_cells[i]->copy_from(*s[i]);
  }
};

class CompiledCpu final : public Compiled {
 public:
  std::vector<DynTensor> call(CompiledForward& fwd, int32_t mode, const std::vector<DynTensor>& inputs,
                              std::size_t n_outputs) override {
    std::vector<DynTensor*> slots = fwd.state_slots();
    if (compile_detail::active_tape())
      return eager(fwd, mode, inputs, n_outputs, "called while another capture records (the forward runs eagerly)");
    std::string why = unsupported(slots, inputs);
    if (!why.empty()) return eager(fwd, mode, inputs, n_outputs, std::move(why));
    const std::vector<int64_t> sig = signature(slots, inputs, mode, n_outputs);
    auto it = entries_.find(sig);
    if (it != entries_.end()) {
      if (!it->second->refusal.empty()) return eager(fwd, mode, inputs, n_outputs, it->second->refusal);
      return replay(it->second, slots, inputs);
    }
    return capture(sig, fwd, slots, mode, inputs, n_outputs);
  }
  CompiledCallKind last_call() const override { return last_; }
  std::string fallback_reason() const override { return reason_; }

 private:
  std::vector<DynTensor> eager(CompiledForward& fwd, int32_t mode, const std::vector<DynTensor>& inputs,
                               std::size_t n_outputs, std::string why) {
    auto r = fwd.forward(mode, inputs, n_outputs);
    last_ = CompiledCallKind::Eager;
    reason_ = std::move(why);
    return r;
  }

  static std::string unsupported(const std::vector<DynTensor*>& slots, const std::vector<DynTensor>& inputs) {
    const BackendRuntime* cpu = &runtime_instance<Eager>();
    const auto bad = [&](const DynTensor& t) {
      return t.runtime != cpu || t.runtime->dtype(t) != DType::F32;
    };
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (bad(inputs[i]))
        return fmt::format("input {} is a {} tensor: compile captures CPU float32 tensors (the forward runs eagerly)",
                           i, describe(inputs[i]));
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (bad(*slots[i]))
        return fmt::format("state tensor {} is a {} tensor: compile captures CPU float32 tensors (the forward runs "
                           "eagerly)", i, describe(*slots[i]));
    return {};
  }

  static void add_tensor(std::vector<int64_t>& sig, const AdFP& t) {
    const Shape s = Cpu<float>::shape<Float>(t.value);
    sig.push_back(static_cast<int64_t>(s.rank()));
    for (int64_t d : s.dims) sig.push_back(d);
    sig.push_back(t.node ? 1 : 0);
  }
  static std::vector<int64_t> signature(const std::vector<DynTensor*>& slots, const std::vector<DynTensor>& inputs,
                                        int32_t mode, std::size_t n_outputs) {
    std::vector<int64_t> sig{mode, autodiff::no_grad_flag() ? 0 : 1, static_cast<int64_t>(n_outputs),
                             static_cast<int64_t>(inputs.size())};
    for (const auto& x : inputs) add_tensor(sig, eager_float(x));
    for (const auto* s : slots) add_tensor(sig, eager_float(*s));
    return sig;
  }

  // A capture-runtime tensor over a new cell holding t's value, requiring grad when t does.
  static DynTensor capture_tensor(const AdFP& t, std::shared_ptr<CellF>& cell) {
    cell = std::make_shared<CellF>();
    cell->v = t.value;
    CB::FloatPrimitive p{Cap::FloatPrimitive{cell}, nullptr};
    if (t.node) p = CB::float_require_grad(p, true);
    return wrap<CB, Float>(std::move(p));
  }

  // The result for the caller: a builtin CPU tensor holding `value`, whose backward (when the entry has one and
  // grad mode is on) runs the entry's backward segment over this call's snapshot and hands the gradients to the
  // tracked state and inputs.
  static DynTensor result(const std::shared_ptr<Entry>& e, FP value, const std::vector<AdFP>& operands) {
    if (!e->backward) return wrap<Eager, Float>(AdFP{std::move(value), nullptr});
    std::vector<const AdFP*> parents;
    for (std::size_t k : e->grad_targets) parents.push_back(&operands[k]);
    Cells snap = e->take_snapshot();
    AdFP r = autodiff::record_many<FP>(
        std::move(value), parents, [e, snap = std::move(snap)](const FP& g, autodiff::BackwardCtx<FP>& ctx) {
          e->restore(snap);
          e->seed->v = g;
          for (std::size_t i = e->fwd_ops; i < e->tape.ops.size(); ++i) e->tape.ops[i]();
          for (std::size_t i = 0; i < e->grads.size(); ++i)
            if (ctx.need[i] && e->grads[i]) ctx.grads[i] = *e->grads[i]->v;
        });
    return wrap<Eager, Float>(std::move(r));
  }

  static std::vector<AdFP> operands_of(const std::vector<DynTensor*>& slots, const std::vector<DynTensor>& inputs) {
    std::vector<AdFP> ops;
    ops.reserve(slots.size() + inputs.size());
    for (const auto* s : slots) ops.push_back(eager_float(*s));
    for (const auto& x : inputs) ops.push_back(eager_float(x));
    return ops;
  }

  std::vector<DynTensor> replay(const std::shared_ptr<Entry>& e, const std::vector<DynTensor*>& slots,
                                const std::vector<DynTensor>& inputs) {
    // The state is read from the handles now: an optimizer step replaced their values since the last call.
    const std::vector<AdFP> operands = operands_of(slots, inputs);
    for (std::size_t i = 0; i < slots.size(); ++i) e->state[i]->v = operands[i].value;
    for (std::size_t i = 0; i < inputs.size(); ++i) e->inputs[i]->v = operands[slots.size() + i].value;
    for (std::size_t i = 0; i < e->fwd_ops; ++i) e->tape.ops[i]();
    std::vector<DynTensor> out;
    for (const auto& c : e->outputs) out.push_back(result(e, *c->v, operands));
    last_ = CompiledCallKind::Replayed;
    reason_.clear();
    return out;
  }

  std::vector<DynTensor> capture(const std::vector<int64_t>& sig, CompiledForward& fwd,
                                 const std::vector<DynTensor*>& slots, int32_t mode,
                                 const std::vector<DynTensor>& inputs, std::size_t n_outputs) {
    auto e = std::make_shared<Entry>();
    const std::vector<AdFP> operands = operands_of(slots, inputs);
    std::vector<DynTensor> cap_state(slots.size()), cap_inputs(inputs.size());
    e->state.resize(slots.size());
    e->inputs.resize(inputs.size());
    for (std::size_t i = 0; i < slots.size(); ++i) cap_state[i] = capture_tensor(operands[i], e->state[i]);
    for (std::size_t i = 0; i < inputs.size(); ++i)
      cap_inputs[i] = capture_tensor(operands[slots.size() + i], e->inputs[i]);
    // The generator's state before the capture: a capture that fails is run again eagerly, and that run must draw
    // what one eager call draws (dropout's masks), not what follows the failed capture's draws.
    const Rng rng_before = [] {
      std::lock_guard lock(global_rng().mu);
      return global_rng().rng;
    }();
    try {
      record(*e, fwd, slots, cap_state, cap_inputs, mode, n_outputs);
    } catch (const std::exception& ex) {
      // The forward failed on the capture runtime (an op it cannot run there, a tensor of another runtime met in
      // an op, an output that is no float tensor of the capture) or failed by itself: run it eagerly. When that
      // fails too, its error is the call's; when it succeeds, this signature runs eagerly from now on.
      {
        std::lock_guard lock(global_rng().mu);
        global_rng().rng = rng_before;
      }
      const std::string why = fmt::format("the capture failed: {} (the forward runs eagerly)", ex.what());
      auto r = eager(fwd, mode, inputs, n_outputs, why);
      auto refused = std::make_shared<Entry>();
      refused->refusal = why;
      entries_[sig] = std::move(refused);
      return r;
    }
    e->refusal = e->tape.refusal();
    entries_[sig] = e;
    // The capture was an eager run: its results are this call's (and its backward segment this call's backward).
    std::vector<DynTensor> out;
    for (const auto& c : e->outputs) out.push_back(result(e, *c->v, operands));
    if (e->refusal.empty()) {
      last_ = CompiledCallKind::Captured;
      reason_.clear();
    } else {
      last_ = CompiledCallKind::Eager;
      reason_ = e->refusal;
    }
    return out;
  }

  // Runs the forward on the capture tensors while e's tape records, the state handles swapped for the call (and
  // restored on every path), then records the backward of the one float output when grad mode is on.
  static void record(Entry& e, CompiledForward& fwd, const std::vector<DynTensor*>& slots,
                     const std::vector<DynTensor>& cap_state, const std::vector<DynTensor>& cap_inputs, int32_t mode,
                     std::size_t n_outputs) {
    const BackendRuntime* cap = &runtime_instance<CB>();
    std::vector<DynTensor> saved(slots.size());
    struct Restore {
      const std::vector<DynTensor*>& slots;
      std::vector<DynTensor>& saved;
      std::size_t swapped = 0;
      ~Restore() {
        for (std::size_t i = 0; i < swapped; ++i) *slots[i] = std::move(saved[i]);
      }
    } restore{slots, saved};
    for (std::size_t i = 0; i < slots.size(); ++i) {
      saved[i] = *slots[i];
      *slots[i] = cap_state[i];
      restore.swapped = i + 1;
    }
    compile_detail::Recording rec(e.tape);
    std::vector<DynTensor> outs = fwd.forward(mode, cap_inputs, n_outputs);
    e.tape.finish();
    e.fwd_ops = e.tape.ops.size();
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (slots[i]->payload != cap_state[i].payload)
        throw Unusable(fmt::format("the forward replaced state tensor {} (an in-place update: a replay would not "
                                   "write it back)", i));
    for (const auto& c : e.state) e.snapshot_cells.push_back(c);
    for (const auto& c : e.inputs) e.snapshot_cells.push_back(c);
    for (const auto& c : e.tape.cells) e.snapshot_cells.push_back(c);
    std::vector<CB::FloatPrimitive> out_prims;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      if (outs[i].runtime != cap || cap->dtype(outs[i]) != DType::F32)
        throw Unusable(fmt::format("output {} is a {} tensor, not a float32 result of the captured ops", i,
                                   describe(outs[i])));
      out_prims.push_back(std::get<0>(as_backend<CB>(outs[i], "compile").prim));
      e.outputs.push_back(std::static_pointer_cast<CellF>(CB::inner(out_prims.back()).cell));
    }
    bool tracked = false;
    for (const auto& p : out_prims) tracked = tracked || p.node != nullptr;
    if (autodiff::no_grad_flag() || !tracked) return;
    if (out_prims.size() != 1)
      throw Unusable(fmt::format("{} outputs require grad (compile differentiates one float output)", out_prims.size()));
    const FP& out = *e.outputs[0]->v;
    e.seed = std::make_shared<CellF>();
    e.seed->v = Cpu<float>::full<Float>(Cpu<float>::shape<Float>(out), 1.0, Cpu<float>::device<Float>(out));
    const auto grads = CB::backward_seeded({{out_prims[0], Cap::FloatPrimitive{e.seed}}}, false, false);
    const auto tracked_operand = [&](const DynTensor& t, std::size_t index) {
      const auto& p = std::get<0>(as_backend<CB>(t, "compile").prim);
      if (!p.node) return;
      e.grad_targets.push_back(index);
      auto g = CB::grad(p, grads);
      e.grads.push_back(g ? std::static_pointer_cast<CellF>(g->cell) : nullptr);
    };
    for (std::size_t i = 0; i < cap_state.size(); ++i) tracked_operand(cap_state[i], i);
    for (std::size_t i = 0; i < cap_inputs.size(); ++i) tracked_operand(cap_inputs[i], cap_state.size() + i);
    e.backward = true;
  }

  std::map<std::vector<int64_t>, std::shared_ptr<Entry>> entries_;
  CompiledCallKind last_ = CompiledCallKind::Eager;
  std::string reason_;
};

}  // namespace

std::unique_ptr<Compiled> make_compiled() { return std::make_unique<CompiledCpu>(); }

}  // namespace ember::capi
