// Per-op overhead: an add of two 4-element tensors, where the arithmetic is negligible and the time is dispatch,
// shape checks and allocation. On Autodiff<Cpu<float>> both untracked inputs (inference) and tracked inputs
// (a graph node recorded per op) are measured.
#include "bench/bench_util.hpp"

namespace ember::bench {
namespace {

template <class B>
void tiny_add(benchmark::State& state, bool track) {
  auto a = uniform<B, 1>({4}, 1);
  auto b = uniform<B, 1>({4}, 2);
  if (track) {
    a = a.require_grad();
    b = b.require_grad();
  }
  for (auto _ : state) {
    auto c = a.add(b);
    keep(c);
  }
}

void BM_TinyAdd_Cpu(benchmark::State& state) { tiny_add<F32>(state, false); }
void BM_TinyAdd_Autodiff(benchmark::State& state) { tiny_add<AdF32>(state, false); }
void BM_TinyAdd_AutodiffTracked(benchmark::State& state) { tiny_add<AdF32>(state, true); }

BENCHMARK(BM_TinyAdd_Cpu)->UseRealTime();
BENCHMARK(BM_TinyAdd_Autodiff)->UseRealTime();
BENCHMARK(BM_TinyAdd_AutodiffTracked)->UseRealTime();

}  // namespace
}  // namespace ember::bench
