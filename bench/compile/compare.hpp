#pragma once
// The compile benchmarks' shared rows (ember_compile_bench on the CPU, ember_compile_vulkan_bench on Vulkan): a
// training step run eagerly on Eager and compiled on Cap (an Autodiff<Capture<...>> stack), interleaved step by step
// (eager, compiled, eager, ...) so both see the same machine load, from the same initial params on the same batches.
// Each row prints the median step time of each (the step: forward, backward, Adam's update and reading the loss),
// their ratio, and the largest relative difference between the two runs' losses over all steps (the same kernels
// run, so it should be 0).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/lm/lm_shape.hpp"
#include "engine/compile/compile.hpp"
#include "engine/ember.hpp"
#include "engine/optim/optim.hpp"
#include "tools/ember/lm_model.hpp"
#include "tools/ember/models.hpp"

namespace ember::compile_bench {

constexpr int kBatches = 22;  // the digits training set's 1437 rows are 22 full batches of 64

struct Batch {
  TensorData x, y;
};
inline std::vector<Batch> batches(int64_t batch) {
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

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
// The calling thread's CPU time (what the host itself spends; a wait for the device blocks and adds little).
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Times one step: f() issues it and returns the loss tensor; the step's time includes reading the loss (the device
// finishing it). `host` is the calling thread's CPU time over the whole step: on a GPU backend, the host work of
// recording (eager) or replaying (compiled) the commands, without the device's.
template <class F>
double timed(F&& f, double& loss, double& host) {
  const double c0 = thread_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  loss = f().item();
  host = thread_cpu_seconds() - c0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// What a row adds below itself: why the step ran eagerly, and the device plan it replays (or why not).
template <class S>
void notes(const S& step) {
  if (!step.fallback_reason().empty()) std::printf("  fallback: %s\n", step.fallback_reason().c_str());
  if (!step.plan_description().empty()) std::printf("  %s\n", step.plan_description().c_str());
  if (!step.plan_reason().empty()) std::printf("  %s\n", step.plan_reason().c_str());
}
inline void host_line(const std::vector<double>& he, const std::vector<double>& hc) {
  const double e = median(he), c = median(hc);
  std::printf("  host thread CPU time per step: eager %.1f us, compiled %.1f us (%.2fx)\n",
              e * 1e6, c * 1e6, c > 0 ? e / c : 0.0);
}

// Runs `steps` steps of each side, interleaved (after two warm-up steps each, in which the compiled side captures),
// and prints one row: eager(s) and compiled(s) run step s and return its loss tensor.
template <class Step, class E, class C>
void interleave(const char* label, int64_t batch, int steps, const std::string& only, bool show_host, const Step& step,
                E&& eager, C&& compiled) {
  std::vector<double> te, tc, he, hc;
  double max_rel = 0;
  int replayed = 0;
  for (int s = 0; s < steps + 2; ++s) {
    double le = 0, lc = 0, he_s = 0, hc_s = 0;
    const double e = only != "compiled" ? timed([&] { return eager(s); }, le, he_s) : 0.0;
    const double c = only != "eager" ? timed([&] { return compiled(s); }, lc, hc_s) : 0.0;
    if (s < 2) continue;
    replayed += step.last_call() == CompiledCall::Replayed;
    te.push_back(e);
    tc.push_back(c);
    he.push_back(he_s);
    hc.push_back(hc_s);
    if (only.empty()) max_rel = std::max(max_rel, std::fabs(lc - le) / std::fabs(le));
  }
  const double me = median(te), mc = median(tc);
  std::printf("%-34s %6lld %7d %9zu %12.1f %12.1f %7.2fx %18.2e\n", label, static_cast<long long>(batch), replayed,
              step.recorded_ops(), me * 1e6, mc * 1e6, mc > 0 ? me / mc : 0.0, max_rel);
  notes(step);
  if (show_host) host_line(he, hc);
}

// The digits MLP's step at `batch`, `steps` of each side, interleaved: one row.
// show_host: a line with the host thread's CPU time per step (for a GPU backend, where the device runs the kernels).
template <class Eager, class Cap>
void compare(int64_t batch, int steps, const std::string& only, bool show_host = false) {
  const std::vector<Batch> data = batches(batch);
  Side<Eager> eager(data);
  Side<Cap> comp(data);
  auto step = compile<Cap>(
      [&](const Tensor<Cap, 2>& x, const Tensor<Cap, 1, Int>& y) { return train_step(comp.model, comp.adam, x, y); },
      comp.model, comp.adam);

  const auto at = [](int s) { return static_cast<std::size_t>(s % kBatches); };
  interleave(
      Cap::InnerBackend::name(), batch, steps, only, show_host, step,
      [&](int s) { return train_step(eager.model, eager.adam, eager.x[at(s)], eager.y[at(s)]); },
      [&](int s) { return step(comp.x[at(s)], comp.y[at(s)]); });
}

// The character transformer's training step (bench/lm's shape: batch 32 x 64 tokens, d_model 128, 4 heads, 2
// layers, AdamW), compiled on Cap (Autodiff<Capture<Cpu<float>>>, or with Fusion under the capture) against eager,
// `steps` of each, interleaved.
template <class Eager, class Cap>
void compare_lm(int steps, const std::string& only, const char* label, bool show_host = false) {
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
  interleave(
      label, kBatch, steps, only, show_host, step, [&](int) { return body(em, eo, ex, ey); },
      [&](int) { return step(cx, cy); });
}

inline void print_header(const char* title, int steps) {
  std::printf("%s, %d steps per row\n", title, steps);
  std::printf("%-34s %6s %7s %9s %12s %12s %8s %18s\n", "compiled on", "batch", "replays", "tape ops", "eager us",
              "compiled us", "speedup", "max loss rel diff");
}

}  // namespace ember::compile_bench
