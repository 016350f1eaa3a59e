// ember_compile_bench (issue 14): the digits MLP's training step (64 -> 256 -> 256 -> 10, ReLU, cross entropy,
// Adam), compiled (ember::compile on Autodiff<Capture<Cpu<float>>>, and over Fusion on
// Autodiff<Capture<Fusion<Cpu<float>>>>, and with Fusion's chains recorded on Autodiff<Fusion<Capture<Cpu<float>>>>)
// against eager (Autodiff<Cpu<float>>) in the same run, on one thread. The
// issue's figure is batch 64; batch 4 is the same step where the host work a replay skips is a larger part (an
// online learner, a game's per-frame update). Last, the character transformer's AdamW step (bench/lm's shape),
// compiled on Autodiff<Capture<Cpu<float>>>, for steps / 20 steps.
//
//   build/bench/ember_compile_bench [steps] [eager|compiled|both] [batch]
//
// A second argument other than "both" runs only that side (for perf record), a third only that batch size; the
// default runs both, interleaved step by step (eager, compiled, eager, ...) so both see the same machine load.
// Both train from the same initial params on the same batches; each row prints the median step time of each (the
// step: forward, backward, Adam's update and reading the loss), their ratio, and the largest relative difference
// between the two runs' losses over all steps (the same kernels run, so it should be 0).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/parallel.hpp"
#include "bench/lm/lm_shape.hpp"
#include "engine/compile/compile.hpp"
#include "engine/ember.hpp"
#include "engine/optim/optim.hpp"
#include "tools/ember/lm_model.hpp"
#include "tools/ember/models.hpp"

namespace {

using namespace ember;
using Eager = Autodiff<Cpu<float>>;
using CapCpu = Autodiff<Capture<Cpu<float>>>;
using CapFusion = Autodiff<Capture<Fusion<Cpu<float>>>>;  // the tape records Fusion's ops (chains fused on replay)
using FusionCap = Autodiff<Fusion<Capture<Cpu<float>>>>;  // the tape records the fused chains Fusion materializes

constexpr int kBatches = 22;  // the digits training set's 1437 rows are 22 full batches of 64

struct Batch {
  TensorData x, y;
};
std::vector<Batch> batches(int64_t batch) {
  Rng rng(7);
  std::vector<Batch> out;
  for (int b = 0; b < kBatches; ++b) {
    std::vector<double> x(static_cast<std::size_t>(batch * 64)), y(static_cast<std::size_t>(batch));
    for (auto& v : x) v = rng.uniform();
    for (auto& v : y) v = static_cast<double>(static_cast<int64_t>(rng.uniform() * 10));
    out.push_back({TensorData::from_vec<double>(x, Shape{batch, 64}), TensorData::from_vec<double>(y, Shape{batch})});
  }
  return out;
}

template <class AD, class M>
Tensor<AD, 1> train_step(M& model, Adam<AD>& adam, const Tensor<AD, 2>& x, const Tensor<AD, 1, Int>& y) {
  const auto loss = nn::cross_entropy(model.forward(x), y);
  model = adam.step(1e-3, std::move(model), GradientsParams<AD>::from_grads(loss.backward(), model));
  return loss;
}

// One side's model, optimizer and inputs (built before timing: the step is what is timed).
template <class AD>
struct Side {
  tools::DigitsMlp<AD> model;
  Adam<AD> adam;
  std::vector<Tensor<AD, 2>> x;
  std::vector<Tensor<AD, 1, Int>> y;
  explicit Side(const std::vector<Batch>& data) {
    seed(42);
    model = tools::DigitsMlp<AD>::init();
    visit_params(model, [](const std::string&, const auto& p) { (void)p.val(); });  // draw the params now
    for (const auto& b : data) {
      x.push_back(Tensor<AD, 2>::from_data(b.x));
      y.push_back(Tensor<AD, 1, Int>::from_data(b.y));
    }
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
template <class F>
double timed(F&& f, double& loss) {
  const auto t0 = std::chrono::steady_clock::now();
  loss = f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs `steps` steps of each side, interleaved, and prints one row.
template <class Cap>
void compare(int64_t batch, int steps, const std::string& only) {
  const std::vector<Batch> data = batches(batch);
  Side<Eager> eager(data);
  Side<Cap> comp(data);
  auto step = compile<Cap>(
      [&](const Tensor<Cap, 2>& x, const Tensor<Cap, 1, Int>& y) { return train_step(comp.model, comp.adam, x, y); },
      comp.model, comp.adam);

  std::vector<double> te, tc;
  double max_rel = 0;
  int replayed = 0;
  for (int s = 0; s < steps + 2; ++s) {  // two warm-up steps each (the compiled side captures in them)
    const std::size_t b = static_cast<std::size_t>(s % kBatches);
    double le = 0, lc = 0;
    const double e = only != "compiled"
                         ? timed([&] { return train_step(eager.model, eager.adam, eager.x[b], eager.y[b]).item(); }, le)
                         : 0.0;
    const double c = only != "eager" ? timed([&] { return step(comp.x[b], comp.y[b]).item(); }, lc) : 0.0;
    if (s < 2) continue;
    replayed += step.last_call() == CompiledCall::Replayed;
    te.push_back(e);
    tc.push_back(c);
    if (only.empty()) max_rel = std::max(max_rel, std::fabs(lc - le) / std::fabs(le));
  }
  const double me = median(te), mc = median(tc);
  std::printf("%-34s %6lld %7d %9zu %12.1f %12.1f %7.2fx %18.2e\n", Cap::InnerBackend::name(),
              static_cast<long long>(batch), replayed, step.recorded_ops(), me * 1e6, mc * 1e6, mc > 0 ? me / mc : 0.0,
              max_rel);
  if (!step.fallback_reason().empty()) std::printf("fallback: %s\n", step.fallback_reason().c_str());
}

// The character transformer's training step (bench/lm's shape: batch 32 x 64 tokens, d_model 128, 4 heads, 2
// layers, AdamW), compiled on Cap (Autodiff<Capture<Cpu<float>>>, or with Fusion under the capture) against eager,
// `steps` of each, interleaved.
template <class Cap>
void compare_lm(int steps, const std::string& only, const char* label) {
  using namespace lm_bench;
  const tools::LmConfig cfg{kVocab, kContext, kDModel, kHeads, kLayers};
  const auto x_ids = token_ids(kBatch * kContext, 1), y_ids = token_ids(kBatch * kContext, 2);
  const auto side = [&]<class AD>(tools::CharTransformer<AD>& model) {
    seed(42);
    model = tools::CharTransformer<AD>::init(cfg);
    visit_params(model, [](const std::string&, const auto& p) { (void)p.val(); });
    return std::pair{Tensor<AD, 2, Int>::from_values(x_ids, {kBatch, kContext}),
                     Tensor<AD, 1, Int>::from_values(y_ids, {kBatch * kContext})};
  };
  const auto body = [](auto& model, auto& opt, const auto& x, const auto& y) {
    using AD = typename std::decay_t<decltype(x)>::Backend_;
    const auto logits = model.forward(x).reshape(std::array<int64_t, 2>{kBatch * kContext, kVocab});
    const auto loss = nn::cross_entropy(logits, y);
    model = opt.step(kLr, std::move(model), GradientsParams<AD>::from_grads(loss.backward(), model));
    return loss;
  };
  tools::CharTransformer<Eager> em;
  AdamW<Eager> eo;
  const auto [ex, ey] = side(em);
  tools::CharTransformer<Cap> cm;
  AdamW<Cap> co;
  const auto [cx, cy] = side(cm);
  auto step = compile<Cap>(
      [&](const Tensor<Cap, 2, Int>& x, const Tensor<Cap, 1, Int>& y) { return body(cm, co, x, y); }, cm, co);
  std::vector<double> te, tc;
  double max_rel = 0;
  int replayed = 0;
  for (int s = 0; s < steps + 2; ++s) {
    double le = 0, lc = 0;
    const double e = only != "compiled" ? timed([&] { return body(em, eo, ex, ey).item(); }, le) : 0.0;
    const double c = only != "eager" ? timed([&] { return step(cx, cy).item(); }, lc) : 0.0;
    if (s < 2) continue;
    replayed += step.last_call() == CompiledCall::Replayed;
    te.push_back(e);
    tc.push_back(c);
    if (only.empty()) max_rel = std::max(max_rel, std::fabs(lc - le) / std::fabs(le));
  }
  const double me = median(te), mc = median(tc);
  std::printf("%-34s %6lld %7d %9zu %12.1f %12.1f %7.2fx %18.2e\n", label, static_cast<long long>(kBatch), replayed,
              step.recorded_ops(), me * 1e6, mc * 1e6, mc > 0 ? me / mc : 0.0, max_rel);
  if (!step.fallback_reason().empty()) std::printf("fallback: %s\n", step.fallback_reason().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 400;
  const std::string only = argc > 2 && std::string(argv[2]) != "both" ? argv[2] : "";
  const int64_t only_batch = argc > 3 ? std::atoll(argv[3]) : 0;
  cpu::set_num_threads(1);
  std::printf("digits MLP 64-256-256-10, cross entropy, Adam, 1 thread, %d steps per batch size\n", steps);
  std::printf("%-34s %6s %7s %9s %12s %12s %8s %18s\n", "compiled on", "batch", "replays", "tape ops", "eager us",
              "compiled us", "speedup", "max loss rel diff");
  for (const int64_t batch : {int64_t{64}, int64_t{4}})
    if (only_batch == 0 || batch == only_batch) {
      compare<CapCpu>(batch, steps, only);
      compare<CapFusion>(batch, steps, only);
      compare<FusionCap>(batch, steps, only);
    }
  if (only_batch == 0 || only_batch == lm_bench::kBatch) {
    compare_lm<CapCpu>(std::max(3, steps / 20), only, "transformer LM, capture<cpu<f32>>");
    compare_lm<FusionCap>(std::max(3, steps / 20), only, "transformer LM, fusion<capture<cpu>>");
  }
  return 0;
}
