// ember::compile (engine/compile/): N compiled training steps against N eager ones on one thread, bit for bit (the
// same CPU kernels run): the digits MLP with Adam, with dropout and a changing lr; another batch size and eval mode
// capturing again; the module and optimizer the caller holds carrying the new state; and each fallback giving its
// reason and eager results.
#include "engine/compile/compile.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/ember.hpp"
#include "engine/nn/dropout.hpp"
#include "engine/optim/optim.hpp"
#include "engine/tensor/host_check.hpp"
#include "tests/compile/compile_test_util.hpp"
#include "tests/compile/device_plan_runs.hpp"
#include "tools/ember/lm_model.hpp"
#include "tools/ember/models.hpp"

namespace ember::test {
namespace {

using Eager = Autodiff<Cpu<float>>;
using Cap = Autodiff<Capture<Cpu<float>>>;

// A run of `sizes.size()` steps, eager or compiled: the losses and the final params.
struct Trace {
  std::vector<float> losses;
  std::vector<std::vector<float>> params;
  std::vector<CompiledCall> calls;
  std::vector<std::string> reasons;
  std::size_t ops = 0;  // ops on the last signature's tape
};
double lr_at(int i, bool schedule) { return schedule ? 1e-2 * std::pow(0.8, i) : 1e-3; }

template <template <class> class Model, class EagerB = Eager>
Trace eager_run(const std::vector<int64_t>& sizes, bool schedule, int eval_from = 1 << 30) {
  seed(42);
  auto model = Model<EagerB>::init();
  Adam<EagerB> adam;
  Trace r;
  for (int i = 0; i < static_cast<int>(sizes.size()); ++i) {
    if (i == eval_from) model = set_training(std::move(model), false);
    const Batch b = batch(i, sizes[static_cast<std::size_t>(i)]);
    r.losses.push_back(scalar(train_step(model, adam, lr_at(i, schedule), xs<EagerB>(b), ys<EagerB>(b))));
  }
  r.params = params(model);
  return r;
}

template <template <class> class Model, class CapB = Cap>
Trace compiled_run(const std::vector<int64_t>& sizes, bool schedule, int eval_from = 1 << 30) {
  seed(42);
  auto model = Model<CapB>::init();
  Adam<CapB> adam;
  auto step = compile_train_step<CapB>(model, adam);
  Trace r;
  for (int i = 0; i < static_cast<int>(sizes.size()); ++i) {
    if (i == eval_from) model = set_training(std::move(model), false);
    const Batch b = batch(i, sizes[static_cast<std::size_t>(i)]);
    r.losses.push_back(scalar(step(lr_at(i, schedule), xs<CapB>(b), ys<CapB>(b))));
    r.calls.push_back(step.last_call());
    r.reasons.push_back(step.fallback_reason());
  }
  r.params = params(model);
  r.ops = step.recorded_ops();
  return r;
}

class CompileTest : public ::testing::Test {
 protected:
  void SetUp() override { cpu::set_num_threads(1); }
};

void expect_same(const Trace& eager, const Trace& compiled) {
  ASSERT_EQ(eager.losses.size(), compiled.losses.size());
  for (std::size_t i = 0; i < eager.losses.size(); ++i) EXPECT_EQ(eager.losses[i], compiled.losses[i]) << "step " << i;
  ASSERT_EQ(eager.params.size(), compiled.params.size());
  for (std::size_t i = 0; i < eager.params.size(); ++i) EXPECT_EQ(eager.params[i], compiled.params[i]) << "param " << i;
}

TEST_F(CompileTest, DigitsMlpAdamReplaysBitExact) {
  const std::vector<int64_t> sizes(6, 16);
  const Trace e = eager_run<tools::DigitsMlp>(sizes, false);
  const Trace c = compiled_run<tools::DigitsMlp>(sizes, false);
  expect_same(e, c);
  // Adam's first step creates the moments (the state's layout changes): captured again on the second call.
  EXPECT_EQ(c.calls[0], CompiledCall::Warmup);
  EXPECT_EQ(c.calls[1], CompiledCall::Captured);
  for (std::size_t i = 2; i < c.calls.size(); ++i) EXPECT_EQ(c.calls[i], CompiledCall::Replayed) << i;
  // The losses move: the replays really trained (a frozen state would repeat the captured update).
  EXPECT_NE(c.losses[2], c.losses[5]);
}

// No host-scalar argument: the lr is a constant of the step, and only the bias corrections advance per replay.
TEST_F(CompileTest, ConstantLrInsideTheStepReplaysBitExact) {
  const std::vector<int64_t> sizes(5, 16);
  const Trace e = eager_run<tools::DigitsMlp>(sizes, false);
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  Adam<Cap> adam;
  auto step = compile<Cap>([&](const Tensor<Cap, 2>& x,
                               const Tensor<Cap, 1, Int>& y) { return train_step(model, adam, lr_at(0, false), x, y); },
                           model, adam);
  std::vector<float> losses;
  for (int i = 0; i < 5; ++i) losses.push_back(scalar(step(xs<Cap>(batch(i, 16)), ys<Cap>(batch(i, 16)))));
  EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
  EXPECT_EQ(losses, e.losses);
  EXPECT_EQ(params(model), e.params);
}

TEST_F(CompileTest, DropoutAndLrScheduleReplayBitExact) {
  const std::vector<int64_t> sizes(6, 16);
  const Trace e = eager_run<DropMlp>(sizes, true);
  const Trace c = compiled_run<DropMlp>(sizes, true);
  expect_same(e, c);
  for (std::size_t i = 2; i < c.calls.size(); ++i) EXPECT_EQ(c.calls[i], CompiledCall::Replayed) << i;
}

// Capture over Fusion: the tape records Fusion's ops and a replay runs them through Fusion again (chains fused
// when materialized); the fused kernels have the eager ops' bits, so this equals eager Fusion and eager Cpu.
TEST_F(CompileTest, CaptureOverFusionReplaysBitExact) {
  const std::vector<int64_t> sizes(5, 16);
  const Trace e = eager_run<DropMlp, Autodiff<Fusion<Cpu<float>>>>(sizes, true);
  const Trace c = compiled_run<DropMlp, Autodiff<Capture<Fusion<Cpu<float>>>>>(sizes, true);
  expect_same(e, c);
  expect_same(eager_run<DropMlp>(sizes, true), c);
  for (std::size_t i = 2; i < c.calls.size(); ++i) EXPECT_EQ(c.calls[i], CompiledCall::Replayed) << i;
}

// Fusion over Capture: the tape records each fused chain Fusion materializes as one op (B's fused kernel), so a
// replay runs no Fusion node or program building; still the eager bits.
TEST_F(CompileTest, FusedChainsRecordedUnderFusionReplayBitExact) {
  const std::vector<int64_t> sizes(5, 16);
  const Trace e = eager_run<DropMlp, Autodiff<Fusion<Cpu<float>>>>(sizes, true);
  const Trace c = compiled_run<DropMlp, Autodiff<Fusion<Capture<Cpu<float>>>>>(sizes, true);
  expect_same(e, c);
  for (std::size_t i = 2; i < c.calls.size(); ++i) EXPECT_EQ(c.calls[i], CompiledCall::Replayed) << i;
  // The elementwise runs (dropout masks, ReLU and its backward, the loss) became fewer, fused ops.
  EXPECT_LT(c.ops, compiled_run<DropMlp>(sizes, true).ops);
}

// The character transformer's step (embeddings, fused LayerNorm and attention forward and backward, GELU, AdamW):
// Capture forwards the CPU's fused kernels, so the replay has the eager bits.
template <class AD>
Trace lm_run() {
  seed(42);
  auto model = tools::CharTransformer<AD>::init(tools::LmConfig{12, 8, 16, 2, 1});
  (void)params(model);
  AdamW<AD> opt;
  const auto body = [&](double lr, const Tensor<AD, 2, Int>& x, const Tensor<AD, 1, Int>& y) {
    const auto loss = nn::cross_entropy(model.forward(x).reshape(std::array<int64_t, 2>{16, 12}), y);
    model = opt.step(lr, std::move(model), GradientsParams<AD>::from_grads(loss.backward(), model));
    return loss;
  };
  Trace r;
  const auto loop = [&](auto&& call) {
    for (int i = 0; i < 4; ++i) {
      Rng rng(200 + static_cast<uint64_t>(i));
      std::vector<double> ids(32);
      for (auto& v : ids) v = static_cast<double>(static_cast<int64_t>(rng.uniform() * 12));
      const auto x =
          Tensor<AD, 2, Int>::from_data(TensorData::from_vec<double>({ids.begin(), ids.begin() + 16}, {2, 8}));
      const auto y = Tensor<AD, 1, Int>::from_data(TensorData::from_vec<double>({ids.begin() + 16, ids.end()}, {16}));
      r.losses.push_back(scalar(call(2e-3 * (1.0 - 0.1 * i), x, y)));
    }
  };
  if constexpr (std::is_same_v<AD, Eager>) {
    loop(body);
  } else {
    auto step = compile<AD>(body, model, opt);
    loop([&](double lr, const auto& x, const auto& y) {
      auto loss = step(lr, x, y);
      r.calls.push_back(step.last_call());
      r.reasons.push_back(step.fallback_reason());
      return loss;
    });
  }
  r.params = params(model);
  return r;
}

TEST_F(CompileTest, TransformerStepReplaysBitExact) {
  const Trace e = lm_run<Eager>();
  const Trace c = lm_run<Cap>();
  expect_same(e, c);
  EXPECT_EQ(c.calls[3], CompiledCall::Replayed) << c.reasons[3];
}

// Under Fusion a step's result can still be a pending chain when the step returns: it is materialized while the
// capture records, so a replay recomputes it rather than returning the captured value.
TEST_F(CompileTest, PendingResultUnderFusionIsRecorded) {
  using FC = Autodiff<Fusion<Capture<Cpu<float>>>>;
  auto step = compile<FC>([](const Tensor<FC, 2>& x) { return x.mul_scalar(2.0).add_scalar(1.0); });
  for (int i = 0; i < 3; ++i) {
    const Batch b = batch(i, 4);
    const auto want = xs<Eager>(b).mul_scalar(2.0).add_scalar(1.0).into_data().to_vec<float>();
    EXPECT_EQ(step(xs<FC>(b)).into_data().to_vec<float>(), want) << i;
  }
  EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
}

TEST_F(CompileTest, NewBatchSizeAndEvalModeCaptureAgain) {
  // Batch 16 (warm-up, capture, replay), a last batch of 8 (capture), 16 again (replay), then eval mode (capture,
  // replay): dropout off is another signature.
  const std::vector<int64_t> sizes{16, 16, 16, 8, 16, 8, 16, 16};
  const Trace e = eager_run<DropMlp>(sizes, true, 6);
  const Trace c = compiled_run<DropMlp>(sizes, true, 6);
  expect_same(e, c);
  const std::vector<CompiledCall> want{CompiledCall::Warmup,   CompiledCall::Captured, CompiledCall::Replayed,
                                       CompiledCall::Captured, CompiledCall::Replayed, CompiledCall::Replayed,
                                       CompiledCall::Captured, CompiledCall::Replayed};
  EXPECT_EQ(c.calls, want);
}

TEST_F(CompileTest, ReplayedStateIsWhatTheCallerHolds) {
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  Adam<Cap> adam;
  auto step = compile_train_step<Cap>(model, adam);
  for (int i = 0; i < 3; ++i) step(1e-3, xs<Cap>(batch(i, 16)), ys<Cap>(batch(i, 16)));
  ASSERT_EQ(step.last_call(), CompiledCall::Replayed);
  EXPECT_EQ(adam.step_count(model.fc1.weight.id()), 3);  // the replay advanced the step count
  const auto w = model.fc1.weight.val().into_data().to_vec<float>();
  step(1e-3, xs<Cap>(batch(3, 16)), ys<Cap>(batch(3, 16)));
  EXPECT_NE(model.fc1.weight.val().into_data().to_vec<float>(), w);  // updated in place
  EXPECT_EQ(adam.step_count(model.fc1.weight.id()), 4);

  // A caller that replaces its module (here: back to the weights of before) is read as it is and receives the
  // result: the step from those weights equals the step that first ran from them.
  auto copy = model;
  copy = map_params(std::move(copy), [](const std::string&, auto p) {
    return p.with_value(std::decay_t<decltype(p.val())>::from_data(p.val().into_data()));
  });
  const auto before = params(copy);
  model = std::move(copy);
  const float l = scalar(step(1e-3, xs<Cap>(batch(4, 16)), ys<Cap>(batch(4, 16))));
  EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
  EXPECT_NE(params(model), before);
  EXPECT_TRUE(std::isfinite(l));

  // Another module (other param ids, so other optimizer slots) is another state layout: never replayed over the
  // old tape; its first step creates its moments (Warmup), the next captures.
  model = tools::DigitsMlp<Cap>::init();
  (void)params(model);
  step(1e-3, xs<Cap>(batch(5, 16)), ys<Cap>(batch(5, 16)));
  EXPECT_EQ(step.last_call(), CompiledCall::Warmup);
  step(1e-3, xs<Cap>(batch(6, 16)), ys<Cap>(batch(6, 16)));
  EXPECT_EQ(step.last_call(), CompiledCall::Captured);
}

// A result that is state as the step read it (the bias before Adam's update): the tape's replay returns that
// value, as eager does (the test the device plans share, tests/compile/device_plan_runs.hpp).
TEST_F(CompileTest, StateReturnedAsItWasIsTheValueTheStepRead) {
  DevicePlanRuns<Eager, Cap>::returns_state_as_it_was_case(false);
}

TEST_F(CompileTest, ReplayedStepStillRejectsBadTargets) {
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  Adam<Cap> adam;
  auto step = compile_train_step<Cap>(model, adam);
  for (int i = 0; i < 3; ++i) step(1e-3, xs<Cap>(batch(i, 16)), ys<Cap>(batch(i, 16)));
  ASSERT_EQ(step.last_call(), CompiledCall::Replayed);
  const auto bad = Tensor<Cap, 1, Int>::full({16}, 12.0);
  EXPECT_THROW(step(1e-3, xs<Cap>(batch(3, 16)), bad), IndexError);
}

// A validation the step makes with a host read, wrapped in host_check: the capture keeps it (the step is replayed,
// not refused as data-dependent) and runs it again on each replay over that replay's input.
TEST_F(CompileTest, ReplayedHostCheckRunsOverEachReplaysInput) {
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  Adam<Cap> adam;
  int checks = 0;
  auto step = compile<Cap>(
      [&](double lr, const Tensor<Cap, 2>& x, const Tensor<Cap, 1, Int>& y) {
        host_check([&checks, x] {
          ++checks;
          if (x.abs().max().item() > 100.0) throw ArgumentError("inputs must be scaled into [-100, 100]");
        });
        return train_step(model, adam, lr, x, y);
      },
      model, adam);
  for (int i = 0; i < 4; ++i) step(1e-3, xs<Cap>(batch(i, 16)), ys<Cap>(batch(i, 16)));
  ASSERT_EQ(step.last_call(), CompiledCall::Replayed);
  EXPECT_EQ(checks, 4);
  const auto loud = xs<Cap>(batch(4, 16)).mul_scalar(1000.0);
  EXPECT_THROW(step(1e-3, loud, ys<Cap>(batch(4, 16))), ArgumentError);
  EXPECT_EQ(checks, 5);
  step(1e-3, xs<Cap>(batch(5, 16)), ys<Cap>(batch(5, 16)));
  EXPECT_EQ(step.last_call(), CompiledCall::Replayed);
}

// An inference step (no grad, eval): captured on the first call (no state changes), replayed after, the same
// logits as eager; a compiled step called inside another's capture runs as part of that capture.
TEST_F(CompileTest, InferenceStepAndNestedSteps) {
  seed(42);
  auto em = tools::DigitsMlp<Eager>::init();
  (void)params(em);
  seed(42);
  auto cm = tools::DigitsMlp<Cap>::init();
  (void)params(cm);
  const autodiff::NoGrad no_grad;
  auto infer = compile<Cap>([&](const Tensor<Cap, 2>& x) { return cm.forward(x); }, cm);
  for (int i = 0; i < 3; ++i) {
    const Batch b = batch(i, 8);
    EXPECT_EQ(infer(xs<Cap>(b)).into_data().to_vec<float>(), em.forward(xs<Eager>(b)).into_data().to_vec<float>());
    EXPECT_EQ(infer.last_call(), i == 0 ? CompiledCall::Captured : CompiledCall::Replayed);
  }
  auto outer = compile<Cap>([&](const Tensor<Cap, 2>& x) { return infer(x).sum(); });
  for (int i = 0; i < 3; ++i) {
    const Batch b = batch(i, 8);
    EXPECT_EQ(scalar(outer(xs<Cap>(b))), scalar(em.forward(xs<Eager>(b)).sum())) << i;
  }
  EXPECT_EQ(outer.last_call(), CompiledCall::Replayed);
}

// A step whose host control flow reads a value: that signature runs eagerly, with the reason, and eager results.
TEST_F(CompileTest, HostReadFallsBackToEager) {
  const auto body = [](auto& model, auto& adam, double lr, const auto& x, const auto& y) {
    using AD = typename std::decay_t<decltype(x)>::Backend_;
    const auto loss = nn::cross_entropy(model.forward(x), y);
    const double scale = loss.item() > 100.0 ? 0.1 : 1.0;  // data-dependent
    model = adam.step(lr * scale, std::move(model), GradientsParams<AD>::from_grads(loss.backward(), model));
    return loss;
  };
  seed(42);
  auto em = tools::DigitsMlp<Eager>::init();
  (void)params(em);  // lazy params draw now, before the other model's
  Adam<Eager> ea;
  seed(42);
  auto cm = tools::DigitsMlp<Cap>::init();
  (void)params(cm);
  Adam<Cap> ca;
  auto step = compile<Cap>(
      [&](double lr, const Tensor<Cap, 2>& x, const Tensor<Cap, 1, Int>& y) { return body(cm, ca, lr, x, y); }, cm, ca);
  for (int i = 0; i < 4; ++i) {
    const Batch b = batch(i, 16);
    const float le = scalar(body(em, ea, 1e-3, xs<Eager>(b), ys<Eager>(b)));
    const float lc = scalar(step(1e-3, xs<Cap>(b), ys<Cap>(b)));
    EXPECT_EQ(le, lc) << i;
    if (i > 0) {
      EXPECT_EQ(step.last_call(), CompiledCall::Eager);
      EXPECT_NE(step.fallback_reason().find("read to the host"), std::string::npos) << step.fallback_reason();
    }
  }
  EXPECT_EQ(params(em), params(cm));
}

// An optimizer whose lr is a frozen host scalar (SGD), an optimizer left out of the state, and a caller's own
// Rng: each refuses the capture with its reason, and the calls run eagerly.
TEST_F(CompileTest, UncapturableStepsNameTheirReason) {
  seed(42);
  auto model = tools::DigitsMlp<Cap>::init();
  (void)params(model);
  Sgd<Cap> sgd(SgdConfig{});
  auto sgd_step = compile<Cap>(
      [&](double lr, const Tensor<Cap, 2>& x, const Tensor<Cap, 1, Int>& y) {
        const auto loss = nn::cross_entropy(model.forward(x), y);
        model = sgd.step(lr, std::move(model), GradientsParams<Cap>::from_grads(loss.backward(), model));
        return loss;
      },
      model, sgd);
  seed(42);
  auto eager_model = tools::DigitsMlp<Eager>::init();
  (void)params(eager_model);
  Sgd<Eager> eager_sgd(SgdConfig{});
  for (int i = 0; i < 3; ++i) {
    const float lc = scalar(sgd_step(1e-2 * (i + 1), xs<Cap>(batch(i, 8)), ys<Cap>(batch(i, 8))));
    const auto le = nn::cross_entropy(eager_model.forward(xs<Eager>(batch(i, 8))), ys<Eager>(batch(i, 8)));
    eager_model = eager_sgd.step(1e-2 * (i + 1), std::move(eager_model),
                                 GradientsParams<Eager>::from_grads(le.backward(), eager_model));
    EXPECT_EQ(lc, scalar(le)) << i;
  }
  EXPECT_EQ(sgd_step.last_call(), CompiledCall::Eager);
  EXPECT_NE(sgd_step.fallback_reason().find("Sgd"), std::string::npos) << sgd_step.fallback_reason();
  EXPECT_EQ(params(model), params(eager_model));  // the changing lr reached every fallback step

  Adam<Cap> adam;
  auto hidden = compile<Cap>([&](double lr, const Tensor<Cap, 2>& x,
                                 const Tensor<Cap, 1, Int>& y) { return train_step(model, adam, lr, x, y); },
                             model);
  for (int i = 0; i < 2; ++i) hidden(1e-3, xs<Cap>(batch(i, 8)), ys<Cap>(batch(i, 8)));
  EXPECT_EQ(hidden.last_call(), CompiledCall::Eager);
  EXPECT_NE(hidden.fallback_reason().find("not in compile's state"), std::string::npos) << hidden.fallback_reason();

  // Two scalar arguments equal to the lr at capture: which one feeds the lr is unknown.
  auto twins =
      compile<Cap>([&](double lr, double other, const Tensor<Cap, 2>& x,
                       const Tensor<Cap, 1, Int>& y) { return train_step(model, adam, lr + 0.0 * other, x, y); },
                   model, adam);
  for (int i = 0; i < 3; ++i) twins(1e-3, 1e-3, xs<Cap>(batch(i, 8)), ys<Cap>(batch(i, 8)));
  EXPECT_EQ(twins.last_call(), CompiledCall::Eager);
  EXPECT_NE(twins.fallback_reason().find("equals 2 of the step's scalar"), std::string::npos)
      << twins.fallback_reason();

  Rng own(5);
  auto noisy = compile<Cap>([&](const Tensor<Cap, 2>& x) {
    return x.add(Tensor<Cap, 2>::random({8, 64}, Normal{}, own)).sum();
  });
  const auto x = xs<Cap>(batch(0, 8));
  const float first = scalar(noisy(x));
  const float second = scalar(noisy(x));
  EXPECT_EQ(noisy.last_call(), CompiledCall::Eager);
  EXPECT_NE(noisy.fallback_reason().find("caller's Rng"), std::string::npos) << noisy.fallback_reason();
  EXPECT_NE(first, second);  // eager: each call drew anew
}

}  // namespace
}  // namespace ember::test
