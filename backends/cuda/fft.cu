// Fourier transforms over the last signal dim with cuFFT (see FftOp in engine/backend/ops.hpp). Complex values are
// a trailing dim of 2 floats, which is exactly cufftComplex's layout, so tensors are passed to cuFFT as they are.
// Plans are cached per (device, n, batch, kind). The inverse transforms are scaled by 1/n afterwards (cuFFT's are
// unnormalized). Any n >= 1 works, primes included (cuFFT switches to Bluestein's algorithm).
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "backends/cuda/kernels.hpp"
#include "backends/cuda/runtime.cuh"

namespace ember::cuda {
namespace {

using PlanKey = std::tuple<int, int64_t, int64_t, int>;  // device, n, batch, cufftType

// Plans are created on first use and kept for the process (never destroyed at exit: the driver may be gone). Shared:
// a CUDA graph that executes a plan holds it too (graph_capture.hpp), so dropping it from the cache does not destroy
// the work area a graph still uses.
using Plan = std::shared_ptr<cufftHandle>;
struct PlanCache {
  std::mutex mu;  // also serializes executions: a plan must not run from two threads at once
  std::map<PlanKey, Plan> plans;
};
PlanCache& plan_cache() {
  static PlanCache* c = new PlanCache;
  return *c;
}

constexpr std::size_t kMaxPlans = 64;  // beyond this, older plans are dropped (each holds a work area)

// The plan, bound to ctx's stream; while a graph captures, the graph holds it. Making one allocates its work area
// (and dropping the cache frees plans, which synchronizes): not while a graph captures.
cufftHandle plan_for(PlanCache& c, DeviceContext& ctx, int64_t n, int64_t batch, cufftType type) {
  const PlanKey key{ctx.device, n, batch, static_cast<int>(type)};
  auto it = c.plans.find(key);
  Plan plan;
  if (it != c.plans.end()) {
    plan = it->second;
  } else {
    refuse_in_capture(ctx, "making a cuFFT plan (an FFT size first seen inside the step)");
    if (n > 0x7fffffff || batch > 0x7fffffff)
      throw CudaError("cuda: fft of length " + std::to_string(n) + " x batch " + std::to_string(batch) +
                      " exceeds cuFFT's 32-bit plan sizes");
    if (c.plans.size() >= kMaxPlans) c.plans.clear();  // destroys the plans no graph holds
    cufftHandle h = 0;
    int dims[1] = {static_cast<int>(n)};
    check(cufftPlanMany(&h, 1, dims, nullptr, 1, 0, nullptr, 1, 0, type, static_cast<int>(batch)), "cufftPlanMany");
    plan = Plan(new cufftHandle(h), [](cufftHandle* p) {
      cufftDestroy(*p);
      delete p;
    });
    c.plans.emplace(key, plan);
  }
  if (GraphCapture* g = capturing(ctx)) g->resources.push_back(plan);
  check(cufftSetStream(*plan, ctx.stream), "cufftSetStream");
  return *plan;
}

__global__ void scale_kernel(float* __restrict__ x, int64_t n, float s) {
  EMBER_CUDA_LOOP(i, n) x[i] *= s;
}

// The imaginary parts of bin 0 and (even n) bin n/2 do not exist in a real signal's spectrum: zero them so C2R
// ignores them, as NumPy does.
__global__ void clear_hermitian_imag_kernel(float* __restrict__ spec, int64_t batch, int64_t bins, bool even) {
  EMBER_CUDA_LOOP(b, batch) {
    float* row = spec + b * bins * 2;
    row[1] = 0.0f;
    if (even) row[(bins - 1) * 2 + 1] = 0.0f;
  }
}

void scale(DeviceContext& ctx, CudaTensor<float>& x, float s) {
  const int64_t n = x.numel();
  if (n == 0) return;
  scale_kernel<<<grid_for(n, ctx), kThreads, 0, ctx.stream>>>(x.data(), n, s);
  check_launch("scale_kernel");
}

}  // namespace

CudaTensor<float> fft(const CudaTensor<float>& x, FftOp op, int64_t n) {
  const int dev = x.device();
  DeviceContext& ctx = context(dev);
  const std::size_t r = x.shape.rank();
  Shape out_shape = x.shape;
  int64_t batch = 0;
  switch (op) {
    case FftOp::Fft:
    case FftOp::Ifft:
      batch = x.shape.num_elements() / (2 * n);
      break;
    case FftOp::Rfft:
      batch = x.shape.num_elements() / n;
      out_shape.dims.back() = n / 2 + 1;
      out_shape.dims.push_back(2);
      break;
    case FftOp::Irfft:
      batch = x.shape.num_elements() / (2 * (n / 2 + 1));
      out_shape.dims.resize(r - 1);
      out_shape.dims.back() = n;
      break;
  }
  CudaTensor<float> out(out_shape, dev);
  if (out.numel() == 0 || batch == 0) return out;

  PlanCache& c = plan_cache();
  std::lock_guard lock(c.mu);
  switch (op) {
    case FftOp::Fft:
    case FftOp::Ifft: {
      const cufftHandle plan = plan_for(c, ctx, n, batch, CUFFT_C2C);
      // Out of place, so x (immutable, possibly shared) is left as it was.
      check(cufftExecC2C(plan, reinterpret_cast<cufftComplex*>(const_cast<float*>(x.data())),
                         reinterpret_cast<cufftComplex*>(out.data()), op == FftOp::Fft ? CUFFT_FORWARD : CUFFT_INVERSE),
            "cufftExecC2C");
      if (op == FftOp::Ifft) scale(ctx, out, 1.0f / static_cast<float>(n));
      break;
    }
    case FftOp::Rfft: {
      const cufftHandle plan = plan_for(c, ctx, n, batch, CUFFT_R2C);
      check(cufftExecR2C(plan, const_cast<float*>(x.data()), reinterpret_cast<cufftComplex*>(out.data())),
            "cufftExecR2C");
      break;
    }
    case FftOp::Irfft: {
      // C2R overwrites its input: work on a copy.
      const int64_t bins = n / 2 + 1;
      auto copy = allocate(static_cast<std::size_t>(x.numel()) * sizeof(float), dev);
      check(cudaMemcpyAsync(copy->ptr, x.data(), static_cast<std::size_t>(x.numel()) * sizeof(float),
                            cudaMemcpyDeviceToDevice, ctx.stream),
            "cudaMemcpyAsync(irfft input)");
      float* spec = static_cast<float*>(copy->ptr);
      clear_hermitian_imag_kernel<<<grid_for(batch, ctx), kThreads, 0, ctx.stream>>>(spec, batch, bins, n % 2 == 0);
      check_launch("clear_hermitian_imag_kernel");
      const cufftHandle plan = plan_for(c, ctx, n, batch, CUFFT_C2R);
      check(cufftExecC2R(plan, reinterpret_cast<cufftComplex*>(spec), out.data()), "cufftExecC2R");
      scale(ctx, out, 1.0f / static_cast<float>(n));
      break;
    }
  }
  return out;
}

}  // namespace ember::cuda
