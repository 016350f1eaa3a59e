// ember::compile on CUDA (issue 14; backends/cuda/compiled_step_graph.cpp): the digits MLP's Adam step captured
// once, captured again into a CUDA graph and replayed by one launch, against the same steps run eagerly on
// Autodiff<Cuda>. The graph runs the eager kernels on the same values, so losses and params are equal bit for bit.
// The cases are the Vulkan plan's (device_plan_runs.hpp): the lr schedule and bias corrections reaching the graph's
// per-step words, AdamW's and Adam's L2 decay, Fusion's generated kernels inside a graph, a module replaced between
// steps, dropout's masks redrawn per replay, host-drawn noise declining the graph, a bad target reported by the
// graph's deferred check; and what the graph holds. Skipped (tests/support/cuda_main.cpp) without a CUDA device.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "backends/cuda/cuda_backend.hpp"
#include "engine/compile/compile.hpp"
#include "tests/compile/compile_test_util.hpp"
#include "tests/compile/device_plan_runs.hpp"
#include "tools/ember/models.hpp"

namespace ember::test {
namespace {

using Eager = Autodiff<Cuda>;
using Cap = Autodiff<Capture<Cuda>>;
using Runs = DevicePlanRuns<Eager, Cap>;
using Trace = Runs::Trace;

// One graph: the three layers' forward and backward, six Adam updates, and the cross entropy's target check
// deferred into it.
TEST(CompileCuda, DigitsMlpAdamReplaysAsOneGraphBitExact) {
  const std::string plan = Runs::digits_case(7, 16);
  EXPECT_NE(plan.find("cuda graph:"), std::string::npos) << plan;
  EXPECT_NE(plan.find("1 checks"), std::string::npos) << plan;
}

// Fusion under the capture: each chain Fusion materializes is one tape op, so one launch of its NVRTC kernel in
// the graph (which holds the kernel's library).
TEST(CompileCuda, FusedChainsReplayInsideTheGraph) {
  EXPECT_NE(Runs::digits_case<Autodiff<Fusion<Capture<Cuda>>>>(5, 16).find("cuda graph:"), std::string::npos);
}

TEST(CompileCuda, ReplacedModuleIsReadByTheGraph) { Runs::replaced_module_case(); }

TEST(CompileCuda, DropoutMasksAreRedrawnByEachReplay) { Runs::dropout_case(); }

TEST(CompileCuda, AdamWAndL2DecayReplayBitExact) { Runs::decay_cases(); }

TEST(CompileCuda, StateReturnedAsItWasIsCopiedBeforeTheUpdate) { Runs::returns_state_as_it_was_case(); }

// Normal noise is drawn on the host and uploaded: an upload cannot be part of a graph (it would repeat its values).
TEST(CompileCuda, HostDrawnNoiseDeclinesTheGraph) { Runs::host_noise_declines("cannot be part of a CUDA graph"); }

TEST(CompileCuda, BadTargetIsReportedByTheNextReplay) { Runs::bad_target_reported(); }

// The graph's memory is its own: blocks the capture allocated are not handed to other tensors while it exists, so
// eager work between replays cannot overwrite what the next replay reads. An eager step between two replays.
TEST(CompileCuda, EagerWorkBetweenReplaysLeavesTheGraphsMemoryAlone) {
  // Params drawn now (they are lazy), each side from the same seed.
  const auto drawn = [](auto m) {
    visit_params(m, [](const std::string&, const auto& p) { (void)p.val(); });
    return m;
  };
  seed(42);
  auto model = drawn(tools::DigitsMlp<Cap>::init());
  Adam<Cap> adam;
  auto step = compile_train_step<Cap>(model, adam);
  seed(42);
  auto em = drawn(tools::DigitsMlp<Eager>::init());
  Adam<Eager> eadam;
  for (int i = 0; i < 6; ++i) {
    const Batch b = batch(i, 16);
    const float got = scalar(step(Runs::lr_at(i), xs<Cap>(b), ys<Cap>(b)));
    const float want = scalar(train_step(em, eadam, Runs::lr_at(i), xs<Eager>(b), ys<Eager>(b)));
    EXPECT_EQ(got, want) << i;
    // Unrelated eager tensors of the step's sizes, allocated and written between replays.
    for (int k = 0; k < 8; ++k) (void)scalar((Tensor<Cuda, 2>::ones({16, 256}) * 3.0).sum());
  }
  EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
  EXPECT_EQ(params(model), params(em));
}

// Only Ember's replay launches a graph (it writes the per-step words itself): prepare_plan, the Vulkan host's call,
// refuses before the optimizers count a step.
TEST(CompileCuda, PreparePlanIsRefusedWithoutCountingAStep) {
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  Adam<Cap> adam;
  auto step = compile_train_step<Cap>(model, adam);
  for (int i = 0; i < 3; ++i) (void)step(1e-3, xs<Cap>(batch(i, 4)), ys<Cap>(batch(i, 4)));
  ASSERT_NE(step.plan_description().find("cuda graph:"), std::string::npos) << step.plan_reason();
  EXPECT_THROW(step.prepare_plan(1e-3), ArgumentError);
  visit_params(model, [&](const std::string&, const auto& p) { EXPECT_EQ(adam.step_count(p.id()), 3); });
}

}  // namespace
}  // namespace ember::test
