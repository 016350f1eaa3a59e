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
#include "tests/compile/device_plan_runs.hpp"
#include "tools/ember/models.hpp"

namespace ember::test {
namespace {

using Eager = Autodiff<Vulkan>;
using Cap = Autodiff<Capture<Vulkan>>;

using Runs = DevicePlanRuns<Eager, Cap>;
using Trace = Runs::Trace;

TEST(CompileVulkan, DigitsMlpAdamReplaysAsOnePlanBitExact) {
  EXPECT_NE(Runs::digits_case(7, 16).find("vulkan plan:"), std::string::npos);
}

// Fusion under the capture: each chain Fusion materializes is one tape op, so one dispatch of its generated shader
// in the plan (fewer dispatches than the plain stack's plan).
TEST(CompileVulkan, FusedChainsReplayInsideThePlan) {
  EXPECT_NE(Runs::digits_case<Autodiff<Fusion<Capture<Vulkan>>>>(5, 16).find("vulkan plan:"), std::string::npos);
}

TEST(CompileVulkan, ReplacedModuleIsReadByThePlan) { Runs::replaced_module_case(); }

TEST(CompileVulkan, DropoutMasksAreRedrawnByEachReplay) { Runs::dropout_case(); }

TEST(CompileVulkan, AdamWAndL2DecayReplayBitExact) { Runs::decay_cases(); }

TEST(CompileVulkan, StateReturnedAsItWasIsCopiedBeforeTheUpdate) { Runs::returns_state_as_it_was_case(); }

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
      want.losses.push_back(scalar(train_step(model, adam, Runs::lr_at(i), xs<Eager>(b), ys<Eager>(b))));
    }
    want.params = params(model);
  }
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  Adam<Cap> adam;
  auto step = compile_train_step<Cap>(model, adam);
  const auto ember_step = [&](int i) {
    return scalar(step(Runs::lr_at(i), xs<Cap>(batch_of(i)), ys<Cap>(batch_of(i))));
  };
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
    step.prepare_plan(Runs::lr_at(i));
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
  Runs::expect_same(want, got);
  visit_params(model, [&](const std::string&, const auto& p) { EXPECT_EQ(adam.step_count(p.id()), steps); });
}

// Input noise drawn from a normal distribution: drawn on the host and uploaded once, so a plan would repeat it.
TEST(CompileVulkan, HostDrawnNoiseDeclinesThePlan) { Runs::host_noise_declines("other than a Bernoulli mask"); }

TEST(CompileVulkan, BadTargetIsReportedByTheNextReplay) { Runs::bad_target_reported(); }

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
