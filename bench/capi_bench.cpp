// Per-call overhead of the C ABI (c_api/include/ember.h): a tiny add through ember_tensor_add (handle checks,
// runtime dispatch, a new handle, its free) next to the same add through the typed engine, so the difference is
// what the C boundary costs. Bar: <= 2 us per call. Runs single-threaded like ember_bench.
//   ember_capi_bench [Google Benchmark flags...]
#include <benchmark/benchmark.h>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"
#include "ember.h"

namespace {

ember_tensor* tiny(float base, bool track) {
  const float v[4] = {base, base + 1, base + 2, base + 3};
  const int64_t shape[1] = {4};
  ember_tensor* t = nullptr;
  if (ember_tensor_from_data(nullptr, EMBER_DTYPE_F32, v, sizeof v, shape, 1, &t) != EMBER_OK) std::abort();
  if (track && ember_tensor_set_requires_grad(t, 1) != EMBER_OK) std::abort();
  return t;
}

void capi_add(benchmark::State& state, bool track) {
  ember_tensor* a = tiny(1, track);
  ember_tensor* b = tiny(5, track);
  for (auto _ : state) {
    ember_tensor* c = nullptr;
    if (ember_tensor_add(a, b, &c) != EMBER_OK) state.SkipWithError(ember_last_error());
    benchmark::DoNotOptimize(c);
    ember_tensor_free(c);
  }
  ember_tensor_free(a);
  ember_tensor_free(b);
}

// A failing call: the error path (exception, message formatting) is the expensive one.
void capi_error(benchmark::State& state) {
  ember_tensor* a = tiny(1, false);
  for (auto _ : state) {
    ember_tensor* c = nullptr;
    benchmark::DoNotOptimize(ember_tensor_add(a, nullptr, &c));
  }
  ember_tensor_free(a);
}

template <class B>
void typed_add(benchmark::State& state, bool track) {
  auto a = ember::Tensor<B, 1>::from_values(std::vector<float>{1, 2, 3, 4}, {4});
  auto b = ember::Tensor<B, 1>::from_values(std::vector<float>{5, 6, 7, 8}, {4});
  if (track) {
    a = a.require_grad();
    b = b.require_grad();
  }
  for (auto _ : state) {
    auto c = a.add(b);
    benchmark::DoNotOptimize(&c.primitive());
  }
}

void BM_CApi_TinyAdd(benchmark::State& s) { capi_add(s, false); }
void BM_CApi_TinyAddTracked(benchmark::State& s) { capi_add(s, true); }
void BM_CApi_FailingCall(benchmark::State& s) { capi_error(s); }
void BM_Typed_TinyAdd_Autodiff(benchmark::State& s) { typed_add<ember::Autodiff<ember::Cpu<float>>>(s, false); }
void BM_Typed_TinyAdd_AutodiffTracked(benchmark::State& s) { typed_add<ember::Autodiff<ember::Cpu<float>>>(s, true); }

BENCHMARK(BM_CApi_TinyAdd)->UseRealTime();
BENCHMARK(BM_CApi_TinyAddTracked)->UseRealTime();
BENCHMARK(BM_CApi_FailingCall)->UseRealTime();
BENCHMARK(BM_Typed_TinyAdd_Autodiff)->UseRealTime();
BENCHMARK(BM_Typed_TinyAdd_AutodiffTracked)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  ember_set_num_threads(1);
  ember::cpu::set_num_threads(1);  // the typed engine linked here has its own pool
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
