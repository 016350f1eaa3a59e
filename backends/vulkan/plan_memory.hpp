#pragma once
// Static memory planning for Vulkan plans (plan.hpp): intermediates whose lifetimes (the span of captured commands
// that use them) do not overlap share memory in one arena the plan owns.
#include <vulkan/vulkan.h>

#include <cstddef>
#include <vector>

namespace ember::vk {

struct Lifetime {
  VkDeviceSize bytes = 0;
  std::size_t first = 0, last = 0;  // indices of the first and last command using the buffer
};

// Offsets (multiples of `alignment`) in one arena such that two buffers whose lifetimes overlap never overlap in
// memory; returns the arena's size. Greedy, largest first, each at the lowest offset that fits.
VkDeviceSize place_in_arena(const std::vector<Lifetime>& items, VkDeviceSize alignment,
                            std::vector<VkDeviceSize>& offsets);

}  // namespace ember::vk
