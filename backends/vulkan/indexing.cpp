// PLACEHOLDER (being written in this session by the owner of this op family; must not ship).
#include "backends/vulkan/launch.hpp"

namespace ember::vk {
[[noreturn]] static void pending_indexing() { throw VulkanError("vulkan: indexing ops are not implemented yet"); }
template <class T> VulkanTensor<T> gather(std::size_t, const VulkanTensor<T>&, const Index&) { pending_indexing(); }
template <class T> VulkanTensor<T> scatter_add(std::size_t, const VulkanTensor<T>&, const Index&, const VulkanTensor<T>&) { pending_indexing(); }
template <class T> VulkanTensor<T> index_select(const VulkanTensor<T>&, std::size_t, const Index&) { pending_indexing(); }
template <class T> VulkanTensor<T> index_select_add(const VulkanTensor<T>&, std::size_t, const Index&, const VulkanTensor<T>&) { pending_indexing(); }
#define EMBER_INSTANTIATE(T) \
  template VulkanTensor<T> gather<T>(std::size_t, const VulkanTensor<T>&, const Index&); \
  template VulkanTensor<T> scatter_add<T>(std::size_t, const VulkanTensor<T>&, const Index&, const VulkanTensor<T>&); \
  template VulkanTensor<T> index_select<T>(const VulkanTensor<T>&, std::size_t, const Index&); \
  template VulkanTensor<T> index_select_add<T>(const VulkanTensor<T>&, std::size_t, const Index&, const VulkanTensor<T>&);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(int64_t)
EMBER_INSTANTIATE(uint32_t)
}  // namespace ember::vk
