// Device contexts (one stream and one cuBLAS handle per device), status checks, the public runtime controls of
// cuda_api.hpp, and the row-major GEMM wrapper shared by matmul and convolution.
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/runtime.cuh"

namespace ember::cuda {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  const std::string msg = std::string("cuda: ") + what + " failed: " + cudaGetErrorName(status) + " (" +
                          cudaGetErrorString(status) + ")";
  if (status == cudaErrorMemoryAllocation) throw OutOfMemory(msg);
  throw CudaError(msg);
}

void check(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw CudaError(std::string("cuda: ") + what + " failed: " + cublasGetStatusName(status) + " (" +
                  cublasGetStatusString(status) + ")");
}

void check(cufftResult status, const char* what) {
  if (status == CUFFT_SUCCESS) return;
  if (status == CUFFT_ALLOC_FAILED) throw OutOfMemory(std::string("cuda: ") + what + " failed: CUFFT_ALLOC_FAILED");
  throw CudaError(std::string("cuda: ") + what + " failed: cufftResult " + std::to_string(static_cast<int>(status)));
}

void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

GraphCapture* capturing(DeviceContext& ctx) {
  GraphCapture* g = ctx.capture.load();
  if (!g || g->owner == std::this_thread::get_id()) return g;
  g->interfered = true;
  throw CudaError("cuda: another thread is capturing a CUDA graph on device " + std::to_string(ctx.device) +
                  " (a compiled step's first replay): its device work must not overlap this op");
}

void refuse_in_capture(DeviceContext& ctx, const char* what) {
  if (capturing(ctx)) throw ArgumentError(std::string(what) + " cannot be part of a CUDA graph");
}

namespace {

std::atomic<bool> g_allow_tf32{false};

// Contexts are created once per device and never destroyed: the driver may already be unloading when static
// destructors run, and a CUDA call then would fail (or crash) at exit.
struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<DeviceContext>> contexts;
  bool probed = false;
  int count = 0;
  std::string reason;
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

void probe_locked(Registry& r) {
  if (r.probed) return;
  r.probed = true;
  const cudaError_t st = cudaGetDeviceCount(&r.count);
  if (st != cudaSuccess) {
    r.count = 0;
    r.reason = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(st) + " (" + cudaGetErrorString(st) + ")";
    cudaGetLastError();  // clear the (non-sticky) error
  } else if (r.count == 0) {
    r.reason = "cudaGetDeviceCount reported 0 devices";
  }
  r.contexts.resize(static_cast<std::size_t>(r.count));
}

constexpr std::size_t kCublasWorkspace = std::size_t{32} << 20;

// cublasSetStream puts cuBLAS back on its default workspace pool: the context's own is set again after it.
void set_cublas_stream(DeviceContext& ctx) {
  check(cublasSetStream(ctx.cublas, ctx.stream), "cublasSetStream");
  check(cublasSetWorkspace(ctx.cublas, ctx.cublas_workspace, kCublasWorkspace), "cublasSetWorkspace");
}

std::unique_ptr<DeviceContext> create_context(int device) {
  auto ctx = std::make_unique<DeviceContext>();
  ctx->device = device;
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaDeviceGetAttribute(&ctx->sm_count, cudaDevAttrMultiProcessorCount, device),
        "cudaDeviceGetAttribute(multiProcessorCount)");
  check(cudaStreamCreateWithFlags(&ctx->own_stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  ctx->stream = ctx->own_stream;
  check(cublasCreate(&ctx->cublas), "cublasCreate");
  // A workspace of Ember's own, so that no GEMM allocates one while a CUDA graph captures it (issue 14); 32 MiB is
  // cuBLAS's own recommendation for Hopper (4 MiB before it).
  check(cudaMalloc(&ctx->cublas_workspace, kCublasWorkspace), "cudaMalloc(cuBLAS workspace)");
  set_cublas_stream(*ctx);
  check(cudaMalloc(&ctx->flag, 2 * sizeof(unsigned long long)), "cudaMalloc(validation flag)");
  check(cudaMallocHost(&ctx->host_flag, 2 * sizeof(int64_t)), "cudaMallocHost(validation flag)");
  return ctx;
}

}  // namespace

DeviceContext& context(int device) {
  Registry& r = registry();
  DeviceContext* ctx = nullptr;
  {
    std::lock_guard lock(r.mu);
    probe_locked(r);
    if (r.count == 0) throw CudaError("cuda: no CUDA device available (" + r.reason + ")");
    if (device < 0 || device >= r.count)
      throw CudaError("cuda: device " + std::to_string(device) + " does not exist (" + std::to_string(r.count) +
                      " device(s))");
    auto& slot = r.contexts[static_cast<std::size_t>(device)];
    if (!slot) slot = create_context(device);
    ctx = slot.get();
  }
  check(cudaSetDevice(device), "cudaSetDevice");
  return *ctx;
}

int device_count() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  probe_locked(r);
  return r.count;
}

std::string unavailable_reason() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  probe_locked(r);
  return r.reason;
}

void set_stream(int device, void* cuda_stream) {
  DeviceContext& ctx = context(device);
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize(previous stream)");
  ctx.stream = cuda_stream ? static_cast<cudaStream_t>(cuda_stream) : ctx.own_stream;
  set_cublas_stream(ctx);
}

void* stream(int device) { return context(device).stream; }

void synchronize(int device) {
  if (device >= 0) {
    check(cudaStreamSynchronize(context(device).stream), "cudaStreamSynchronize");
    return;
  }
  const int n = device_count();
  for (int d = 0; d < n; ++d) check(cudaStreamSynchronize(context(d).stream), "cudaStreamSynchronize");
}

void set_allow_tf32(bool allow) { g_allow_tf32.store(allow); }
bool allow_tf32() { return g_allow_tf32.load(); }

void gemm_rm(DeviceContext& ctx, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
             const float* a, int64_t lda, int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b, float beta,
             float* c, int64_t ldc, int64_t stride_c, int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return;
  constexpr int64_t kMax = 0x7fffffff;
  if (m > kMax || n > kMax || k > kMax || lda > kMax || ldb > kMax || ldc > kMax || batch > kMax)
    throw CudaError("cuda: gemm dimensions exceed cuBLAS's 32-bit limits (m " + std::to_string(m) + ", n " +
                    std::to_string(n) + ", k " + std::to_string(k) + ", batch " + std::to_string(batch) + ")");
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands, keep the flags.
  // k == 0 is valid for cuBLAS (C = beta C) as long as the leading dims are >= 1.
  const auto op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const auto op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ilda = static_cast<int>(lda < 1 ? 1 : lda), ildb = static_cast<int>(ldb < 1 ? 1 : ldb);
  const cublasComputeType_t compute = allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (batch == 1) {
    check(cublasGemmEx(ctx.cublas, op_b, op_a, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha,
                       b, CUDA_R_32F, ildb, a, CUDA_R_32F, ilda, &beta, c, CUDA_R_32F, static_cast<int>(ldc), compute,
                       CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
    return;
  }
  check(cublasGemmStridedBatchedEx(ctx.cublas, op_b, op_a, static_cast<int>(n), static_cast<int>(m),
                                   static_cast<int>(k), &alpha, b, CUDA_R_32F, ildb, stride_b, a, CUDA_R_32F, ilda,
                                   stride_a, &beta, c, CUDA_R_32F, static_cast<int>(ldc), stride_c,
                                   static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
}

}  // namespace ember::cuda
