// ember_cuda_bench: the CUDA backend against the hardware, in the same run.
//   * GEMM 4096^2 f32 (and TF32) through Tensor::matmul vs cublasSgemm / cublasGemmEx called directly.
//     Bar: Ember >= 0.9x direct cuBLAS.
//   * 256M-element add and gelu vs a device-to-device cudaMemcpy of the same bytes (the practical bandwidth
//     ceiling). Bar: >= 85% of it.
//   * issue 14: ember_fusion_bench's linear -> bias -> GELU -> dropout block, forward + backward, on
//     Autodiff<Cuda> (eager kernels) and Autodiff<Fusion<Cuda>> (the chains as NVRTC-compiled kernels), at a
//     GPU-sized [4096, 1024, 4096]: the fused step's time against the eager one's, in the same run.
// Times are CUDA-event intervals on the backend's stream (manual time), so host overhead that overlaps with the
// device is not counted twice and nothing is timed before the device finishes. Without a GPU it prints a message
// and exits 0.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#include "backends/cuda/cuda_backend.hpp"
#include "engine/ember.hpp"
#include "engine/nn/dropout.hpp"

namespace ember::bench {
namespace {

constexpr int64_t kGemmN = 4096;
constexpr int64_t kElems = int64_t{1} << 28;  // 256M f32: 1 GiB per tensor

cudaStream_t ember_stream() { return static_cast<cudaStream_t>(cuda::stream(0)); }

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: %s\n", what, cublasGetStatusString(s));
    std::exit(1);
  }
}

// Runs body() once per iteration and reports the device time between two events around it.
template <class Body>
void timed_loop(benchmark::State& state, Body&& body) {
  cudaEvent_t start, stop;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  body();  // warm-up: plans, cuBLAS heuristics, allocator cache
  cuda::synchronize(0);
  for (auto _ : state) {
    check_cuda(cudaEventRecord(start, ember_stream()), "cudaEventRecord");
    body();
    check_cuda(cudaEventRecord(stop, ember_stream()), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0.0f;
    check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    state.SetIterationTime(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

void set_flops(benchmark::State& state, int64_t n) {
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * double(n) * double(n) * double(n),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

Tensor<Cuda, 2> gemm_operand(uint64_t seed) {
  Rng rng(seed);
  return Tensor<Cuda, 2>::random({kGemmN, kGemmN}, Uniform{-1.0, 1.0}, rng);
}

void gemm_ember(benchmark::State& state, bool tf32) {
  const auto a = gemm_operand(1), b = gemm_operand(2);
  cuda::set_allow_tf32(tf32);
  timed_loop(state, [&] { benchmark::DoNotOptimize(a.matmul(b)); });
  cuda::set_allow_tf32(false);
  set_flops(state, kGemmN);
}

void gemm_cublas(benchmark::State& state, bool tf32) {
  const auto a = gemm_operand(1), b = gemm_operand(2);
  auto c = Tensor<Cuda, 2>::zeros({kGemmN, kGemmN});
  cublasHandle_t h;
  check_cublas(cublasCreate(&h), "cublasCreate");
  check_cublas(cublasSetStream(h, ember_stream()), "cublasSetStream");
  const float alpha = 1.0f, beta = 0.0f;
  const int n = static_cast<int>(kGemmN);
  const float* pa = a.primitive().data();
  const float* pb = b.primitive().data();
  float* pc = const_cast<float*>(c.primitive().data());
  timed_loop(state, [&] {
    // Row-major C = A B is column-major C^T = B^T A^T: the same call Ember makes.
    if (tf32)
      check_cublas(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, pb, CUDA_R_32F, n, pa, CUDA_R_32F, n,
                                &beta, pc, CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx");
    else
      check_cublas(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, pb, n, pa, n, &beta, pc, n),
                   "cublasSgemm");
  });
  cublasDestroy(h);
  set_flops(state, kGemmN);
}

void BM_Gemm4096_F32_Ember(benchmark::State& s) { gemm_ember(s, false); }
void BM_Gemm4096_F32_Cublas(benchmark::State& s) { gemm_cublas(s, false); }
void BM_Gemm4096_TF32_Ember(benchmark::State& s) { gemm_ember(s, true); }
void BM_Gemm4096_TF32_Cublas(benchmark::State& s) { gemm_cublas(s, true); }

// Values in [-4, 4) made on the device (host generation of 256M randoms would dominate the setup).
Tensor<Cuda, 1> ramp(double lo, double hi) {
  return Tensor<Cuda, 1, Int>::arange(0, kElems).to_float().mul_scalar((hi - lo) / double(kElems)).add_scalar(lo);
}

void set_bytes(benchmark::State& state, int64_t tensors) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * tensors * 4 * kElems);
}

void BM_Add256M_Ember(benchmark::State& state) {
  const auto a = ramp(-1, 1), b = ramp(2, 3);
  timed_loop(state, [&] { benchmark::DoNotOptimize(a.add(b)); });
  set_bytes(state, 3);
}

void BM_Gelu256M_Ember(benchmark::State& state) {
  const auto x = ramp(-4, 4);
  timed_loop(state, [&] { benchmark::DoNotOptimize(x.gelu(false)); });
  set_bytes(state, 2);
}

// The reference: one read and one write of 1 GiB, as fast as the driver's copy engine / kernels move it.
void BM_Memcpy256M_Reference(benchmark::State& state) {
  const auto src = ramp(0, 1);
  auto dst = Tensor<Cuda, 1>::zeros({kElems});
  timed_loop(state, [&] {
    check_cuda(cudaMemcpyAsync(const_cast<float*>(dst.primitive().data()), src.primitive().data(),
                               static_cast<std::size_t>(kElems) * 4, cudaMemcpyDeviceToDevice, ember_stream()),
               "cudaMemcpyAsync");
  });
  set_bytes(state, 2);
}

// The block's step (the eager and the fused side see the same inputs and mask seed). The dropout mask is drawn on
// the device (bernoulli_kernel) by both; the fused side's forward chain (bias, GELU, mask) and backward chain
// (mask, GELU's step) run as one kernel each, their kernels compiled in timed_loop's warm-up call.
template <class B>
void fused_block(benchmark::State& state) {
  using AD = Autodiff<B>;
  constexpr int64_t n = 4096, k = 1024, m = 4096;
  Rng rng(7);
  const auto x = Tensor<AD, 2>::random({n, k}, Uniform{-1.0, 1.0}, rng);
  const auto w = Tensor<AD, 2>::random({k, m}, Uniform{-0.05, 0.05}, rng).require_grad();
  const auto b = Tensor<AD, 1>::random({m}, Uniform{-0.5, 0.5}, rng).require_grad();
  const nn::Dropout dropout = nn::DropoutConfig{0.1}.init();
  seed(42);
  timed_loop(state, [&] {
    const auto y = dropout.forward((x.matmul(w) + b.template unsqueeze<2>(0)).gelu());
    const auto grads = y.sum().backward();
    // Both gradients are computed by now (the weight's by a GEMM, the bias's by a reduction over the fused chain).
    benchmark::DoNotOptimize(w.grad(grads));
    benchmark::DoNotOptimize(b.grad(grads));
  });
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * 2.0 * double(n) * double(k) * double(m),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_FusedBlock_Eager(benchmark::State& s) { fused_block<Cuda>(s); }
void BM_FusedBlock_Fused(benchmark::State& s) { fused_block<Fusion<Cuda>>(s); }

BENCHMARK(BM_Gemm4096_F32_Ember)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gemm4096_F32_Cublas)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gemm4096_TF32_Ember)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gemm4096_TF32_Cublas)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Memcpy256M_Reference)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Add256M_Ember)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gelu256M_Ember)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FusedBlock_Eager)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FusedBlock_Fused)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ember::bench

int main(int argc, char** argv) {
  if (ember::cuda::device_count() == 0) {
    std::printf("no CUDA device: skipping the CUDA benchmarks (%s)\n", ember::cuda::unavailable_reason().c_str());
    return 0;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) benchmark::AddCustomContext("cuda_device", prop.name);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
