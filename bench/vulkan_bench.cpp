// ember_vulkan_bench: the Vulkan backend's GEMM (GFLOP/s) and elementwise add (GB/s, bytes read + written), each
// beside the CPU backend measured in the same run. Every iteration records the op, submits and waits, so the
// time includes Ember's recording and submission overhead. Sizes: GEMM {512, 1024, 4096}; add of up to 256M
// elements, capped by the device's maxStorageBufferRange (lavapipe: 128 MiB -> 32M floats).
// Run: ./build/bench/ember_vulkan_bench [--benchmark_filter=...]. Without a Vulkan device it prints why and exits 0.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/vulkan/context.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "engine/ember.hpp"

namespace {

using ember::Cpu;
using ember::Tensor;
using ember::Vulkan;

template <class B>
void sync(const Tensor<B, 2>& t) {
  if constexpr (std::is_same_v<B, Vulkan>) t.device().get()->synchronize();
}

template <class B>
void BM_Gemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  ember::seed(1);
  const auto a = Tensor<B, 2>::random({n, n}, ember::Uniform{-1, 1});
  const auto b = Tensor<B, 2>::random({n, n}, ember::Uniform{-1, 1});
  sync(a.matmul(b));  // warm-up: pipeline creation, memory pools
  for (auto _ : state) sync(a.matmul(b));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * static_cast<double>(n) * n * n, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}

int64_t add_elements() {
  const auto range = static_cast<int64_t>(ember::vk::default_context()->info().max_storage_buffer_range);
  return std::min<int64_t>(int64_t{256} << 20, range / 4);
}

template <class B>
void BM_Add(benchmark::State& state) {
  const int64_t n = add_elements();
  const auto a = Tensor<B, 2>::full({1, n}, 1.5);
  const auto b = Tensor<B, 2>::full({1, n}, 2.5);
  sync(a.add(b));
  for (auto _ : state) sync(a.add(b));
  state.counters["elements"] = static_cast<double>(n);
  state.SetBytesProcessed(state.iterations() * 3 * n * static_cast<int64_t>(sizeof(float)));
}

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  if (!ember::vk::available(&why)) {
    std::printf("no Vulkan device: nothing to benchmark (%s)\n", why.c_str());
    return 0;
  }
  const auto& info = ember::vk::default_context()->info();
  std::printf("Vulkan device: %s, maxStorageBufferRange %llu bytes\n", info.name.c_str(),
              static_cast<unsigned long long>(info.max_storage_buffer_range));
  benchmark::RegisterBenchmark("vulkan/gemm_f32", BM_Gemm<Vulkan>)->Arg(512)->Arg(1024)->Arg(4096)
      ->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("cpu/gemm_f32", BM_Gemm<Cpu<float>>)->Arg(512)->Arg(1024)->Arg(4096)
      ->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("vulkan/add_f32", BM_Add<Vulkan>)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("cpu/add_f32", BM_Add<Cpu<float>>)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
