// The machine's single-precision FMA peak, measured in the same run as the workloads so that compare.py can put
// the MLP epoch's GFLOP/s against what the cores deliver that day (a shared VM's clock drifts by 1.5x between days).
// Twelve independent accumulators per thread hide the FMA latency (4 cycles, 2 pipes on Zen: 8 in flight); the
// multiplier < 1 and small addend keep the values normal, so no denormal slow path is measured.
#include <immintrin.h>

#include "bench/peers/fma_peak.hpp"

namespace ember::peers {
namespace {

constexpr int kAcc = 12;

__attribute__((target("avx2,fma"))) float fma_avx2(int64_t iters) {
  __m256 acc[kAcc];
  for (int k = 0; k < kAcc; ++k) acc[k] = _mm256_set1_ps(static_cast<float>(k));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < kAcc; ++k) acc[k] = _mm256_fmadd_ps(acc[k], a, b);
  __m256 s = acc[0];
  for (int k = 1; k < kAcc; ++k) s = _mm256_add_ps(s, acc[k]);
  return _mm256_cvtss_f32(s);
}

__attribute__((target("avx512f"))) float fma_avx512(int64_t iters) {
  __m512 acc[kAcc];
  for (int k = 0; k < kAcc; ++k) acc[k] = _mm512_set1_ps(static_cast<float>(k));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < kAcc; ++k) acc[k] = _mm512_fmadd_ps(acc[k], a, b);
  // Stored and summed by hand: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized inside its own header.
  // Every accumulator feeds the result, or the dead ones are removed with their FMAs.
  __m512 sum = acc[0];
  for (int k = 1; k < kAcc; ++k) sum = _mm512_add_ps(sum, acc[k]);
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  float s = 0.0f;
  for (float v : lanes) s += v;
  return s;
}

}  // namespace

bool fma_width_supported(int lanes) {
  __builtin_cpu_init();
  if (lanes == 16) return __builtin_cpu_supports("avx512f");
  return lanes == 8 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

void fma_peak(benchmark::State& state, int lanes) {
  if (!fma_width_supported(lanes)) {
    state.SkipWithError("this CPU lacks the instruction set");
    return;
  }
  constexpr int64_t kIters = 1 << 16;
  for (auto _ : state) {
    // Opaque to the compiler, or it hoists the (side-effect-free) call out of the loop.
    int64_t iters = kIters;
    benchmark::DoNotOptimize(iters);
    benchmark::DoNotOptimize(lanes == 16 ? fma_avx512(iters) : fma_avx2(iters));
  }
  // One FMA = 2 FLOPs per lane. With ->Threads(n) Google Benchmark multiplies each thread's counter by the
  // iterations of all n threads and sums over threads (n times too much: measured), hence the division; the rate
  // is then the whole machine's peak on n cores.
  const double flops = 2.0 * lanes * kAcc * kIters / state.threads();
  state.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace ember::peers
