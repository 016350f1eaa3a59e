#pragma once
// Caching device allocator (plain C++ interface; allocator.cu holds the CUDA side). cudaMalloc/cudaFree cost
// microseconds to milliseconds and cudaFree synchronizes the device, so freed blocks go back to per-device,
// per-size-class free lists and are reused. Reuse is safe without events because every op on a device is queued
// on that device's single stream: work that reuses a block is queued after the work that released it.
#include <cstddef>
#include <memory>

namespace ember::cuda {

struct Block {
  void* ptr = nullptr;     // device memory (nullptr for an empty tensor)
  std::size_t bytes = 0;     // requested size
  std::size_t capacity = 0;  // size class actually held (>= bytes, a multiple of 512)
  int device = 0;
  Block() = default;
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  ~Block();  // returns the memory to the cache
};

// At least `bytes` bytes on `device`, 256-byte aligned, padded to a multiple of 512 bytes (kernels that update
// bytes through 32-bit atomics may touch the padding). Throws OutOfMemory when even an emptied cache is not enough.
std::shared_ptr<Block> allocate(std::size_t bytes, int device);

}  // namespace ember::cuda
