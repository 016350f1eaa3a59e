// PLACEHOLDER (being written in this session by the owner of this op family; must not ship).
#include "backends/vulkan/launch.hpp"

namespace ember::vk {
[[noreturn]] static void pending_reduce() { throw VulkanError("vulkan: reduce ops are not implemented yet"); }
template <class T> VulkanTensor<T> reduce(const VulkanTensor<T>&, ReduceOp, std::size_t) { pending_reduce(); }
template <class T> VulkanTensor<T> reduce_all(const VulkanTensor<T>&, ReduceOp) { pending_reduce(); }
template <class T> Index arg_reduce(const VulkanTensor<T>&, ArgReduceOp, std::size_t) { pending_reduce(); }
#define EMBER_INSTANTIATE(T) \
  template VulkanTensor<T> reduce<T>(const VulkanTensor<T>&, ReduceOp, std::size_t); \
  template VulkanTensor<T> reduce_all<T>(const VulkanTensor<T>&, ReduceOp); \
  template Index arg_reduce<T>(const VulkanTensor<T>&, ArgReduceOp, std::size_t);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(int64_t)
}  // namespace ember::vk
