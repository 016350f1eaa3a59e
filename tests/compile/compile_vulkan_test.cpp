// ember::compile on Vulkan (issue 14; backends/vulkan/compiled_step_plan.cpp): the digits MLP's Adam step captured
// once, recorded into a vk::Plan and replayed as one command buffer, against the same steps run eagerly on
// Autodiff<Vulkan> (lavapipe in CI, validation on through tests/support/vulkan_main.cpp). The replays run the same
// shaders on the same values, so losses and params are equal bit for bit. Also: the lr schedule and the bias
// corrections reaching the plan's per-step scalar blocks, AdamW's and Adam's L2 decay, Fusion's chains inside a plan, a module replaced between steps being read, dropout's
// masks redrawn per replay from ember's generator, a random draw the device cannot make declining the plan (the
// tape replays, and plan_reason() says why), and a bad target reported by the plan's deferred check.
#include "engine/compile/compile.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/vulkan/compiled_step.hpp"
#include "backends/vulkan/context.hpp"
#include "backends/vulkan/interop.hpp"
#include "backends/vulkan/memory.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "engine/ember.hpp"
#include "engine/nn/dropout.hpp"
#include "engine/optim/optim.hpp"
#include "tools/ember/models.hpp"

namespace ember::test {
namespace {

using Eager = Autodiff<Vulkan>;
using Cap = Autodiff<Capture<Vulkan>>;

template <Backend B>
struct DropMlp {
  BOOST_HANA_DEFINE_STRUCT(DropMlp, (nn::Linear<B>, fc1), (nn::Linear<B>, fc2), (nn::Dropout, drop));
  static DropMlp init() {
    DropMlp m;
    m.fc1 = nn::LinearConfig{64, 32}.init<B>();
    m.fc2 = nn::LinearConfig{32, 10}.init<B>();
    m.drop = nn::DropoutConfig{0.25}.init();
    return m;
  }
  Tensor<B, 2> forward(const Tensor<B, 2>& x) const { return fc2.forward(drop.forward(fc1.forward(x).relu())); }
};

struct Batch {
  TensorData x, y;
};
Batch batch(int i, int64_t n) {
  Rng rng(300 + static_cast<uint64_t>(i));
  std::vector<double> x(static_cast<std::size_t>(n * 64)), y(static_cast<std::size_t>(n));
  for (auto& v : x) v = rng.uniform();
  for (auto& v : y) v = static_cast<double>(static_cast<int64_t>(rng.uniform() * 10));
  return {TensorData::from_vec<double>(x, Shape{n, 64}), TensorData::from_vec<double>(y, Shape{n})};
}
double lr_at(int i) { return 1e-2 * std::pow(0.8, i); }

template <class M>
std::vector<std::vector<float>> params(const M& m) {
  std::vector<std::vector<float>> out;
  visit_params(m,
               [&](const std::string&, const auto& p) { out.push_back(p.val().into_data().template to_vec<float>()); });
  return out;
}
float scalar(const auto& t) { return t.into_data().template to_vec<float>()[0]; }

template <class AD, class M>
Tensor<AD, 1> train_step(M& model, Adam<AD>& adam, double lr, const Tensor<AD, 2>& x, const Tensor<AD, 1, Int>& y) {
  const auto loss = nn::cross_entropy(model.forward(x), y);
  model = adam.step(lr, std::move(model), GradientsParams<AD>::from_grads(loss.backward(), model));
  return loss;
}

struct Trace {
  std::vector<float> losses;
  std::vector<std::vector<float>> params;
};

// The caller replacing its module between steps (a checkpoint loaded): the params halved, in new tensors.
template <class M>
M halved(M model) {
  return map_params(std::move(model), [](const std::string&, auto p) { return p.with_value((p.val() * 0.5).detach()); });
}

template <template <class> class Model>
Trace eager_run(int steps, int64_t n, int replace_at = -1) {
  seed(42);
  auto model = Model<Eager>::init();
  Adam<Eager> adam;
  Trace r;
  for (int i = 0; i < steps; ++i) {
    if (i == replace_at) model = halved(std::move(model));
    const Batch b = batch(i, n);
    r.losses.push_back(scalar(train_step(model, adam, lr_at(i), Tensor<Eager, 2>::from_data(b.x),
                                         Tensor<Eager, 1, Int>::from_data(b.y))));
  }
  r.params = params(model);
  return r;
}

TEST(CompileVulkan, DigitsMlpAdamReplaysAsOnePlanBitExact) {
  const int steps = 7;
  const Trace e = eager_run<tools::DigitsMlp>(steps, 16);
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  Adam<Cap> adam;
  auto step = compile<Cap>([&](double lr, const Tensor<Cap, 2>& x,
                               const Tensor<Cap, 1, Int>& y) { return train_step(model, adam, lr, x, y); },
                           model, adam);
  std::vector<float> losses;
  std::vector<CompiledCall> calls;
  std::string plan;
  for (int i = 0; i < steps; ++i) {
    const Batch b = batch(i, 16);
    losses.push_back(scalar(step(lr_at(i), Tensor<Cap, 2>::from_data(b.x), Tensor<Cap, 1, Int>::from_data(b.y))));
    calls.push_back(step.last_call());
    if (calls.back() == CompiledCall::Captured) {
      plan = step.plan_description();
      EXPECT_EQ(step.plan_reason(), "");
    }
  }
  EXPECT_EQ(calls[0], CompiledCall::Warmup);
  EXPECT_EQ(calls[1], CompiledCall::Captured);
  for (int i = 2; i < steps; ++i) EXPECT_EQ(calls[static_cast<std::size_t>(i)], CompiledCall::Replayed) << i;
  // One plan: three layers' forward, backward and six Adam updates (one per-step scalar block each).
  EXPECT_NE(plan.find("vulkan plan:"), std::string::npos) << plan;
  EXPECT_NE(plan.find("6 per-step scalar blocks"), std::string::npos) << plan;
  EXPECT_EQ(losses, e.losses);
  EXPECT_EQ(params(model), e.params);
  std::printf("%s\n", plan.c_str());
  EXPECT_NE(losses[2], losses[6]);  // the replays trained (a frozen lr or step count would change these)
  // The optimizer's step counts followed the replays (its state() record is right).
  visit_params(model, [&](const std::string&, const auto& p) { EXPECT_EQ(adam.step_count(p.id()), steps); });
}

// Fusion under the capture: each chain Fusion materializes is one tape op, so one dispatch of its generated shader
// in the plan (fewer dispatches than the plain stack's plan).
TEST(CompileVulkan, FusedChainsReplayInsideThePlan) {
  using FusedCap = Autodiff<Fusion<Capture<Vulkan>>>;
  const int steps = 5;
  const Trace e = eager_run<tools::DigitsMlp>(steps, 16);
  seed(42);
  auto model = tools::DigitsMlp<FusedCap>::init();
  Adam<FusedCap> adam;
  auto step = compile<FusedCap>([&](double lr, const Tensor<FusedCap, 2>& x, const Tensor<FusedCap, 1, Int>& y) {
    return train_step(model, adam, lr, x, y);
  }, model, adam);
  std::vector<float> losses;
  std::string plan;
  for (int i = 0; i < steps; ++i) {
    const Batch b = batch(i, 16);
    losses.push_back(scalar(step(lr_at(i), Tensor<FusedCap, 2>::from_data(b.x),
                                 Tensor<FusedCap, 1, Int>::from_data(b.y))));
    if (step.last_call() == CompiledCall::Captured) plan = step.plan_description();
  }
  EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
  EXPECT_NE(plan.find("vulkan plan:"), std::string::npos) << step.plan_reason();
  std::printf("%s\n", plan.c_str());
  EXPECT_EQ(losses, e.losses);
  EXPECT_EQ(params(model), e.params);
}

// The decays' variants of the fused update inside plans: AdamW's decoupled decay (its factor 1 - lr * wd follows
// the schedule through the scalar block) and Adam's L2 term.
template <class Opt, class EagerOpt>
void decay_case() {
  const int steps = 5;
  std::vector<float> want;
  std::vector<std::vector<float>> want_params;
  {
    seed(42);
    auto model = tools::DigitsMlp<Eager>::init();
    EagerOpt opt = EagerOpt::make();
    for (int i = 0; i < steps; ++i) {
      const Batch b = batch(i, 8);
      const auto loss = nn::cross_entropy(model.forward(Tensor<Eager, 2>::from_data(b.x)),
                                          Tensor<Eager, 1, Int>::from_data(b.y));
      model = opt.opt.step(lr_at(i), std::move(model), GradientsParams<Eager>::from_grads(loss.backward(), model));
      want.push_back(scalar(loss));
    }
    want_params = params(model);
  }
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  Opt opt = Opt::make();
  auto step = compile<Cap>([&](double lr, const Tensor<Cap, 2>& x, const Tensor<Cap, 1, Int>& y) {
    const auto loss = nn::cross_entropy(model.forward(x), y);
    model = opt.opt.step(lr, std::move(model), GradientsParams<Cap>::from_grads(loss.backward(), model));
    return loss;
  }, model, opt.opt);
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) {
    const Batch b = batch(i, 8);
    losses.push_back(scalar(step(lr_at(i), Tensor<Cap, 2>::from_data(b.x), Tensor<Cap, 1, Int>::from_data(b.y))));
  }
  EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
  EXPECT_NE(step.plan_description(), "") << step.plan_reason();
  EXPECT_EQ(losses, want);
  EXPECT_EQ(params(model), want_params);
}
template <class AD>
struct AdamWOpt {
  AdamW<AD> opt;
  static AdamWOpt make() { return {AdamW<AD>(AdamWConfig{0.9, 0.999, 1e-8, 0.05})}; }
};
template <class AD>
struct AdamL2Opt {
  Adam<AD> opt;
  static AdamL2Opt make() { return {Adam<AD>(AdamConfig{0.9, 0.999, 1e-8, 0.1})}; }
};
TEST(CompileVulkan, AdamWAndL2DecayReplayBitExact) {
  decay_case<AdamWOpt<Cap>, AdamWOpt<Eager>>();
  decay_case<AdamL2Opt<Cap>, AdamL2Opt<Eager>>();
}

TEST(CompileVulkan, ReplacedModuleIsReadByThePlan) {
  const Trace e = eager_run<tools::DigitsMlp>(5, 8, 3);
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  Adam<Cap> adam;
  auto step = compile<Cap>([&](double lr, const Tensor<Cap, 2>& x,
                               const Tensor<Cap, 1, Int>& y) { return train_step(model, adam, lr, x, y); },
                           model, adam);
  std::vector<float> losses;
  for (int i = 0; i < 5; ++i) {
    const Batch b = batch(i, 8);
    if (i == 3) model = halved(std::move(model));  // after the capture: the plan must read these values
    losses.push_back(scalar(step(lr_at(i), Tensor<Cap, 2>::from_data(b.x), Tensor<Cap, 1, Int>::from_data(b.y))));
  }
  EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
  EXPECT_EQ(losses, e.losses);
  EXPECT_EQ(params(model), e.params);
}

TEST(CompileVulkan, DropoutMasksAreRedrawnByEachReplay) {
  const int steps = 5;
  const Trace e = eager_run<DropMlp>(steps, 8);
  seed(42);
  auto model = DropMlp<Cap>::init();
  Adam<Cap> adam;
  auto step = compile<Cap>([&](double lr, const Tensor<Cap, 2>& x,
                               const Tensor<Cap, 1, Int>& y) { return train_step(model, adam, lr, x, y); },
                           model, adam);
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) {
    const Batch b = batch(i, 8);
    losses.push_back(scalar(step(lr_at(i), Tensor<Cap, 2>::from_data(b.x), Tensor<Cap, 1, Int>::from_data(b.y))));
  }
  EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
  // One mask's key (dropout's draw) and four Adam updates' scalars: five blocks the replay rewrites.
  EXPECT_NE(step.plan_description().find("5 per-step scalar blocks"), std::string::npos) << step.plan_description();
  EXPECT_EQ(losses, e.losses);  // each replay draws the key of the mask eager would have drawn
  EXPECT_EQ(params(model), e.params);
}

// A host that trains in its own frames: the captured plan recorded once into the host's command buffer, bound to
// its buffers (here Ember tensors' buffers stand in for them), submitted three times with prepare_plan before each;
// then Ember's own replay goes on from the state those submits left. Against eager steps on the same batches.
TEST(CompileVulkan, HostSubmitsThePlanFromItsOwnCommandBuffer) {
  const int host_from = 2, host_steps = 3, steps = 6;
  const auto batch_of = [&](int i) { return batch(i >= host_from && i < host_from + host_steps ? host_from : i, 8); };
  std::vector<float> want;
  std::vector<std::vector<float>> want_params;
  {
    seed(42);
    auto model = tools::DigitsMlp<Eager>::init();
    Adam<Eager> adam;
    for (int i = 0; i < steps; ++i) {
      const Batch b = batch_of(i);
      want.push_back(scalar(train_step(model, adam, lr_at(i), Tensor<Eager, 2>::from_data(b.x),
                                       Tensor<Eager, 1, Int>::from_data(b.y))));
    }
    want_params = params(model);
  }
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  Adam<Cap> adam;
  auto step = compile<Cap>([&](double lr, const Tensor<Cap, 2>& x,
                               const Tensor<Cap, 1, Int>& y) { return train_step(model, adam, lr, x, y); },
                           model, adam);
  const auto ember_step = [&](int i) {
    const Batch b = batch_of(i);
    return scalar(step(lr_at(i), Tensor<Cap, 2>::from_data(b.x), Tensor<Cap, 1, Int>::from_data(b.y)));
  };
  std::vector<float> losses{ember_step(0), ember_step(1)};
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
    losses.push_back(scalar(hloss));
  }
  fn.DestroyFence(c->device(), fence, nullptr);
  fn.DestroyCommandPool(c->device(), pool, nullptr);
  for (int i = host_from + host_steps; i < steps; ++i) losses.push_back(ember_step(i));
  EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
  EXPECT_EQ(losses, want);
  EXPECT_EQ(params(model), want_params);
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
  std::vector<float> want;
  {
    seed(42);
    auto model = tools::DigitsMlp<Eager>::init();
    Adam<Eager> adam;
    for (int i = 0; i < 4; ++i) {
      const Batch b = batch(i, 8);
      want.push_back(scalar(noisy(model, adam, lr_at(i), Tensor<Eager, 2>::from_data(b.x),
                                  Tensor<Eager, 1, Int>::from_data(b.y))));
    }
  }
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  Adam<Cap> adam;
  auto step = compile<Cap>([&](double lr, const Tensor<Cap, 2>& x,
                               const Tensor<Cap, 1, Int>& y) { return noisy(model, adam, lr, x, y); },
                           model, adam);
  std::vector<float> losses;
  for (int i = 0; i < 4; ++i) {
    const Batch b = batch(i, 8);
    losses.push_back(scalar(step(lr_at(i), Tensor<Cap, 2>::from_data(b.x), Tensor<Cap, 1, Int>::from_data(b.y))));
  }
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
  const auto x = [](int i) { return Tensor<Cap, 2>::from_data(batch(i, 4).x); };
  const auto y = [](std::vector<int64_t> v) { return Tensor<Cap, 1, Int>::from_values(v, {4}); };
  for (int i = 0; i < 3; ++i) (void)step(1e-3, x(i), y({1, 2, 3, 4}));
  ASSERT_NE(step.plan_description(), "");
  (void)step(1e-3, x(3), y({1, 2, 10, 4}));  // class 10 of 10: the plan's check flags it on the device
  std::vector<int64_t> counts;
  visit_params(model, [&](const std::string&, const auto& p) { counts.push_back(adam.step_count(p.id())); });
  // The bad value and its place, as the eager step's host check would name them.
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

}  // namespace
}  // namespace ember::test
