#pragma once
// Adam and AdamW with torch.optim.Adam / AdamW semantics (t = the param's step count, from 1):
//
//   Adam:  g = g + wd * w                   (L2 penalty folded into the gradient)
//   AdamW: w = w * (1 - lr * wd)            (decoupled decay, applied before the moment update)
//   m = beta1 * m + (1 - beta1) * g         (torch 1.13's exp_avg.mul_(beta1).add_(g, alpha=1 - beta1); torch 2's
//                                            lerp_ rounds differently, and its rounding moves Adam curves)
//   v = beta2 * v + (1 - beta2) * g * g
//   denom = sqrt(v) / sqrt(1 - beta2^t) + eps      (eps outside the sqrt)
//   w = w - lr / (1 - beta1^t) * m / denom
// with lr = lr * lr_mult and wd = weight_decay * wd_mult per param. The update is the optional backend op
// float_adam_step: a backend's fused kernel, or the composed default in engine/backend/optional_ops.hpp.
#include <cmath>

#include "engine/backend/optional_ops.hpp"
#include "engine/optim/optimizer.hpp"

namespace ember {

struct AdamConfig {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // L2, added to the gradient
};

struct AdamWConfig {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;  // decoupled; PyTorch's AdamW default
};

template <AutodiffBackend B>
class Adam : public OptimizerBase<B> {
  using Base = OptimizerBase<B>;
  using Flat = typename Base::Flat;

 public:
  explicit Adam(AdamConfig c = {}) : Adam("Adam", c.beta1, c.beta2, c.eps, c.weight_decay, false) {}

  double beta1() const { return beta1_; }
  double beta2() const { return beta2_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }
  bool decoupled() const { return decoupled_; }

  template <class M>
  M step(double lr, M module, const GradientsParams<B>& grads) {
    return this->apply(lr, std::move(module), grads, [&](auto& slot, Flat w, Flat g, double plr, double wd_mult) {
      const double wd = weight_decay_ * wd_mult;
      auto m_it = slot.tensors.find("exp_avg");
      auto v_it = slot.tensors.find("exp_avg_sq");
      const AdamStepArgs args = step_args(plr, wd, slot.step);
      // A capture replays this update without running this code: it recomputes the lr and the bias corrections of
      // each later step through this (the lr given to that step, the slot's next step count).
      if (auto* l = optimizer_capture_listener()) {
        const ParamId id = this->current_update().id;
        const double lr_mult = this->current_update().lr_mult;
        l->adam_scalars(this, lr, [this, id, lr_mult, wd](double lr_now) {
          auto& s = this->slot(id);
          ++s.step;
          return step_args(lr_now * lr_mult, wd, s.step);
        });
      }
      // One fused pass where the backend has it, else the composed default (engine/backend/optional_ops.hpp).
      auto r = optional_ops::float_adam_step<typename B::InnerBackend>(
          w.primitive(), g.primitive(), m_it == slot.tensors.end() ? nullptr : &m_it->second.primitive(),
          v_it == slot.tensors.end() ? nullptr : &v_it->second.primitive(), args);
      slot.tensors.insert_or_assign("exp_avg", Flat(std::move(r.exp_avg)));
      slot.tensors.insert_or_assign("exp_avg_sq", Flat(std::move(r.exp_avg_sq)));
      return Flat(std::move(r.param));
    });
  }

 protected:
  Adam(const char* kind, double b1, double b2, double eps, double wd, bool decoupled)
      : Base(kind, {"exp_avg", "exp_avg_sq"}, {"exp_avg", "exp_avg_sq"}),
        beta1_(b1), beta2_(b2), eps_(eps), weight_decay_(wd), decoupled_(decoupled) {
    if (!(b1 >= 0 && b1 < 1) || !(b2 >= 0 && b2 < 1))
      throw ArgumentError(std::string(kind) + ": betas must be in [0, 1), got " + std::to_string(b1) + ", " +
                          std::to_string(b2));
    if (!(eps >= 0) || !(wd >= 0)) throw ArgumentError(std::string(kind) + ": eps and weight_decay must be >= 0");
  }

 private:
  // The update's arguments at the param's step t (from 1): per-param lr and weight decay, bias corrections.
  AdamStepArgs step_args(double plr, double wd, int64_t step) const {
    const double t = static_cast<double>(step);
    return {plr, beta1_, beta2_, eps_, wd, decoupled_, 1 - std::pow(beta1_, t), 1 - std::pow(beta2_, t)};
  }

  double beta1_, beta2_, eps_, weight_decay_;
  bool decoupled_;
};

// AdamW: Adam with decoupled weight decay (Loshchilov & Hutter); same state layout as Adam.
template <AutodiffBackend B>
class AdamW : public Adam<B> {
 public:
  explicit AdamW(AdamWConfig c = {}) : Adam<B>("AdamW", c.beta1, c.beta2, c.eps, c.weight_decay, true) {}
};

}  // namespace ember
