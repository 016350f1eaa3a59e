// Memory-bound elementwise ops and reductions on 16M f32 elements (64 MiB per tensor, far beyond the caches).
// Bytes processed count every tensor read or written once: (inputs + output) * 4 * N, so the printed rate is the
// effective memory bandwidth.
#include "bench/bench_util.hpp"

namespace ember::bench {
namespace {

constexpr int64_t kN = int64_t{1} << 24;  // 16M

void set_bytes(benchmark::State& state, int64_t tensors, int64_t elems) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * tensors * 4 * elems);
}

void BM_Add_16M(benchmark::State& state) {
  const auto a = uniform<F32, 1>({kN}, 1);
  const auto b = uniform<F32, 1>({kN}, 2);
  for (auto _ : state) {
    auto c = a.add(b);
    keep(c);
  }
  set_bytes(state, 3, kN);
}

template <class Op>
void unary_bench(benchmark::State& state, Op op) {
  const auto x = uniform<F32, 1>({kN}, 3).mul_scalar(4.0);  // [-4, 4): tanh/gelu away from their flat tails
  for (auto _ : state) {
    auto y = op(x);
    keep(y);
  }
  set_bytes(state, 2, kN);
}
void BM_Relu_16M(benchmark::State& state) { unary_bench(state, [](const auto& x) { return x.relu(); }); }
void BM_Tanh_16M(benchmark::State& state) { unary_bench(state, [](const auto& x) { return x.tanh(); }); }
void BM_Gelu_16M(benchmark::State& state) { unary_bench(state, [](const auto& x) { return x.gelu(false); }); }

// Reductions: the bytes are the input read (the output is tiny).
void BM_Sum_16M(benchmark::State& state) {
  const auto x = uniform<F32, 1>({kN}, 4);
  for (auto _ : state) {
    auto s = x.sum();
    keep(s);
  }
  set_bytes(state, 1, kN);
}
// sum_dim over a [4096, 4096] matrix: dim 1 sums each row (contiguous), dim 0 sums down the columns (strided).
void BM_SumDim_4096x4096(benchmark::State& state) {
  const int64_t dim = state.range(0);
  const auto x = uniform<F32, 2>({4096, 4096}, 5);
  for (auto _ : state) {
    auto s = x.sum_dim(dim);
    keep(s);
  }
  set_bytes(state, 1, 4096 * 4096);
}

BENCHMARK(BM_Add_16M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Relu_16M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Tanh_16M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Gelu_16M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sum_16M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SumDim_4096x4096)->ArgName("dim")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ember::bench
