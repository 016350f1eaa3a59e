#pragma once
// Learning-rate schedulers. step() returns the lr for the next optimizer step and advances, so the values it
// returns are PyTorch's lr at epochs 0, 1, 2, ... (get_last_lr() before each scheduler.step()):
//
//   lr = scheduler.step();
//   model = optim.step(lr, model, grads);
//
// Values follow PyTorch's recursive ("chainable") formulas, not the closed forms, because those are what PyTorch
// actually produces in a training loop; the two differ in the last bits. State (steps taken, last lr) is a Record
// of scalars.
#include <cmath>
#include <numbers>
#include <string>

#include "engine/tensor/error.hpp"
#include "engine/module/record.hpp"

namespace ember {

class LrScheduler {
 public:
  virtual ~LrScheduler() = default;
  virtual double step() = 0;
  virtual double initial_lr() const = 0;
  virtual Record state() const = 0;
  virtual void load_state(const Record& r) = 0;
  // Steps taken so far (the epoch index of the next value step() returns).
  int64_t steps() const { return t_; }

 protected:
  Record base_state() const { return {{}, {{"step", static_cast<double>(t_)}, {"lr", lr_}}}; }
  // Reads "step" and "lr", rejecting any key the scheduler does not know (`extra` names the others it reads).
  void load_base(const Record& r, const char* kind, std::initializer_list<std::string> extra = {}) {
    for (const auto& [k, v] : r.scalars) {
      bool known = k == "step" || k == "lr";
      for (const auto& e : extra) known = known || k.rfind(e, 0) == 0;
      if (!known) throw ArgumentError(std::string(kind) + "::load_state: unexpected scalar '" + k + "'");
    }
    if (!r.params.empty()) throw ArgumentError(std::string(kind) + "::load_state: a scheduler state has no tensors");
    auto s = r.scalars.find("step"), l = r.scalars.find("lr");
    if (s == r.scalars.end() || l == r.scalars.end())
      throw ArgumentError(std::string(kind) + "::load_state: the record needs scalars 'step' and 'lr'");
    if (!(s->second >= 0) || s->second != std::floor(s->second))
      throw ArgumentError(std::string(kind) + "::load_state: 'step' = " + std::to_string(s->second) +
                          " is not a step count");
    t_ = static_cast<int64_t>(s->second);
    lr_ = l->second;
  }

  int64_t t_ = 0;   // PyTorch's last_epoch of the next value
  double lr_ = 0;   // the last value returned (the recursions build on it)
};

// A fixed lr (the scheduler of a run without one).
class ConstantLr final : public LrScheduler {
 public:
  explicit ConstantLr(double lr) : initial_(lr) {}
  double step() override {
    ++t_;
    return lr_ = initial_;
  }
  double initial_lr() const override { return initial_; }
  Record state() const override { return base_state(); }
  void load_state(const Record& r) override { load_base(r, "ConstantLr"); }

 private:
  double initial_;
};

// torch.optim.lr_scheduler.StepLR: multiplied by gamma every step_size steps.
class StepLr final : public LrScheduler {
 public:
  StepLr(double initial, int64_t step_size, double gamma) : initial_(initial), step_size_(step_size), gamma_(gamma) {
    if (step_size <= 0) throw ArgumentError("StepLr: step_size must be positive, got " + std::to_string(step_size));
  }
  double step() override {
    if (t_ == 0) lr_ = initial_;
    else if (t_ % step_size_ == 0) lr_ *= gamma_;
    ++t_;
    return lr_;
  }
  double initial_lr() const override { return initial_; }
  Record state() const override { return base_state(); }
  void load_state(const Record& r) override { load_base(r, "StepLr"); }

 private:
  double initial_;
  int64_t step_size_;
  double gamma_;
};

// torch.optim.lr_scheduler.CosineAnnealingLR: eta_min + (initial - eta_min) (1 + cos(pi t / t_max)) / 2 in closed
// form; past t_max it rises again (period 2 t_max), as in PyTorch.
class CosineAnnealingLr final : public LrScheduler {
 public:
  CosineAnnealingLr(double initial, int64_t t_max, double eta_min = 0.0)
      : initial_(initial), t_max_(t_max), eta_min_(eta_min) {
    if (t_max <= 0) throw ArgumentError("CosineAnnealingLr: t_max must be positive, got " + std::to_string(t_max));
  }
  double step() override {
    constexpr double pi = std::numbers::pi;
    const double T = static_cast<double>(t_max_), t = static_cast<double>(t_);
    if (t_ == 0) lr_ = initial_;
    else if ((t_ - 1 - t_max_) % (2 * t_max_) == 0)  // at the bottom: the ratio below would divide by zero
      lr_ = lr_ + (initial_ - eta_min_) * (1 - std::cos(pi / T)) / 2;
    else
      lr_ = (1 + std::cos(pi * t / T)) / (1 + std::cos(pi * (t - 1) / T)) * (lr_ - eta_min_) + eta_min_;
    ++t_;
    return lr_;
  }
  double initial_lr() const override { return initial_; }
  Record state() const override { return base_state(); }
  void load_state(const Record& r) override { load_base(r, "CosineAnnealingLr"); }

 private:
  double initial_;
  int64_t t_max_;
  double eta_min_;
};

// Linear warmup from start_factor * inner.initial_lr() up to the inner schedule, which then starts from its own
// step 0: PyTorch's SequentialLR([LinearLR(start_factor, 1.0, total_iters=warmup_steps), inner],
// milestones=[warmup_steps]). The inner scheduler is not stepped during warmup.
template <class S>
class LinearWarmup final : public LrScheduler {
 public:
  LinearWarmup(S inner, int64_t warmup_steps, double start_factor)
      : inner_(std::move(inner)), warmup_(warmup_steps), start_(start_factor) {
    if (warmup_steps < 0) throw ArgumentError("LinearWarmup: warmup_steps must be >= 0");
    if (!(start_factor > 0 && start_factor <= 1))
      throw ArgumentError("LinearWarmup: start_factor must be in (0, 1], got " + std::to_string(start_factor));
  }
  double step() override {
    if (t_ >= warmup_) lr_ = inner_.step();
    else if (t_ == 0) lr_ = inner_.initial_lr() * start_;
    else  // LinearLR's recursion: the factor grows by (1 - start) / warmup per step
      lr_ *= 1.0 + (1.0 - start_) / (static_cast<double>(warmup_) * start_ +
                                     static_cast<double>(t_ - 1) * (1.0 - start_));
    ++t_;
    return lr_;
  }
  double initial_lr() const override { return inner_.initial_lr(); }
  Record state() const override {
    Record r = base_state();
    for (const auto& [k, v] : inner_.state().scalars) r.scalars.emplace("inner." + k, v);
    return r;
  }
  void load_state(const Record& r) override {
    Record inner;
    for (const auto& [k, v] : r.scalars)
      if (k.rfind("inner.", 0) == 0) inner.scalars.emplace(k.substr(6), v);
    S next = inner_;  // load into a copy so a bad record leaves this scheduler unchanged
    next.load_state(inner);
    load_base(r, "LinearWarmup", {"inner."});
    inner_ = std::move(next);
  }
  const S& inner() const { return inner_; }

 private:
  S inner_;
  int64_t warmup_;
  double start_;
};

}  // namespace ember
