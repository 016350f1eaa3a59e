// Square f32 GEMM: Tensor::matmul against raw cblas_sgemm on the same sizes, in the same run. Both report FLOP/s
// (2*N^3 per multiply); the ratio Ember/raw is the engine's overhead on top of OpenBLAS.
#include <cblas.h>

#include <vector>

#include "bench/bench_util.hpp"

namespace ember::bench {
namespace {

void set_flops(benchmark::State& state, int64_t n) {
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n),
                         benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Gemm_Ember(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto a = uniform<F32, 2>({n, n}, 1);
  const auto b = uniform<F32, 2>({n, n}, 2);
  for (auto _ : state) {
    auto c = a.matmul(b);
    keep(c);
  }
  set_flops(state, n);
}

void BM_Gemm_RawBlas(benchmark::State& state) {
  const int64_t n = state.range(0);
  // The same values as the Ember run, in plain vectors.
  const auto a = uniform<F32, 2>({n, n}, 1).to_vec<float>();
  const auto b = uniform<F32, 2>({n, n}, 2).to_vec<float>();
  std::vector<float> c(static_cast<std::size_t>(n * n));
  const auto bn = static_cast<blasint>(n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bn, bn, bn, 1.0f, a.data(), bn, b.data(), bn, 0.0f,
                c.data(), bn);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, n);
}

BENCHMARK(BM_Gemm_Ember)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Gemm_RawBlas)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ember::bench
