#pragma once
// The CUDA backend's runtime controls, in plain C++ (no CUDA headers), so engine code and tests can use them
// with g++ alone. Everything here is implemented in context.cu / allocator.cu.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/tensor/error.hpp"

namespace ember::cuda {

// A CUDA runtime, cuBLAS or cuFFT call failed (launch failure, illegal address, no device, ...). The message names
// the call and the library's own description of the status. An engine DeviceError (engine/tensor/error.hpp).
class CudaError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

// A device allocation failed even after the allocator released every cached block. An engine OutOfMemoryError,
// not a CudaError: callers handle both through the engine's types.
class OutOfMemory : public OutOfMemoryError {
 public:
  using OutOfMemoryError::OutOfMemoryError;
};

// Number of usable CUDA devices; 0 (never an exception) when there is no driver, no device or no permission.
int device_count();
// Why device_count() is 0, in words ("" when a device exists).
std::string unavailable_reason();

// Work on `device` is queued on one stream. By default the backend creates its own (non-blocking) stream per
// device on first use; set_stream makes every later op on that device use the caller's cudaStream_t instead
// (pass nullptr to go back to the backend's own stream). The previous stream is synchronized first, so blocks the
// caching allocator recycles stay ordered after the work that used them. The caller keeps ownership of its stream
// and must not destroy it while Ember may still use it.
void set_stream(int device, void* cuda_stream);
// The cudaStream_t that ops on `device` are queued on (creates the default one if needed).
void* stream(int device);

// Blocks until all work queued on `device`'s stream (every device's when device < 0) has finished; rethrows an
// asynchronous failure (e.g. an illegal address in a kernel) as CudaError.
void synchronize(int device = -1);

// Let float matmul and convolution GEMMs use TF32 tensor cores (about 10 mantissa bits in the products). Off by
// default, so results match the CPU backend to f32 tolerance.
void set_allow_tf32(bool allow);
bool allow_tf32();

// The caching device allocator.
struct AllocatorStats {
  std::size_t cached_bytes = 0;  // free blocks kept for reuse
  std::size_t live_bytes = 0;    // blocks held by tensors or scratch buffers
  std::size_t device_allocations = 0;  // cudaMalloc calls
  std::size_t reuses = 0;              // allocations served from the cache
  std::size_t cache_flushes = 0;       // times an allocation failed and the cache was released to retry
};
AllocatorStats allocator_stats(int device = 0);
// Synchronizes `device` and returns every cached block to the driver (cudaFree).
void empty_cache(int device = 0);

}  // namespace ember::cuda
