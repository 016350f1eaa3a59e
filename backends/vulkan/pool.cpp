// PLACEHOLDER (being written in this session by the owner of this op family; must not ship).
#include "backends/vulkan/launch.hpp"

namespace ember::vk {
[[noreturn]] static void pending_pool() { throw VulkanError("vulkan: pool ops are not implemented yet"); }
MaxPoolResult<FloatT, Index> max_pool2d(const FloatT&, const Pool2dOptions&) { pending_pool(); }
FloatT max_pool2d_backward(const FloatT&, const FloatT&, const Index&) { pending_pool(); }
FloatT avg_pool2d(const FloatT&, const Pool2dOptions&) { pending_pool(); }
FloatT avg_pool2d_backward(const FloatT&, const FloatT&, const Pool2dOptions&) { pending_pool(); }
FloatT adaptive_avg_pool2d(const FloatT&, std::array<int64_t, 2>) { pending_pool(); }
FloatT adaptive_avg_pool2d_backward(const FloatT&, const FloatT&) { pending_pool(); }
}  // namespace ember::vk
