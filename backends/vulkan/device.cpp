#include "backends/vulkan/context.hpp"
#include "backends/vulkan/vulkan_tensor.hpp"

namespace ember {

std::shared_ptr<vk::Context> VulkanDevice::get() const { return context ? context : vk::default_context(); }

std::string VulkanDevice::name() const { return "vulkan:" + get()->info().name; }

}  // namespace ember
