#pragma once
// The Vulkan primitive: a contiguous row-major tensor in a sub-allocation of device memory, plus its shape and
// the context it lives on. Like the CPU backend, storage is never written after the op that made it returns, so
// reshape and copies share storage. Element types: float (Float), int64_t (Int: int32 on the device where it lacks
// shaderInt64, see element_bytes), uint32_t (Bool: 0/1 words, so
// shaders need no 8-bit storage support).
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "engine/tensor/shape.hpp"

namespace ember::vk {
class Context;
class Allocation;
}  // namespace ember::vk

namespace ember {

// A Vulkan device = a context. Default-constructed: the process-wide default context (created on first use).
struct VulkanDevice {
  std::shared_ptr<vk::Context> context;

  std::shared_ptr<vk::Context> get() const;  // resolves the default
  bool operator==(const VulkanDevice& o) const { return get() == o.get(); }
  std::string name() const;
};

namespace vk {

// Bytes of one Int element on ctx: 8, or 4 on a device run without shaderInt64, where Int tensors are stored and
// computed as int32 (Context::int64(); defined in context.cpp).
uint32_t int_element_bytes(const Context& ctx);
template <class T>
uint32_t element_bytes(const Context& ctx) {
  if constexpr (std::is_same_v<T, int64_t>) return int_element_bytes(ctx);
  else return static_cast<uint32_t>(sizeof(T));
}

template <class T>
struct VulkanTensor {
  std::shared_ptr<Context> ctx;
  std::shared_ptr<Allocation> alloc;
  Shape shape;

  int64_t numel() const { return shape.num_elements(); }
  uint64_t bytes() const { return static_cast<uint64_t>(numel()) * element_bytes<T>(*ctx); }
};

}  // namespace vk
}  // namespace ember
