// ember_backends_bench: the same workloads on every backend compiled into this build (backends/registry.hpp),
// each beside the CPU backend measured in the same run: GEMM (GFLOP/s) and elementwise add (GB/s, bytes read +
// written). Every iteration records the op and waits for the device, so times include Ember's recording and
// submission overhead. Sizes: GEMM {512, 1024, 4096}; add of up to 256M elements, capped by the smallest
// per-tensor limit of the backends in the run (lavapipe: 128 MiB -> 32M floats) so every backend adds the same n.
// Backends this machine cannot run (no GPU, no Vulkan device) are listed with the reason and left out.
// Run: ./build/bench/ember_backends_bench [--benchmark_filter=vulkan/...].
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "backends/registry.hpp"
#include "engine/ember.hpp"

namespace {

using ember::Tensor;

template <class E>
void BM_Gemm(benchmark::State& state) {
  using B = typename E::Default;
  const int64_t n = state.range(0);
  ember::seed(1);
  const auto a = Tensor<B, 2>::random({n, n}, ember::Uniform{-1, 1});
  const auto b = Tensor<B, 2>::random({n, n}, ember::Uniform{-1, 1});
  { auto warm = a.matmul(b); E::synchronize(); }  // pipeline creation, memory pools
  for (auto _ : state) {
    auto c = a.matmul(b);
    E::synchronize();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * static_cast<double>(n) * n * n, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}

int64_t g_add_elements = int64_t{256} << 20;

template <class E>
void BM_Add(benchmark::State& state) {
  using B = typename E::Default;
  const int64_t n = g_add_elements;
  const auto a = Tensor<B, 2>::full({1, n}, 1.5);
  const auto b = Tensor<B, 2>::full({1, n}, 2.5);
  { auto warm = a.add(b); E::synchronize(); }
  for (auto _ : state) {
    auto c = a.add(b);
    E::synchronize();
  }
  state.counters["elements"] = static_cast<double>(n);
  state.SetBytesProcessed(state.iterations() * 3 * n * static_cast<int64_t>(sizeof(float)));
}

}  // namespace

int main(int argc, char** argv) {
  ember::for_each_compiled_backend([](auto entry) {
    using E = typename decltype(entry)::type;
    const std::string name(ember::backend_info(E::id)->name);
    std::string why;
    if (!E::available(&why)) {
      std::printf("%s: not benchmarked (%s)\n", name.c_str(), why.c_str());
      return;
    }
    g_add_elements = std::min(g_add_elements, E::max_tensor_bytes() / static_cast<int64_t>(sizeof(float)));
    benchmark::RegisterBenchmark((name + "/gemm_f32").c_str(), BM_Gemm<E>)->Arg(512)->Arg(1024)->Arg(4096)
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark((name + "/add_f32").c_str(), BM_Add<E>)->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  });
  std::printf("add: %lld elements on every backend\n", static_cast<long long>(g_add_elements));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
