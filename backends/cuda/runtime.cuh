#pragma once
// Private to the .cu files: status checks that turn CUDA / cuBLAS / cuFFT failures into exceptions, the
// per-device context (stream, cuBLAS handle, scratch flag for validations), and launch helpers.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "backends/cuda/cuda_api.hpp"
#include "backends/cuda/graph_capture.hpp"

namespace ember::cuda {

// Throws CudaError ("<what>: <status name>: <description>") unless the status is success.
void check(cudaError_t status, const char* what);
void check(cublasStatus_t status, const char* what);
void check(cufftResult status, const char* what);
// After a kernel launch: reports bad launch configurations at once (asynchronous faults surface at the next sync).
void check_launch(const char* kernel);

// Everything one device's ops need. Created on the first use of the device; lives for the whole process.
struct DeviceContext {
  int device = 0;
  int sm_count = 1;
  cudaStream_t stream = nullptr;
  cudaStream_t own_stream = nullptr;  // the backend's stream (the default unless the caller supplied one)
  cublasHandle_t cublas = nullptr;
  void* cublas_workspace = nullptr;  // cuBLAS's workspace, Ember's own (context.cu)
  unsigned long long* flag = nullptr;  // 2 device words for validation kernels: [set, offending value]
  int64_t* host_flag = nullptr;        // pinned mirror, read after a stream sync
  // Set while a compiled step is captured into a CUDA graph on this device's stream (graph_capture.hpp); ops read
  // it through capturing().
  std::atomic<GraphCapture*> capture{nullptr};
};

// The graph the calling thread captures on ctx's stream, or null. Another thread's capture on it: throws CudaError
// (this op would be captured into that graph) and marks that capture as interfered with.
GraphCapture* capturing(DeviceContext& ctx);

// The context of `device`, made current (cudaSetDevice). Throws CudaError when the device does not exist.
DeviceContext& context(int device);
inline cudaStream_t stream_of(int device) { return context(device).stream; }

// Grid for a grid-stride loop over n items: enough blocks to fill the device, no more than the items need.
constexpr int kThreads = 256;
inline unsigned grid_for(int64_t n, const DeviceContext& ctx) {
  const int64_t want = (n + kThreads - 1) / kThreads;
  const int64_t cap = int64_t{ctx.sm_count} * 32;
  return static_cast<unsigned>(want < 1 ? 1 : (want < cap ? want : cap));
}

// Grid-stride loop with 64-bit indices.
#define EMBER_CUDA_LOOP(i, n)                                                                             \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);                  \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// Runs a validation kernel that sets a flag (and writes an offending value to flag slot 1), then reads the flag
// back: one small copy and a stream sync; when it was set, calls report(value), which throws. Used where the CPU
// backend throws on bad data (index out of range, integer division by zero), so both backends raise the same
// errors. While a graph captures, the flag is one of the graph's error words instead and `report` is kept (by
// value) for the replay that finds it set (graph_capture.hpp).
template <class Launch, class Report>
void device_check(DeviceContext& ctx, Launch&& launch, Report&& report) {
  if (GraphCapture* g = capturing(ctx)) {
    launch(g->defer_check(std::function<void(int64_t)>(report)));
    return;
  }
  check(cudaMemsetAsync(ctx.flag, 0, 2 * sizeof(int64_t), ctx.stream), "cudaMemsetAsync(validation flag)");
  launch(ctx.flag);
  check(cudaMemcpyAsync(ctx.host_flag, ctx.flag, 2 * sizeof(int64_t), cudaMemcpyDeviceToHost, ctx.stream),
        "cudaMemcpyAsync(validation flag)");
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize(validation)");
  if (ctx.host_flag[0] != 0) report(ctx.host_flag[1]);
}

// Throws when a graph captures on ctx's stream: `what` (an upload of host values, a read back) cannot be part of one.
void refuse_in_capture(DeviceContext& ctx, const char* what);

// Row-major GEMM on cuBLAS (column-major): C[m,n] = alpha op(A)[m,k] op(B)[k,n] + beta C, batched with element
// strides between matrices (0 repeats one operand). Uses TF32 tensor cores only when allow_tf32() is on.
void gemm_rm(DeviceContext& ctx, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
             const float* a, int64_t lda, int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b, float beta,
             float* c, int64_t ldc, int64_t stride_c, int64_t batch);

}  // namespace ember::cuda
