#pragma once
// The CPU primitive: a contiguous row-major buffer plus its shape. Buffers are shared and never written after an
// op returns, so reshape, copies of a tensor and contiguous slices (a borrowed range, allocator.hpp) share storage
// for free.
#include <cstdint>
#include <memory>
#include <span>

#include "backends/cpu/allocator.hpp"
#include "engine/tensor/shape.hpp"

namespace ember::cpu {

template <class T>
struct CpuTensor {
  std::shared_ptr<Buffer> buffer;
  Shape shape;

  CpuTensor() = default;
  explicit CpuTensor(Shape s) : shape(std::move(s)) {
    buffer = allocate(static_cast<std::size_t>(shape.num_elements()) * sizeof(T));
  }
  CpuTensor(std::shared_ptr<Buffer> b, Shape s) : buffer(std::move(b)), shape(std::move(s)) {}

  int64_t numel() const { return shape.num_elements(); }
  T* data() { return static_cast<T*>(buffer->ptr); }
  const T* data() const { return static_cast<const T*>(buffer->ptr); }
  std::span<const T> span() const { return {data(), static_cast<std::size_t>(numel())}; }
};

struct CpuDevice {
  bool operator==(const CpuDevice&) const = default;
  const char* name() const { return "cpu"; }
};

}  // namespace ember::cpu
