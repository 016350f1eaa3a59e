// The `ember train --model mlp` workload (issue bars): one epoch of 64-256-256-10 MLP training with Adam on
// digits-sized data (1437 training samples, batch 64, 23 steps), and batch-1 inference of the trained shape.
// Random data of the same size stands in for the data set: the work per epoch does not depend on the values.
#include <benchmark/benchmark.h>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"
#include "engine/optim/optim.hpp"
#include "tools/ember/models.hpp"

namespace {

using namespace ember;
using Inner = Cpu<float>;
using AB = Autodiff<Inner>;
constexpr int64_t kTrain = 1437, kBatch = 64;

struct Data {
  Tensor<Inner, 2> x;
  Tensor<Inner, 1, Int> y;
};
Data digits_sized_data() {
  Rng rng(7);
  auto x = Tensor<Inner, 2>::random({kTrain, 64}, Uniform{0.0, 1.0}, rng);
  auto y = Tensor<Inner, 2>::random({kTrain, 1}, Uniform{0.0, 10.0}, rng).floor().to_int().reshape(std::array<int64_t, 1>{kTrain});
  return {x, y};
}

void BM_DigitsMlpTrainEpoch(benchmark::State& state) {
  const Data d = digits_sized_data();
  seed(42);
  auto model = tools::DigitsMlp<AB>::init();
  Adam<AB> adam(AdamConfig{});
  for (auto _ : state) {
    for (int64_t start = 0; start < kTrain; start += kBatch) {
      const int64_t len = std::min(kBatch, kTrain - start);
      const auto x = Tensor<AB, 2>::from_inner(d.x.narrow(0, start, len));
      const auto y = Tensor<AB, 1, Int>(d.y.narrow(0, start, len).primitive());
      const auto loss = nn::cross_entropy(model.forward(x), y);
      benchmark::DoNotOptimize(loss.item());
      model = adam.step(1e-3, std::move(model), GradientsParams<AB>::from_grads(loss.backward(), model));
    }
  }
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(kTrain), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DigitsMlpTrainEpoch)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DigitsMlpInferBatch1(benchmark::State& state) {
  seed(42);
  const auto model = valid(tools::DigitsMlp<AB>::init());
  const Data d = digits_sized_data();
  int64_t i = 0;
  for (auto _ : state) {
    const auto x = d.x.narrow(0, i, 1);
    benchmark::DoNotOptimize(model.forward(x));
    i = (i + 1) % kTrain;
  }
  state.counters["samples/s"] = benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DigitsMlpInferBatch1)->UseRealTime();

}  // namespace
