#pragma once
// The CUDA primitive: a contiguous row-major device buffer plus its shape, like the CPU backend's. Buffers are
// never written after the op that produced them returns, so reshape and copies share storage.
#include <cstdint>
#include <memory>

#include "backends/cuda/allocator.hpp"
#include "engine/tensor/shape.hpp"

namespace ember::cuda {

struct CudaDevice {
  int index = 0;
  bool operator==(const CudaDevice&) const = default;
  const char* name() const { return "cuda"; }
};

template <class T>
struct CudaTensor {
  std::shared_ptr<Block> buffer;
  Shape shape;

  CudaTensor() = default;
  CudaTensor(Shape s, int device) : shape(std::move(s)) {
    buffer = allocate(static_cast<std::size_t>(shape.num_elements()) * sizeof(T), device);
  }
  CudaTensor(std::shared_ptr<Block> b, Shape s) : buffer(std::move(b)), shape(std::move(s)) {}

  int64_t numel() const { return shape.num_elements(); }
  int device() const { return buffer ? buffer->device : 0; }
  T* data() { return static_cast<T*>(buffer->ptr); }
  const T* data() const { return static_cast<const T*>(buffer->ptr); }
};

}  // namespace ember::cuda
