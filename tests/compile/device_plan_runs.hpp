#pragma once
// Shared by the device-plan compile tests (compile_vulkan_test.cpp, compile_cuda_test.cpp): a compiled step whose
// backend replays a captured signature as one device plan (a Vulkan command buffer, a CUDA graph) against the same
// steps run eagerly, bit for bit, written once over the eager stack and the compiled one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "engine/compile/compile.hpp"
#include "tests/compile/compile_test_util.hpp"
#include "tools/ember/models.hpp"

namespace ember::test {

// Eager: the eager stack (Autodiff<Vulkan>); Cap: the compiled one (Autodiff<Capture<Vulkan>>).
template <class Eager, class Cap>
struct DevicePlanRuns {
  static double lr_at(int i) { return 1e-2 * std::pow(0.8, i); }

  // The caller replacing its module between steps (a checkpoint loaded): the params halved, in new tensors.
  template <class M>
  static M halved(M model) {
    return map_params(std::move(model),
                      [](const std::string&, auto p) { return p.with_value((p.val() * 0.5).detach()); });
  }

  // Steps 0 .. steps-1 of `one` (a step of backend AD taking the step index, the batch and its labels) on
  // batch(i, n) after before(i): the losses.
  template <class AD, class F>
  static std::vector<float> losses_of(int steps, int64_t n, F&& one, const std::function<void(int)>& before = {}) {
    std::vector<float> out;
    for (int i = 0; i < steps; ++i) {
      if (before) before(i);
      const Batch b = batch(i, n);
      out.push_back(scalar(one(i, xs<AD>(b), ys<AD>(b))));
    }
    return out;
  }

  // A run's losses and final params.
  struct Trace {
    std::vector<float> losses;
    std::vector<std::vector<float>> params;
  };

  // `steps` eager Adam steps of Model on Eager (the module halved before step replace_at).
  template <template <class> class Model>
  static Trace eager_run(int steps, int64_t n, int replace_at = -1) {
    seed(42);
    auto model = Model<Eager>::init();
    Adam<Eager> adam;
    Trace r;
    r.losses = losses_of<Eager>(
        steps, n, [&](int i, const auto& x, const auto& y) { return train_step(model, adam, lr_at(i), x, y); },
        [&](int i) {
          if (i == replace_at) model = halved(std::move(model));
        });
    r.params = params(model);
    return r;
  }

  // The same steps compiled on AD (a Capture stack over the device); `plan` receives the plan the capture built.
  template <template <class> class Model, class AD = Cap>
  static Trace compiled_run(int steps, int64_t n, std::string* plan = nullptr, int replace_at = -1) {
    seed(42);
    auto model = Model<AD>::init();
    Adam<AD> adam;
    auto step = compile_train_step<AD>(model, adam);
    std::vector<CompiledCall> calls;
    Trace r;
    r.losses = losses_of<AD>(
        steps, n,
        [&](int i, const auto& x, const auto& y) {
          auto loss = step(lr_at(i), x, y);
          calls.push_back(step.last_call());
          if (calls.back() == CompiledCall::Captured) {
            EXPECT_EQ(step.plan_reason(), "");
            if (plan) *plan = step.plan_description();
          }
          return loss;
        },
        [&](int i) {
          if (i == replace_at) model = halved(std::move(model));  // after the capture: the plan must read these
        });
    r.params = params(model);
    // Adam's first step makes the moments (not kept), the second captures, the rest replay the plan.
    EXPECT_EQ(calls[0], CompiledCall::Warmup);
    EXPECT_EQ(calls[1], CompiledCall::Captured);
    for (std::size_t i = 2; i < calls.size(); ++i) EXPECT_EQ(calls[i], CompiledCall::Replayed) << i;
    // The optimizer's step counts followed the replays (its state() record is right).
    visit_params(model, [&](const std::string&, const auto& p) { EXPECT_EQ(adam.step_count(p.id()), steps); });
    return r;
  }

  static void expect_same(const Trace& eager, const Trace& compiled) {
    EXPECT_EQ(compiled.losses, eager.losses);
    EXPECT_EQ(compiled.params, eager.params);
  }

  // The digits MLP's Adam steps with an lr schedule replayed as one plan (FusedCap: the stack compiled, e.g. with
  // Fusion under the capture), bit for bit: the plan's description. Without Fusion the plan holds three layers'
  // forward and backward and six Adam updates, one per-step scalar block each.
  template <class Compiled = Cap>
  static std::string digits_case(int steps, int64_t n) {
    std::string plan;
    const Trace c = compiled_run<tools::DigitsMlp, Compiled>(steps, n, &plan);
    expect_same(eager_run<tools::DigitsMlp>(steps, n), c);
    std::printf("%s\n", plan.c_str());
    EXPECT_NE(plan.find("6 per-step scalar blocks"), std::string::npos) << plan;
    EXPECT_NE(c.losses[2], c.losses[steps - 1]);  // the replays trained (a frozen lr or step count would not)
    return plan;
  }

  // The caller's module replaced (halved) after the capture: the plan reads it as it is.
  static void replaced_module_case() {
    expect_same(eager_run<tools::DigitsMlp>(5, 8, 3), compiled_run<tools::DigitsMlp>(5, 8, nullptr, 3));
  }

  // Dropout after each hidden layer: each replay draws the keys of the masks eager would have drawn, so two keys'
  // blocks and six Adam updates' scalars: eight blocks.
  static void dropout_case() {
    std::string plan;
    const Trace c = compiled_run<DropMlp>(5, 8, &plan);
    expect_same(eager_run<DropMlp>(5, 8), c);
    EXPECT_NE(plan.find("8 per-step scalar blocks"), std::string::npos) << plan;
  }

  // A step that also returns state as it was before its update (the last layer's bias, read before Adam steps):
  // the plan's copy of that result must be the value the step read, not the storage the update rewrote, as eager.
  // device_plan: whether Cap's backend replays through a device plan (the CPU's tape replays op by op).
  static void returns_state_as_it_was_case(bool device_plan = true) {
    EXPECT_EQ(losses_and_state_as_read<Cap>(device_plan), losses_and_state_as_read<Eager>(device_plan));
  }
  // Five steps on AD (compiled unless it is Eager) returning the loss and the bias as the step read it.
  template <class AD>
  static std::vector<std::vector<float>> losses_and_state_as_read(bool device_plan) {
    seed(42);
    auto model = tools::DigitsMlp<AD>::init();
    Adam<AD> adam;
    const auto body = [&](double lr, const Tensor<AD, 2>& x, const Tensor<AD, 1, Int>& y) {
      const Tensor<AD, 1> before = model.fc3.bias->val();
      return std::make_tuple(train_step(model, adam, lr, x, y), before);
    };
    std::vector<std::vector<float>> seen;
    const auto record = [&](const auto& r) {
      seen.push_back(std::get<1>(r).into_data().template to_vec<float>());
      seen.push_back({scalar(std::get<0>(r))});
    };
    if constexpr (std::is_same_v<AD, Eager>) {
      for (int i = 0; i < 5; ++i) record(body(lr_at(i), xs<AD>(batch(i, 8)), ys<AD>(batch(i, 8))));
    } else {
      auto step = compile<AD>(body, model, adam);
      for (int i = 0; i < 5; ++i) record(step(lr_at(i), xs<AD>(batch(i, 8)), ys<AD>(batch(i, 8))));
      EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
      EXPECT_EQ(step.plan_description() != "", device_plan) << step.plan_reason();
    }
    return seen;
  }

  static void decay_cases() {
    decay_case<AdamW>(AdamWConfig{0.9, 0.999, 1e-8, 0.05});
    decay_case<Adam>(AdamConfig{0.9, 0.999, 1e-8, 0.1});
  }

  // The decays' variants of the fused update inside plans: AdamW's decoupled decay (its factor 1 - lr * wd follows
  // the schedule through the scalar block) and Adam's L2 term.
  template <template <class> class Opt, class Config>
  static void decay_case(const Config& config) {
    Trace want, got;
    {
      seed(42);
      auto model = tools::DigitsMlp<Eager>::init();
      Opt<Eager> opt(config);
      want.losses = losses_of<Eager>(
          5, 8, [&](int i, const auto& x, const auto& y) { return train_step(model, opt, lr_at(i), x, y); });
      want.params = params(model);
    }
    seed(42);
    auto model = tools::DigitsMlp<Cap>::init();
    Opt<Cap> opt(config);
    auto step = compile_train_step<Cap>(model, opt);
    got.losses = losses_of<Cap>(5, 8, [&](int i, const auto& x, const auto& y) { return step(lr_at(i), x, y); });
    got.params = params(model);
    EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
    EXPECT_NE(step.plan_description(), "") << step.plan_reason();
    expect_same(want, got);
  }

  // Input noise drawn from a normal distribution: drawn on the host and uploaded, so a plan would repeat it. The plan
  // is declined with the reason (`declined`: part of plan_reason()), and the tape's replays redraw it, as eager
  // steps do.
  static void host_noise_declines(const std::string& declined) {
    const auto noisy = [](auto& model, auto& adam, double lr, const auto& x, const auto& y) {
      using AD = typename std::decay_t<decltype(x)>::Backend_;
      const auto xn = x + Tensor<AD, 2>::random({x.dim(0), x.dim(1)}, Normal{0.0, 0.1});
      return train_step(model, adam, lr, xn, y);
    };
    seed(42);
    auto em = tools::DigitsMlp<Eager>::init();
    Adam<Eager> eadam;
    const std::vector<float> want = losses_of<Eager>(
        4, 8, [&](int i, const auto& x, const auto& y) { return noisy(em, eadam, lr_at(i), x, y); });
    seed(42);
    auto model = tools::DigitsMlp<Cap>::init();
    Adam<Cap> adam;
    auto step = compile<Cap>([&](double lr, const Tensor<Cap, 2>& x,
                                 const Tensor<Cap, 1, Int>& y) { return noisy(model, adam, lr, x, y); },
                             model, adam);
    const std::vector<float> losses =
        losses_of<Cap>(4, 8, [&](int i, const auto& x, const auto& y) { return step(lr_at(i), x, y); });
    EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
    EXPECT_EQ(step.plan_description(), "");
    EXPECT_NE(step.plan_reason().find(declined), std::string::npos) << step.plan_reason();
    EXPECT_EQ(losses, want);
  }

  // A bad target inside a device plan: the plan's deferred check flags it, and the next call reports it (the bad
  // value and its place, as the eager step's gather names them) before the optimizers count a step.
  static void bad_target_reported() {
    seed(42);
    auto model = tools::DigitsMlp<Cap>::init();
    Adam<Cap> adam;
    auto step = compile_train_step<Cap>(model, adam);
    const auto x = [](int i) { return xs<Cap>(batch(i, 4)); };
    const auto y = [](std::vector<int64_t> v) { return Tensor<Cap, 1, Int>::from_values(v, {4}); };
    for (int i = 0; i < 3; ++i) (void)step(1e-3, x(i), y({1, 2, 3, 4}));
    ASSERT_NE(step.plan_description(), "");
    (void)step(1e-3, x(3), y({1, 2, 10, 4}));  // class 10 of 10: the plan's check flags it on the device
    std::vector<int64_t> counts;
    visit_params(model, [&](const std::string&, const auto& p) { counts.push_back(adam.step_count(p.id())); });
    // The bad value and its place, as the eager step's gather names them.
    try {
      (void)step(1e-3, x(4), y({1, 2, 3, 4}));
      ADD_FAILURE() << "no IndexError";
    } catch (const IndexError& e) {
      EXPECT_NE(std::string(e.what()).find("index 10 out of range for dim 1 of size 10"), std::string::npos)
          << e.what();
    }
    // The call that reported it ran nothing: the optimizer did not count a step.
    visit_params(model,
                 [&](const std::string&, const auto& p) { EXPECT_EQ(adam.step_count(p.id()), counts.front()); });
    EXPECT_EQ(counts.front(), 4);
    (void)step(1e-3, x(5), y({1, 2, 3, 4}));  // and the next good batch replays
    EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
  }
};

}  // namespace ember::test
