// ember::compile on Vulkan (issue 14; backends/vulkan/compiled_step_plan.cpp): the digits MLP's Adam step captured
// once, recorded into a vk::Plan and replayed as one command buffer, against the same steps run eagerly on
// Autodiff<Vulkan> (lavapipe in CI, validation on through tests/support/vulkan_main.cpp). The replays run the same
// shaders on the same values, so losses and params are equal bit for bit. Also: the lr schedule and the bias
// corrections reaching the plan's per-step scalar blocks, AdamW's and Adam's L2 decay, Fusion's chains inside a plan,
// a module replaced between steps being read, dropout's masks redrawn per replay from ember's generator, a random
// draw the device cannot make declining the plan (the tape replays, and plan_reason() says why), a bad target
// reported by the plan's deferred check, the plan submitted from the host's own command buffer, and how often the
// eager step waits for the device.
#include "engine/compile/compile.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "backends/vulkan/compiled_step.hpp"
#include "backends/vulkan/context.hpp"
#include "backends/vulkan/memory.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "tests/compile/compile_test_util.hpp"
#include "tools/ember/models.hpp"

namespace ember::test {
namespace {

using Eager = Autodiff<Vulkan>;
using Cap = Autodiff<Capture<Vulkan>>;

double lr_at(int i) { return 1e-2 * std::pow(0.8, i); }

// The caller replacing its module between steps (a checkpoint loaded): the params halved, in new tensors.
template <class M>
M halved(M model) {
  return map_params(std::move(model), [](const std::string&, auto p) { return p.with_value((p.val() * 0.5).detach()); });
}

// Steps 0 .. steps-1 of `one` (a step of backend AD taking the step index, the batch and its labels) on batch(i, n)
// after before(i): the losses.
template <class AD, class F>
std::vector<float> losses_of(int steps, int64_t n, F&& one, const std::function<void(int)>& before = {}) {
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

// `steps` eager Adam steps of Model on Autodiff<Vulkan> (the module halved before step replace_at).
template <template <class> class Model>
Trace eager_run(int steps, int64_t n, int replace_at = -1) {
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

// The same steps compiled on AD (a Capture stack over Vulkan); `plan` receives the plan the capture built.
template <template <class> class Model, class AD = Cap>
Trace compiled_run(int steps, int64_t n, std::string* plan = nullptr, int replace_at = -1) {
  seed(42);
  auto model = Model<AD>::init();
  Adam<AD> adam;
  auto step = compile<AD>([&](double lr, const Tensor<AD, 2>& x,
                              const Tensor<AD, 1, Int>& y) { return train_step(model, adam, lr, x, y); },
                          model, adam);
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

void expect_same(const Trace& eager, const Trace& compiled) {
  EXPECT_EQ(compiled.losses, eager.losses);
  EXPECT_EQ(compiled.params, eager.params);
}

TEST(CompileVulkan, DigitsMlpAdamReplaysAsOnePlanBitExact) {
  std::string plan;
  const Trace c = compiled_run<tools::DigitsMlp>(7, 16, &plan);
  expect_same(eager_run<tools::DigitsMlp>(7, 16), c);
  std::printf("%s\n", plan.c_str());
  // One plan: three layers' forward, backward and six Adam updates (one per-step scalar block each).
  EXPECT_NE(plan.find("vulkan plan:"), std::string::npos) << plan;
  EXPECT_NE(plan.find("6 per-step scalar blocks"), std::string::npos) << plan;
  EXPECT_NE(c.losses[2], c.losses[6]);  // the replays trained (a frozen lr or step count would change these)
}

// Fusion under the capture: each chain Fusion materializes is one tape op, so one dispatch of its generated shader
// in the plan (fewer dispatches than the plain stack's plan).
TEST(CompileVulkan, FusedChainsReplayInsideThePlan) {
  std::string plan;
  const Trace c = compiled_run<tools::DigitsMlp, Autodiff<Fusion<Capture<Vulkan>>>>(5, 16, &plan);
  expect_same(eager_run<tools::DigitsMlp>(5, 16), c);
  std::printf("%s\n", plan.c_str());
  EXPECT_NE(plan.find("vulkan plan:"), std::string::npos) << plan;
}

TEST(CompileVulkan, ReplacedModuleIsReadByThePlan) {
  expect_same(eager_run<tools::DigitsMlp>(5, 8, 3), compiled_run<tools::DigitsMlp>(5, 8, nullptr, 3));
}

TEST(CompileVulkan, DropoutMasksAreRedrawnByEachReplay) {
  std::string plan;
  const Trace c = compiled_run<DropMlp>(5, 8, &plan);
  expect_same(eager_run<DropMlp>(5, 8), c);  // each replay draws the keys of the masks eager would have drawn
  // Two masks' keys (dropout after each hidden layer) and six Adam updates' scalars: eight blocks.
  EXPECT_NE(plan.find("8 per-step scalar blocks"), std::string::npos) << plan;
}

// The decays' variants of the fused update inside plans: AdamW's decoupled decay (its factor 1 - lr * wd follows
// the schedule through the scalar block) and Adam's L2 term.
template <template <class> class Opt, class Config>
void decay_case(const Config& config) {
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
  auto step = compile<Cap>([&](double lr, const Tensor<Cap, 2>& x,
                               const Tensor<Cap, 1, Int>& y) { return train_step(model, opt, lr, x, y); },
                           model, opt);
  got.losses = losses_of<Cap>(5, 8, [&](int i, const auto& x, const auto& y) { return step(lr_at(i), x, y); });
  got.params = params(model);
  EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
  EXPECT_NE(step.plan_description(), "") << step.plan_reason();
  expect_same(want, got);
}
TEST(CompileVulkan, AdamWAndL2DecayReplayBitExact) {
  decay_case<AdamW>(AdamWConfig{0.9, 0.999, 1e-8, 0.05});
  decay_case<Adam>(AdamConfig{0.9, 0.999, 1e-8, 0.1});
}

// A host that trains in its own frames: the captured plan recorded once into the host's command buffer, bound to
// its buffers (here Ember tensors' buffers stand in for them), submitted three times with prepare_plan before each;
// then Ember's own replay goes on from the state those submits left. Against eager steps on the same batches.
TEST(CompileVulkan, HostSubmitsThePlanFromItsOwnCommandBuffer) {
  const int host_from = 2, host_steps = 3, steps = 6;
  const auto batch_of = [&](int i) { return batch(i >= host_from && i < host_from + host_steps ? host_from : i, 8); };
  Trace want;
  {
    seed(42);
    auto model = tools::DigitsMlp<Eager>::init();
    Adam<Eager> adam;
    for (int i = 0; i < steps; ++i) {
      const Batch b = batch_of(i);
      want.losses.push_back(scalar(train_step(model, adam, lr_at(i), xs<Eager>(b), ys<Eager>(b))));
    }
    want.params = params(model);
  }
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  Adam<Cap> adam;
  auto step = compile<Cap>([&](double lr, const Tensor<Cap, 2>& x,
                               const Tensor<Cap, 1, Int>& y) { return train_step(model, adam, lr, x, y); },
                           model, adam);
  const auto ember_step = [&](int i) { return scalar(step(lr_at(i), xs<Cap>(batch_of(i)), ys<Cap>(batch_of(i)))); };
  Trace got;
  got.losses = {ember_step(0), ember_step(1)};
  ASSERT_EQ(step.last_call(), CompiledCall::Captured);
  vk::Plan& plan = vulkan::training_plan(step);
  ASSERT_EQ(plan.inputs(), 2u);
  ASSERT_EQ(plan.outputs(), 1u);

  // The host's buffers: its batch, its labels, where the loss goes.
  const Batch hb = batch_of(host_from);
  const auto hx = Tensor<Vulkan, 2>::from_data(hb.x);
  const auto hy = Tensor<Vulkan, 1, Int>::from_data(hb.y);
  const auto hloss = Tensor<Vulkan, 1>::zeros({1});
  const auto c = vk::default_context();
  c->synchronize();
  plan.bind_input(0, hx.primitive().alloc->buffer(), hx.primitive().alloc->offset());
  plan.bind_input(1, hy.primitive().alloc->buffer(), hy.primitive().alloc->offset());
  plan.bind_output(0, hloss.primitive().alloc->buffer(), hloss.primitive().alloc->offset());
  const auto& fn = c->fn();
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.queueFamilyIndex = c->queue_family();
  VkCommandPool pool = VK_NULL_HANDLE;
  ASSERT_EQ(fn.CreateCommandPool(c->device(), &pi, nullptr, &pool), VK_SUCCESS);
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  ASSERT_EQ(fn.AllocateCommandBuffers(c->device(), &ai, &cb), VK_SUCCESS);
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  ASSERT_EQ(fn.BeginCommandBuffer(cb, &bi), VK_SUCCESS);
  plan.record(cb);  // recorded once, submitted three times
  ASSERT_EQ(fn.EndCommandBuffer(cb), VK_SUCCESS);
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  ASSERT_EQ(fn.CreateFence(c->device(), &fi, nullptr, &fence), VK_SUCCESS);
  for (int i = host_from; i < host_from + host_steps; ++i) {
    step.prepare_plan(lr_at(i));
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    c->with_queue([&](VkQueue q) { EXPECT_EQ(fn.QueueSubmit(q, 1, &si, fence), VK_SUCCESS); });
    ASSERT_EQ(fn.WaitForFences(c->device(), 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
    ASSERT_EQ(fn.ResetFences(c->device(), 1, &fence), VK_SUCCESS);
    got.losses.push_back(scalar(hloss));
  }
  fn.DestroyFence(c->device(), fence, nullptr);
  fn.DestroyCommandPool(c->device(), pool, nullptr);
  for (int i = host_from + host_steps; i < steps; ++i) got.losses.push_back(ember_step(i));
  EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
  got.params = params(model);
  expect_same(want, got);
  visit_params(model, [&](const std::string&, const auto& p) { EXPECT_EQ(adam.step_count(p.id()), steps); });
}

// Input noise drawn from a normal distribution: drawn on the host and uploaded, so a plan would repeat it. The plan
// is declined with the reason, and the tape's replays redraw it, as eager steps do.
TEST(CompileVulkan, HostDrawnNoiseDeclinesThePlan) {
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
  EXPECT_NE(step.plan_reason().find("other than a Bernoulli mask"), std::string::npos) << step.plan_reason();
  EXPECT_EQ(losses, want);
}

TEST(CompileVulkan, BadTargetIsReportedByTheNextReplay) {
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  Adam<Cap> adam;
  auto step = compile<Cap>([&](double lr, const Tensor<Cap, 2>& x,
                               const Tensor<Cap, 1, Int>& y) { return train_step(model, adam, lr, x, y); },
                           model, adam);
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
    EXPECT_NE(std::string(e.what()).find("index 10 out of range for dim 1 of size 10"), std::string::npos) << e.what();
  }
  // The call that reported it ran nothing: the optimizer did not count a step.
  visit_params(model, [&](const std::string&, const auto& p) { EXPECT_EQ(adam.step_count(p.id()), counts.front()); });
  EXPECT_EQ(counts.front(), 4);
  (void)step(1e-3, x(5), y({1, 2, 3, 4}));  // and the next good batch replays
  EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
}

// The eager step Cap's plans are measured against: cross_entropy's targets are range-checked by its gather's own
// index check, with no separate host read of their min and max, and its backward compares them with the class ids
// instead of scattering them (a second check), so the step waits for the device twice: for the gather's verdict and
// for the loss read at the end.
TEST(CompileVulkan, EagerStepWaitsOnlyForItsIndexCheckAndTheLoss) {
  seed(42);
  auto model = tools::DigitsMlp<Eager>::init();
  Adam<Eager> adam;
  auto& stream = vk::default_context()->stream();
  const auto one = [&](int i) {
    const Batch b = batch(i, 8);
    const auto x = xs<Eager>(b);
    const auto y = ys<Eager>(b);
    vk::default_context()->synchronize();  // the batch's upload is not the step's
    const uint64_t before = stream.stats().waits;
    (void)scalar(train_step(model, adam, 1e-3, x, y));
    return stream.stats().waits - before;
  };
  (void)one(0);  // the first step creates Adam's moments
  EXPECT_EQ(one(1), 2u);
  EXPECT_EQ(one(2), 2u);
}

}  // namespace
}  // namespace ember::test
