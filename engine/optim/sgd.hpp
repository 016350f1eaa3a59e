#pragma once
// SGD with momentum, dampening, Nesterov and L2 weight decay, with torch.optim.SGD semantics:
//
//   d = g + wd * w                          (wd = weight_decay * wd_mult)
//   buf = d                                 on a param's first step (no dampening applied)
//   buf = momentum * buf + (1 - dampening) * d   afterwards
//   d = nesterov ? d + momentum * buf : buf (when momentum != 0)
//   w = w - lr * d                          (lr = lr * lr_mult)
#include "engine/optim/optimizer.hpp"

namespace ember {

struct SgdConfig {
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

template <AutodiffBackend B>
class Sgd : public OptimizerBase<B> {
  using Base = OptimizerBase<B>;
  using Flat = typename Base::Flat;

 public:
  explicit Sgd(SgdConfig c = {}) : Base("Sgd", {"momentum_buffer"}, {}), c_(c) {
    if (c.momentum < 0 || c.dampening < 0 || c.weight_decay < 0)
      throw ArgumentError("Sgd: momentum, dampening and weight_decay must be >= 0");
    // Same restriction as PyTorch: Nesterov needs momentum and no dampening to be the Nesterov update.
    if (c.nesterov && (c.momentum <= 0 || c.dampening != 0))
      throw ArgumentError("Sgd: nesterov requires momentum > 0 and dampening = 0");
  }
  const SgdConfig& config() const { return c_; }

  template <class M>
  M step(double lr, M module, const GradientsParams<B>& grads) {
    return this->apply(lr, std::move(module), grads, [&](auto& slot, const Flat& w, const Flat& g, double plr,
                                                         double wd_mult) {
      Flat d = g;
      const double wd = c_.weight_decay * wd_mult;
      if (wd != 0) d = d.add(w.mul_scalar(wd));
      if (c_.momentum != 0) {
        auto it = slot.tensors.find("momentum_buffer");
        Flat buf = it == slot.tensors.end()
                       ? d
                       : it->second.mul_scalar(c_.momentum).add(c_.dampening == 0 ? d : d.mul_scalar(1 - c_.dampening));
        slot.tensors.insert_or_assign("momentum_buffer", buf);
        d = c_.nesterov ? d.add(buf.mul_scalar(c_.momentum)) : buf;
      }
      return w.sub(d.mul_scalar(plr));
    });
  }

 private:
  SgdConfig c_;
};

}  // namespace ember
