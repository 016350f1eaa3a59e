#pragma once
// OptimizerBase<B>: what every optimizer shares — the walk over a module's params that decides which ones a step
// updates, per-param options, and the per-param state (moments, step counts) keyed by ParamId, which is itself a
// Record so it saves and loads like a module.
//
// A step updates a param only when it is a float Trainable param that requires grad and has a gradient in the
// GradientsParams; everything else (frozen params, Buffers, Constants, params the loss did not reach) is returned
// unchanged. The new value is a fresh graph leaf with the same ParamId (Param::with_value).
//
// State record layout: params "<id>.<name>" (e.g. "7.exp_avg") with ParamRecord::id = id and the param's shape,
// in the inner backend's dtype (lossless); scalars "<id>.step".
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/optim/capture_hook.hpp"
#include "engine/optim/grads.hpp"
#include "engine/optim/param_options.hpp"
#include "engine/module/record.hpp"

namespace ember {

template <AutodiffBackend B>
class OptimizerBase {
 public:
  using Inner = typename B::InnerBackend;
  using Flat = Tensor<Inner, 1>;

  void set_param_options(std::string path_prefix, ParamOptions o) { options_.set(std::move(path_prefix), o); }
  ParamOptions param_options(const std::string& path) const { return options_.resolve(path); }

  Record state() const {
    Record r;
    for (const auto& [id, slot] : slots_) {
      const std::string key = std::to_string(id.value);
      r.scalars.emplace(key + ".step", static_cast<double>(slot.step));
      for (const auto& [name, t] : slot.tensors) {
        TensorData d = t.into_data();
        d.shape = *slot.shape;  // same row-major bytes, recorded in the param's own shape
        r.params.emplace(key + "." + name, ParamRecord{id.value, ParamKind::Float, ParamRole::Trainable, std::move(d)});
      }
    }
    return r;
  }

  // Replaces the whole state with `r`, after validating it (nothing changes when it throws). Shapes against the
  // module are checked at the next step; load_state(r, module) checks them now.
  void load_state(const Record& r) {
    std::map<ParamId, Slot> slots;
    for (const auto& [key, value] : r.scalars) {
      auto [id, name] = split_key(key);
      if (name != "step") throw ArgumentError("load_state: unexpected scalar '" + key + "' (expected '<id>.step')");
      if (!(value >= 0) || value != std::floor(value))
        throw ArgumentError("load_state: '" + key + "' = " + std::to_string(value) + " is not a step count");
      slots[id].step = static_cast<int64_t>(value);
    }
    for (const auto& [key, pr] : r.params) {
      auto [id, name] = split_key(key);
      if (!known_.count(name)) throw ArgumentError("load_state: unexpected entry '" + key + "' for " + kind_);
      if (pr.id != id.value)
        throw ArgumentError("load_state: '" + key + "' carries param id " + std::to_string(pr.id));
      if (pr.kind != ParamKind::Float || !dtype_is_float(pr.data.dtype))
        throw ArgumentError("load_state: '" + key + "' is not a float tensor");
      auto it = slots.find(id);
      if (it == slots.end()) throw ArgumentError("load_state: '" + key + "' has no '" + std::to_string(id.value) + ".step'");
      Slot& s = it->second;
      if (s.shape && !(*s.shape == pr.data.shape))
        throw ShapeError("load_state: '" + key + "' has shape " + pr.data.shape.to_string() + ", other state of param " +
                         std::to_string(id.value) + " has " + s.shape->to_string());
      s.shape = pr.data.shape;
      TensorData flat = pr.data;
      flat.shape = Shape{pr.data.shape.num_elements()};
      s.tensors.insert_or_assign(name, Flat::from_data(flat));
    }
    for (const auto& [id, s] : slots)
      for (const auto& name : required_)
        if (s.step > 0 && !s.tensors.count(name))
          throw ArgumentError("load_state: param " + std::to_string(id.value) + " has taken " + std::to_string(s.step) +
                              " steps but its '" + name + "' is missing");
    slots_ = std::move(slots);
  }

  // As load_state(r), and every state entry must belong to a param of `module` with the same shape.
  template <class M>
  void load_state(const Record& r, const M& module) {
    OptimizerBase probe = *this;
    probe.load_state(r);
    std::map<ParamId, std::pair<std::string, Shape>> params;
    visit_params(module, [&](const std::string& path, const auto& p) { params.emplace(p.id(), std::pair{path, p.shape()}); });
    for (const auto& [id, s] : probe.slots_) {
      auto it = params.find(id);
      if (it == params.end())
        throw ArgumentError("load_state: state for param id " + std::to_string(id.value) + ", which the module does not have");
      check_shape(s, id, it->second.first, it->second.second);
    }
    slots_ = std::move(probe.slots_);
    // Records carry no device: the state was built on the default one. Put it with its param, so a module on
    // another device (a second GPU, a host's adopted Vulkan device) steps without mixing devices.
    visit_params(module, [&](const std::string&, const auto& p) {
      auto it = slots_.find(p.id());
      if (it == slots_.end()) return;
      if constexpr (std::is_convertible_v<decltype(p.device()), typename Flat::Device>) {
        for (auto& [name, t] : it->second.tensors) t = t.to_device(p.device());
      }
    });
  }

  void reset() { slots_.clear(); }
  // Steps taken for param `id` (0 if it never had a gradient).
  int64_t step_count(ParamId id) const {
    auto it = slots_.find(id);
    return it == slots_.end() ? 0 : it->second.step;
  }

 protected:
  // Per-param state: named flattened tensors (all of the param's shape) and the number of steps taken.
  struct Slot {
    std::optional<Shape> shape;  // unset while no tensor is stored (e.g. SGD without momentum)
    std::map<std::string, Flat> tensors;
    int64_t step = 0;
  };

  // `known`: state tensor names this optimizer stores; `required`: the ones every param that took a step has.
  OptimizerBase(std::string kind, std::set<std::string> known, std::set<std::string> required)
      : kind_(std::move(kind)), known_(std::move(known)), required_(std::move(required)) {}

  // The param update that apply() is running, for an update that reports its per-step scalars to a graph capture
  // (engine/optim/capture_hook.hpp), and that param's slot when a replay advances it.
  struct CurrentUpdate {
    ParamId id;
    double lr_mult = 1.0;
  };
  const CurrentUpdate& current_update() const { return current_; }
  Slot& slot(ParamId id) { return slots_[id]; }

  // Runs update(slot, param, grad, lr, wd_mult) -> new param (all flat, on the inner backend) for every param the
  // step applies to; the slot's step count is incremented before the call (PyTorch counts from 1).
  template <class M, class Update>
  M apply(double lr, M module, const GradientsParams<B>& grads, Update&& update) {
    if (!(lr >= 0)) throw ArgumentError(kind_ + "::step: lr must be >= 0, got " + std::to_string(lr));
    // Validate every param first, so a mismatch leaves both the module and the state untouched.
    visit_params(module, [&](const std::string& path, const auto& p) {
      if (!updates(p, grads)) return;
      const Shape gs = *grads.shape(p.id());
      if (!(gs == p.shape()))
        throw ShapeError(kind_ + "::step: gradient for '" + path + "' has shape " + gs.to_string() +
                         ", the param has " + p.shape().to_string());
      if (auto it = slots_.find(p.id()); it != slots_.end()) check_shape(it->second, p.id(), path, p.shape());
    });
    return map_params(std::move(module), [&](const std::string& path, auto p) {
      using T = typename decltype(p)::Value;
      if (!updates(p, grads)) return p;
      if constexpr (T::is_float) {
        const Shape shape = p.shape();
        Slot& slot = slots_[p.id()];
        slot.shape = shape;
        ++slot.step;
        const ParamOptions o = options_.resolve(path);
        const Flat w = p.val().inner().template reshape<1>({shape.num_elements()});
        current_ = {p.id(), o.lr_mult};
        if (auto* l = optimizer_capture_listener()) l->update_begun(this, kind_);
        const Flat next = update(slot, w, *grads.get(p.id()), lr * o.lr_mult, o.wd_mult);
        return p.with_value(T::from_inner(next.template reshape<T::rank>(p.val().dims())));
      }
      return p;
    });
  }

 private:
  // Whether a step changes `p`: a float Trainable param that requires grad and has a gradient.
  template <class P>
  static bool updates(const P& p, const GradientsParams<B>& grads) {
    if constexpr (!P::Value::is_float) return false;
    else return p.role() == ParamRole::Trainable && p.require_grad() && grads.contains(p.id());
  }
  void check_shape(const Slot& s, ParamId id, const std::string& path, const Shape& shape) const {
    if (s.shape && !(*s.shape == shape))
      throw ShapeError(kind_ + ": optimizer state for '" + path + "' (param id " + std::to_string(id.value) +
                       ") has shape " + s.shape->to_string() + ", the param has " + shape.to_string());
  }
  std::pair<ParamId, std::string> split_key(const std::string& key) const {
    const auto dot = key.find('.');
    uint64_t id = 0;
    const char* end = key.data() + (dot == std::string::npos ? 0 : dot);
    auto [ptr, ec] = std::from_chars(key.data(), end, id);
    if (dot == std::string::npos || dot == 0 || ec != std::errc{} || ptr != end)
      throw ArgumentError("load_state: key '" + key + "' is not '<param id>.<name>'");
    return {ParamId{id}, key.substr(dot + 1)};
  }

  std::string kind_;
  std::set<std::string> known_, required_;
  ParamOptionsTable options_;
  std::map<ParamId, Slot> slots_;
  CurrentUpdate current_;

 public:
  // Every state tensor (flat, on the inner backend), which `f(id, name, tensor)` may replace by one of the same
  // shape: a graph capture (engine/compile) pairs them before and after a captured step.
  template <class F>
  void visit_state_tensors(F&& f) {
    for (auto& [id, s] : slots_)
      for (auto& [name, t] : s.tensors) f(id, name, t);
  }
};

}  // namespace ember
