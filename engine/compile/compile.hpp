#pragma once
// ember::compile(step, state...): a training (or inference) step that is captured once per input signature and
// replayed afterwards (engine/compile/README.md).
//
//   using AD = Autodiff<Capture<Cpu<float>>>;
//   auto model = DigitsMlp<AD>::init();
//   Adam<AD> adam;
//   auto step = ember::compile<AD>([&](double lr, const Tensor<AD, 2>& x, const Tensor<AD, 1, Int>& y) {
//     const auto loss = nn::cross_entropy(model.forward(x), y);
//     model = adam.step(lr, std::move(model), GradientsParams<AD>::from_grads(loss.backward(), model));
//     return loss;
//   }, model, adam);
//   for (...) loss = step(lr, x, y);       // step.fallback_reason() says why a call ran eagerly, if it did
//
// The step's arguments are tensors of AD (their values change per call: the batch) and doubles (host scalars that
// change per call: an optimizer's lr must come in as one to follow a schedule). `state` are the objects the step
// reads and rewrites: modules (every param and buffer) and optimizers (their moments and step counts). The first
// call for a signature (each tensor argument's kind and dims, the state modules' train/eval flags, grad mode) runs
// the step eagerly on Capture<B> while its tape records every op; later calls with that signature copy the
// arguments and the current state into the tape's input cells, refill the per-step scalars, run the tape and
// leave the new state in the cells the modules and optimizers hold (updated in place, as PyTorch's optimizers
// update params). Returned tensors are fresh and detached.
#include <fmt/format.h>

#include <any>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/autodiff/graph.hpp"
#include "engine/compile/capture_backend.hpp"
#include "engine/compile/step_plan.hpp"
#include "engine/fusion/fusion_backend.hpp"
#include "engine/module/traversal.hpp"
#include "engine/optim/optimizer.hpp"

namespace ember {

namespace compile_detail {

template <class T>
struct IsTensorArg : std::false_type {};
template <class B, std::size_t D, class K>
struct IsTensorArg<Tensor<B, D, K>> : std::true_type {};

// The Capture layer of a backend stack: Capture<B> itself, or the one under Fusion (Autodiff<Fusion<Capture<B>>>,
// where the tape records Fusion's fused chains). to_capture gives the Capture primitive behind one of the stack's
// (a Fusion tensor's value, materialized), from_capture wraps one back.
template <class Bk>
struct Layer;
template <class B>
struct Layer<Capture<B>> {
  using Cap = Capture<B>;
  template <class K>
  static const Primitive<Cap, K>& to_capture(const Primitive<Cap, K>& p) {
    return p;
  }
  template <class K>
  static Primitive<Cap, K> from_capture(Primitive<Cap, K> p) {
    return p;
  }
};
template <class X>
struct Layer<Fusion<X>> {
  using Cap = typename Layer<X>::Cap;
  template <class K>
  static Primitive<Cap, K> to_capture(const Primitive<Fusion<X>, K>& p) {
    if constexpr (std::is_same_v<K, Float>)
      return Layer<X>::template to_capture<K>(Fusion<X>::value(p));
    else
      return Layer<X>::template to_capture<K>(p);
  }
  template <class K>
  static Primitive<Fusion<X>, K> from_capture(Primitive<Cap, K> p) {
    if constexpr (std::is_same_v<K, Float>)
      return Fusion<X>::wrap(Layer<X>::template from_capture<K>(std::move(p)));
    else
      return Layer<X>::template from_capture<K>(std::move(p));
  }
};

// Whether T is a tensor of an Autodiff backend (a param, a step's argument or result), rather than of the backend
// under it (an optimizer's flat state).
template <class T>
constexpr bool tracked = T::is_float&& detail::HasGradTracking<typename T::Backend_>;
// The backend stack under Autodiff (whose Int and Bool primitives are that stack's own).
template <class T>
using StackOf =
    std::conditional_t<detail::HasGradTracking<typename T::Backend_>, typename T::Inner, typename T::Backend_>;

// The cell behind a tensor, and a tensor with the same value in a new cell, which nothing recorded reads or writes.
template <class T>
std::shared_ptr<CellBase> cell_of(const T& t) {
  using L = Layer<StackOf<T>>;
  if constexpr (tracked<T>)
    return L::template to_capture<Float>(t.inner().primitive()).cell;
  else
    return L::template to_capture<typename T::Kind>(t.primitive()).cell;
}
// A tensor of type T in a new cell holding `value` (Capture's inner backend's primitive).
template <class T, class V>
T with_value(const V& value) {
  using S = StackOf<T>;
  using L = Layer<S>;
  using K = typename T::Kind;
  auto p = L::template from_capture<K>(L::Cap::template wrap<K>(value));
  if constexpr (tracked<T>)
    return T::from_inner(Tensor<S, T::rank>(std::move(p)));
  else
    return T(std::move(p));
}
template <class T>
T fresh(const T& t) {
  using L = Layer<StackOf<T>>;
  using IP = Primitive<typename L::Cap::Eager, typename T::Kind>;
  return with_value<T>(*static_cast<const Cell<IP>&>(*cell_of(t)).v);
}
// A tensor of type T in a new cell holding `cell`'s value.
template <class T>
T from_cell(const CellBase& cell) {
  using L = Layer<StackOf<T>>;
  using IP = Primitive<typename L::Cap::Eager, typename T::Kind>;
  return with_value<T>(*static_cast<const Cell<IP>&>(cell).v);
}
template <class T>
void append_dims(std::vector<int64_t>& sig, const T& t) {
  sig.push_back(T::is_float ? 1 : T::is_int ? 2 : 3);
  sig.push_back(static_cast<int64_t>(T::rank));
  for (int64_t d : t.dims()) sig.push_back(d);
}

// Calls f on every tensor of a step's result (a tensor, or a tuple / pair of them).
template <class R, class F>
void for_each_result(R& r, F&& f) {
  if constexpr (IsTensorArg<R>::value) {
    f(r);
  } else {
    std::apply([&](auto&... e) { (for_each_result(e, f), ...); }, r);
  }
}

}  // namespace compile_detail

// How the last call ran.
enum class CompiledCall {
  Captured,  // ran eagerly while recording; later calls with its signature replay
  Warmup,    // ran eagerly while recording, but the step created state (an optimizer's first moments): not kept
  Replayed,  // the recorded ops on the new values
  Eager,     // its signature cannot be replayed: plain eager run (fallback_reason() says why)
};

template <AutodiffBackend AD, class Step, class... State>
class CompiledStep {
  using Cells = std::vector<std::shared_ptr<compile_detail::CellBase>>;

 public:
  explicit CompiledStep(Step step, State&... state) : step_(std::move(step)), state_(state...) {}

  template <class... Args>
  auto operator()(const Args&... args) {
    static_assert((... && (compile_detail::IsTensorArg<Args>::value || std::is_arithmetic_v<Args>)),
                  "compile: a step takes tensors and host scalars (double)");
    using R = std::invoke_result_t<Step&, const Args&...>;
    last_entry_ = nullptr;
    if (compile_detail::active_tape()) {
      // Called from inside another compiled step's capture: its ops must land on that tape as ordinary ops (a
      // replay of this one's own tape would run B directly, unseen by the outer capture).
      last_ = CompiledCall::Eager;
      reason_ = "called while another compiled step captures (its ops are recorded there)";
      return step_(args...);
    }
    const std::vector<int64_t> sig = signature(args...);
    auto it = entries_.find(sig);
    if (it != entries_.end() && !it->second->refusal.empty()) {
      last_ = CompiledCall::Eager;
      reason_ = it->second->refusal;
      return detach(step_(args...));
    }
    if (it != entries_.end()) {
      if (auto r = replay<R>(*it->second, args...)) return std::move(*r);
      entries_.erase(it);  // the state's layout changed since the capture (another module or optimizer state)
    }
    return capture<R>(sig, args...);
  }

  CompiledCall last_call() const { return last_; }
  // Why the last call ran eagerly (empty unless last_call() is Eager): one line naming what could not be captured.
  const std::string& fallback_reason() const { return reason_; }
  // Signatures captured (replayable or not).
  std::size_t signatures() const { return entries_.size(); }
  // Ops recorded for the last call's signature (0 when it was not captured).
  std::size_t recorded_ops() const { return last_entry_ ? last_entry_->tape.ops.size() : 0; }
  // The last call's signature replays as one device plan (Vulkan: a command buffer; step_plan.hpp) rather than op
  // by op: what the plan is, or empty. plan_reason(): why a backend that builds plans did not for it (empty when
  // it did, or when the backend builds none).
  std::string plan_description() const { return last_entry_ && last_entry_->plan ? last_entry_->plan->describe() : ""; }
  const std::string& plan_reason() const {
    static const std::string none;
    return last_entry_ ? last_entry_->plan_reason : none;
  }
  // The device plan of the last call's signature (null: none), for a host that submits it itself (on Vulkan,
  // backends/vulkan/compiled_step.hpp: recorded once into a command buffer of its own). Before each of its submits
  // the host calls prepare_plan with the step's scalar arguments (the doubles, in order): the optimizers count one
  // more step and the plan's per-step values are written, as a replay does (after Ember's own last replay of it
  // executed, whose failed checks it throws; the host's own earlier submits are the host's to wait for).
  compile_detail::StepPlan* device_plan() const { return last_entry_ ? last_entry_->plan.get() : nullptr; }
  template <class... Doubles>
  void prepare_plan(Doubles... scalars) {
    static_assert((... && std::is_arithmetic_v<Doubles>), "compile: prepare_plan takes the step's host scalars");
    if (!last_entry_ || !last_entry_->plan)
      throw ArgumentError("compile: prepare_plan without a device plan (the last call's signature has none)");
    Entry& e = *last_entry_;
    if (!e.plan->host_submits())
      throw ArgumentError("compile: prepare_plan: this backend's plan is launched by Ember's replays only (" +
                          e.plan->describe() + ")");
    e.plan->settle();  // a replay of Ember's own that may still read the per-step values
    e.plan->prepare(adam_args(e, {static_cast<double>(scalars)...}));
  }

 private:
  struct Entry {
    compile_detail::Tape tape;
    std::string refusal;
    Cells inputs;                // the private cells the step's tensor arguments were copied into
    std::vector<int> lr_source;  // per tape.adam: the double argument that was its lr, or -1 (a constant)
    Cells state_in, state_out;   // the state read by and written by the step, paired
    std::vector<std::string> state_keys;
    Cells outputs;    // the step's result tensors
    std::any result;  // the captured result (detached): the shape a replay's result is made in
    std::unique_ptr<compile_detail::StepPlan> plan;  // the backend's own replay of the whole step, if it built one
    std::string plan_reason;                          // why it did not
  };
  // The backend under Capture, which may build a device plan of a captured step (step_plan.hpp).
  using Eager = typename compile_detail::Layer<typename AD::InnerBackend>::Cap::Eager;

  template <class... Args>
  std::vector<int64_t> signature(const Args&... args) {
    std::vector<int64_t> sig;
    const auto add = [&](const auto& a) {
      using T = std::decay_t<decltype(a)>;
      if constexpr (compile_detail::IsTensorArg<T>::value)
        compile_detail::append_dims(sig, a);
      else
        sig.push_back(0);
    };
    (add(args), ...);
    std::apply(
        [&](auto&... s) {
          const auto flags = [&](auto& obj) {
            using S = std::decay_t<decltype(obj)>;
            if constexpr (!std::is_base_of_v<OptimizerBase<AD>, S>)
              for_each_member_of_type(obj, [&](TrainingFlag& f) { sig.push_back(f.training ? 1 : 0); });
          };
          (flags(s), ...);
          (void)flags;  // no state objects
        },
        state_);
    sig.push_back(autodiff::no_grad_flag() ? 1 : 0);
    return sig;
  }

  // The state's cells now, in a fixed order (module params in traversal order, then optimizer slots by param id and
  // name), with their keys when asked.
  void state_cells(Cells& cells, std::vector<std::string>* keys) {
    std::apply([&](auto&... s) { (collect(s, cells, keys), ...); }, state_);
  }
  template <class S>
  static void collect(S& obj, Cells& cells, std::vector<std::string>* keys) {
    if constexpr (std::is_base_of_v<OptimizerBase<AD>, S>) {
      obj.visit_state_tensors([&](ParamId id, const std::string& name, const auto& t) {
        cells.push_back(compile_detail::cell_of(t));
        if (keys) keys->push_back(fmt::format("optimizer {}.{} {}", id.value, name, t.shape().to_string()));
      });
    } else {
      visit_params(obj, [&](const std::string& path, const auto& p) {
        // A lazy param is left to draw its values where the step first reads it (in the step's random order):
        // no cell yet, and a key that differs once it has one, so that call is not kept (CompiledCall::Warmup).
        const bool lazy = !p.is_initialized();
        cells.push_back(lazy ? nullptr : compile_detail::cell_of(p.val()));
        if (keys)
          keys->push_back(
              fmt::format("param {} {} {}{}", path, p.id().value, p.shape().to_string(), lazy ? " (lazy)" : ""));
      });
    }
  }
  // Gives every state tensor a new cell with the same value, so that the cells the tape reads are its own.
  void rebind_state() {
    std::apply([&](auto&... s) { (rebind(s), ...); }, state_);
  }
  template <class S>
  static void rebind(S& obj) {
    if constexpr (std::is_base_of_v<OptimizerBase<AD>, S>) {
      obj.visit_state_tensors([](ParamId, const std::string&, auto& t) { t = compile_detail::fresh(t); });
    } else {
      obj = map_params(std::move(obj), [](const std::string&, auto p) {
        if (!p.is_initialized()) return p;
        return p.with_value(compile_detail::fresh(p.val()));
      });
    }
  }
  bool declared_optimizer(const void* o) const {
    bool found = false;
    std::apply([&](auto&... s) { ((found = found || static_cast<const void*>(&s) == o), ...); }, state_);
    return found;
  }

  template <class R>
  static R detach(R r) {
    compile_detail::for_each_result(r, [](auto& t) {
      if constexpr (std::decay_t<decltype(t)>::is_float) t = t.detach();
    });
    return r;
  }

  template <class R, class... Args>
  R capture(const std::vector<int64_t>& sig, const Args&... args) {
    auto e = std::make_unique<Entry>();
    // The step runs on private copies of its tensor arguments: a replay rewrites those cells, not the caller's.
    const auto priv = [&](const auto& a) {
      using T = std::decay_t<decltype(a)>;
      if constexpr (compile_detail::IsTensorArg<T>::value) {
        T c = compile_detail::fresh(a);
        if constexpr (T::is_float) {
          if (a.is_require_grad()) c = c.require_grad();
        }
        e->inputs.push_back(compile_detail::cell_of(c));
        return c;
      } else {
        return a;
      }
    };
    const auto private_args = std::tuple{priv(args)...};  // braces: left to right, as e->inputs is filled
    rebind_state();
    Cells before;
    std::vector<std::string> keys_before;
    state_cells(before, &keys_before);

    Cells after;
    std::vector<std::string> keys_after;
    R result = [&] {
      compile_detail::Recording rec(e->tape);
      R r = std::apply([&](const auto&... a) { return step_(a...); }, private_args);
      // Still recording: a result or state value that is pending (a Fusion chain) materializes here, on the tape.
      compile_detail::for_each_result(r, [&](auto& t) { e->outputs.push_back(compile_detail::cell_of(t)); });
      state_cells(after, &keys_after);
      return r;
    }();
    e->tape.finish();
    for (const void* o : e->tape.optimizers)
      if (!declared_optimizer(o))
        e->tape.refuse("an optimizer that is not in compile's state stepped (its moments would not carry over)");
    result = fresh_results(detach(std::move(result)));
    e->result = result;

    if (keys_after != keys_before) {  // e.g. Adam's first step creates the moments: capture again next call
      last_ = CompiledCall::Warmup;
      reason_.clear();
      last_entry_ = nullptr;
      return result;
    }
    e->refusal = e->tape.refusal();
    e->state_in = std::move(before);
    e->state_out = std::move(after);
    e->state_keys = std::move(keys_after);
    // An update's lr follows the double argument it equalled at capture; none: a constant of the step. Two equal
    // candidates cannot be told apart: that signature runs eagerly rather than guess.
    std::vector<double> doubles;
    ((std::is_arithmetic_v<Args> ? doubles.push_back(as_double(args)) : void()), ...);
    for (const auto& a : e->tape.adam) {
      int src = -1, matches = 0;
      for (std::size_t i = 0; i < doubles.size(); ++i)
        if (doubles[i] == a.captured_lr && matches++ == 0) src = static_cast<int>(i);
      if (matches > 1 && e->refusal.empty())
        e->refusal = fmt::format("the optimizer's lr {} equals {} of the step's scalar arguments (which one is it?)",
                                 a.captured_lr, matches);
      e->lr_source.push_back(src);
    }
    if (e->refusal.empty()) {
      compile_detail::StepPlanParts parts{e->tape, e->inputs, e->state_in, e->state_out, e->outputs};
      e->plan = compile_detail::build_step_plan<Eager>(parts, e->plan_reason);
    }
    last_ = e->refusal.empty() ? CompiledCall::Captured : CompiledCall::Eager;
    reason_ = e->refusal;
    last_entry_ = e->refusal.empty() ? e.get() : nullptr;
    entries_[sig] = std::move(e);
    return result;
  }

  template <class R, class... Args>
  std::optional<R> replay(Entry& e, const Args&... args) {
    Cells now;
    state_cells(now, nullptr);
    if (now != e.state_out) {
      // The caller replaced its module or optimizer state since the last call: replay only over the same layout
      // (names, ids, shapes: the recorded kernels' shapes), else capture again.
      Cells cells;
      std::vector<std::string> keys;
      state_cells(cells, &keys);
      if (keys != e.state_keys) return std::nullopt;
    }
    if (e.plan) return replay_plan<R>(e, now, args...);
    // The state the caller holds now (normally the cells the last call wrote) is what the step reads.
    for (std::size_t i = 0; i < now.size(); ++i) e.state_in[i]->copy_from(*now[i]);
    std::size_t k = 0;
    std::vector<double> doubles;
    const auto feed = [&](const auto& a) {
      using T = std::decay_t<decltype(a)>;
      if constexpr (compile_detail::IsTensorArg<T>::value)
        e.inputs[k++]->copy_from(*compile_detail::cell_of(a));
      else
        doubles.push_back(as_double(a));
    };
    (feed(args), ...);
    for (std::size_t i = 0; i < e.tape.adam.size(); ++i) {
      auto& a = e.tape.adam[i];
      *a.args = a.advance(e.lr_source[i] >= 0 ? doubles[static_cast<std::size_t>(e.lr_source[i])] : a.captured_lr);
    }
    for (const auto& op : e.tape.ops) op();
    // Where the caller holds other cells than the step wrote (it replaced its module), the new values go there.
    for (std::size_t i = 0; i < now.size(); ++i)
      if (now[i] != e.state_out[i]) now[i]->copy_from(*e.state_out[i]);
    // The result: the captured call's result type, each tensor a fresh cell with the output's value.
    R out = result_shape<R>(e, e.outputs);
    last_ = CompiledCall::Replayed;
    reason_.clear();
    last_entry_ = &e;
    return out;
  }

  // A replay of the backend's plan: the state and arguments go in as they are, each Adam update's scalars for
  // this step, and the results come back in fresh cells.
  template <class R, class... Args>
  R replay_plan(Entry& e, const Cells& now, const Args&... args) {
    Cells arg_cells;
    std::vector<double> doubles;
    const auto feed = [&](const auto& a) {
      using T = std::decay_t<decltype(a)>;
      if constexpr (compile_detail::IsTensorArg<T>::value)
        arg_cells.push_back(compile_detail::cell_of(a));
      else
        doubles.push_back(as_double(a));
    };
    (feed(args), ...);
    std::vector<const compile_detail::CellBase*> inputs;
    for (const auto& c : arg_cells) inputs.push_back(c.get());
    e.plan->settle();
    e.plan->check_call(now, inputs);  // before the optimizers count the step
    const std::vector<AdamStepArgs> scalars = adam_args(e, doubles);
    Cells outs;
    for (const auto& o : e.outputs) outs.push_back(o->clone());
    e.plan->replay(now, inputs, scalars, outs);
    R out = result_shape<R>(e, outs);
    last_ = CompiledCall::Replayed;
    reason_.clear();
    last_entry_ = &e;
    return out;
  }

  // Each recorded Adam update's arguments for one more step (its slot's step count advances), the lr from the
  // step's double argument it follows.
  static std::vector<AdamStepArgs> adam_args(Entry& e, const std::vector<double>& doubles) {
    std::vector<AdamStepArgs> out;
    for (std::size_t i = 0; i < e.tape.adam.size(); ++i) {
      auto& a = e.tape.adam[i];
      const int src = e.lr_source[i];
      if (src >= static_cast<int>(doubles.size()))
        throw ArgumentError(fmt::format("compile: the step takes {} or more scalar arguments, {} given", src + 1,
                                        doubles.size()));
      out.push_back(a.advance(src >= 0 ? doubles[static_cast<std::size_t>(src)] : a.captured_lr));
    }
    return out;
  }

  template <class T>
  static double as_double(const T& v) {
    if constexpr (std::is_arithmetic_v<T>)
      return static_cast<double>(v);
    else
      return 0.0;
  }
  template <class R>
  static R fresh_results(R r) {
    compile_detail::for_each_result(r, [](auto& t) { t = compile_detail::fresh(t); });
    return r;
  }
  // A result of type R whose tensors are new cells holding the values of `cells` (the entry's outputs).
  template <class R>
  static R result_shape(const Entry& e, const Cells& cells) {
    R r = std::any_cast<R>(e.result);
    std::size_t i = 0;
    compile_detail::for_each_result(
        r, [&](auto& t) { t = compile_detail::from_cell<std::decay_t<decltype(t)>>(*cells[i++]); });
    return r;
  }

  Step step_;
  std::tuple<State&...> state_;
  std::map<std::vector<int64_t>, std::unique_ptr<Entry>> entries_;
  CompiledCall last_ = CompiledCall::Eager;
  std::string reason_;
  Entry* last_entry_ = nullptr;
};

// compile<AD>(step, state...): see the top of this file. `state` must outlive the compiled step.
template <AutodiffBackend AD, class Step, class... State>
CompiledStep<AD, Step, State...> compile(Step step, State&... state) {
  return CompiledStep<AD, Step, State...>(std::move(step), state...);
}

}  // namespace ember
