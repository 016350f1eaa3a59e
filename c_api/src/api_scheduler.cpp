// ember.h: learning-rate schedulers with torch.optim.lr_scheduler's (1.13) chainable formulas: each step reads
// each group's current lr (so an lr the caller set in between is followed, as in torch) and writes the next.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numbers>

#include <fmt/format.h>

#include "c_api/src/param_optimizer.hpp"

using namespace ember;
using namespace ember::capi;

namespace ember::capi {

struct SchedulerState {
  std::shared_ptr<OptimizerState> optimizer;  // kept alive
  ember_scheduler_options o{};
  std::map<int64_t, int> milestones;  // epoch -> how often it is listed (torch's Counter)
  std::vector<double> base_lrs;       // each group's lr at creation (torch's initial_lr)
  int64_t last_epoch = 0;
  std::mutex mu;
};

}  // namespace ember::capi

namespace {

constexpr std::size_t kSchedV1 = EMBER_STRUCT_END(ember_scheduler_options, n_milestones);

ember_scheduler_options sched_defaults(int32_t kind) {
  ember_scheduler_options o{};
  o.struct_size = sizeof o;
  o.kind = kind;
  o.step_size = 1;
  o.gamma = 0.1;
  o.t_max = 1;
  o.eta_min = 0.0;
  o.start_factor = 1.0 / 3.0;
  o.end_factor = 1.0;
  o.total_iters = 5;
  return o;
}

void check_kind(int32_t kind) {
  if (kind < EMBER_SCHED_STEP || kind > EMBER_SCHED_LINEAR) throw ArgumentError(fmt::format("unknown scheduler kind {}", kind));
}

void validate(const ember_scheduler_options& o) {
  check_kind(o.kind);
  for (double v : {o.gamma, o.eta_min, o.start_factor, o.end_factor})
    if (!std::isfinite(v)) throw ArgumentError("scheduler options must be finite");
  switch (o.kind) {
    case EMBER_SCHED_STEP:
      if (o.step_size <= 0) throw ArgumentError(fmt::format("StepLR: step_size must be > 0, got {}", o.step_size));
      [[fallthrough]];
    case EMBER_SCHED_MULTI_STEP:
    case EMBER_SCHED_EXPONENTIAL:
      if (!(o.gamma >= 0)) throw ArgumentError(fmt::format("gamma must be >= 0, got {}", o.gamma));
      break;
    case EMBER_SCHED_COSINE:
      if (o.t_max <= 0) throw ArgumentError(fmt::format("CosineAnnealingLR: t_max must be > 0, got {}", o.t_max));
      if (!(o.eta_min >= 0)) throw ArgumentError(fmt::format("CosineAnnealingLR: eta_min must be >= 0, got {}", o.eta_min));
      break;
    case EMBER_SCHED_LINEAR:
      if (!(o.start_factor > 0 && o.start_factor <= 1))
        throw ArgumentError(fmt::format("LinearLR: start_factor must be in (0, 1], got {}", o.start_factor));
      if (!(o.end_factor >= 0 && o.end_factor <= 1))
        throw ArgumentError(fmt::format("LinearLR: end_factor must be in [0, 1], got {}", o.end_factor));
      if (o.total_iters <= 0) throw ArgumentError(fmt::format("LinearLR: total_iters must be > 0, got {}", o.total_iters));
      break;
  }
  if (o.kind == EMBER_SCHED_MULTI_STEP && o.n_milestones > 0 && !o.milestones)
    throw ArgumentError("MultiStepLR: milestones is NULL");
}

// torch 1.13's get_lr() for epoch s.last_epoch (already advanced), from the group's current lr.
double next_lr(const SchedulerState& s, double lr, double base) {
  const auto& o = s.o;
  const int64_t t = s.last_epoch;
  switch (o.kind) {
    case EMBER_SCHED_STEP: return t == 0 || t % o.step_size != 0 ? lr : lr * o.gamma;
    case EMBER_SCHED_MULTI_STEP: {
      auto it = s.milestones.find(t);
      return it == s.milestones.end() ? lr : lr * std::pow(o.gamma, it->second);
    }
    case EMBER_SCHED_EXPONENTIAL: return t == 0 ? lr : lr * o.gamma;
    case EMBER_SCHED_COSINE: {
      constexpr double pi = std::numbers::pi;
      const double T = static_cast<double>(o.t_max), e = static_cast<double>(t);
      if (t == 0) return lr;
      // In 128 bits: 2 * t_max overflows int64 (undefined behaviour) for a t_max above 2^62, which torch accepts.
      const __int128 period = 2 * static_cast<__int128>(o.t_max);
      if ((static_cast<__int128>(t) - 1 - o.t_max) % period == 0)
        return lr + (base - o.eta_min) * (1 - std::cos(pi / T)) / 2;
      return (1 + std::cos(pi * e / T)) / (1 + std::cos(pi * (e - 1) / T)) * (lr - o.eta_min) + o.eta_min;
    }
    case EMBER_SCHED_LINEAR: {
      if (t == 0) return lr * o.start_factor;
      if (t > o.total_iters) return lr;
      const double d = o.end_factor - o.start_factor;
      return lr * (1.0 + d / (static_cast<double>(o.total_iters) * o.start_factor + static_cast<double>(t - 1) * d));
    }
  }
  return lr;
}

void apply_epoch(SchedulerState& s) {
  OptimizerState& opt = *s.optimizer;
  const std::size_t n = group_count(opt);
  std::vector<double> next(n);  // all first: an lr that cannot be set leaves every group as it was
  for (std::size_t g = 0; g < n; ++g) {
    next[g] = next_lr(s, get_group_lr(opt, g), g < s.base_lrs.size() ? s.base_lrs[g] : get_group_lr(opt, g));
    check_lr(next[g]);
  }
  for (std::size_t g = 0; g < n; ++g) set_group_lr(opt, g, next[g]);
}

}  // namespace

extern "C" {

ember_status ember_scheduler_options_init(ember_scheduler_options* options, int32_t kind) {
  return guard(__func__, [&] {
    if (!options) throw ArgumentError("options is NULL");
    check_kind(kind);
    *options = sched_defaults(kind);
  });
}

ember_status ember_scheduler_create(ember_optimizer* optimizer, const ember_scheduler_options* options,
                                    ember_scheduler** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const auto& opt = use(optimizer, "optimizer");
    if (!options) throw ArgumentError("options is NULL");
    if (options->struct_size < kSchedV1)
      throw ArgumentError(fmt::format("options: struct_size {} is smaller than any version of the struct ({})",
                                      options->struct_size, kSchedV1));
    auto s = std::make_shared<SchedulerState>();
    s->o = read_struct(options, sched_defaults(options->kind), kSchedV1, "options");
    validate(s->o);
    if (s->o.kind == EMBER_SCHED_MULTI_STEP) {
      for (std::size_t i = 0; i < s->o.n_milestones; ++i) ++s->milestones[s->o.milestones[i]];
      s->o.milestones = nullptr;  // copied: the caller's array is not read again
    }
    s->optimizer = opt;
    for (std::size_t g = 0; g < group_count(*opt); ++g) s->base_lrs.push_back(get_group_lr(*opt, g));
    apply_epoch(*s);  // torch's constructor steps once, to epoch 0
    o = make_handle<ember_scheduler>(std::move(s));
  });
}

ember_status ember_scheduler_step(ember_scheduler* scheduler) {
  return guard(__func__, [&] {
    SchedulerState& s = *use(scheduler, "scheduler");
    std::lock_guard lock(s.mu);
    ++s.last_epoch;
    try {
      apply_epoch(s);
    } catch (...) {
      --s.last_epoch;
      throw;
    }
  });
}

ember_status ember_scheduler_get_lr(const ember_scheduler* scheduler, size_t group, double* lr) {
  return guard(__func__, [&] {
    SchedulerState& s = *use(scheduler, "scheduler");
    out_value(lr, "lr") = get_group_lr(*s.optimizer, group);
  });
}

ember_status ember_scheduler_epoch(const ember_scheduler* scheduler, int64_t* epoch) {
  return guard(__func__, [&] {
    SchedulerState& s = *use(scheduler, "scheduler");
    std::lock_guard lock(s.mu);
    out_value(epoch, "epoch") = s.last_epoch;
  });
}

ember_status ember_scheduler_free(ember_scheduler* scheduler) { return free_handle(scheduler, __func__); }

}  // extern "C"
