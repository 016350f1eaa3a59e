#include "backends/vulkan/plan_memory.hpp"

#include <algorithm>
#include <numeric>

namespace ember::vk {

VkDeviceSize place_in_arena(const std::vector<Lifetime>& items, VkDeviceSize alignment,
                            std::vector<VkDeviceSize>& offsets) {
  auto align = [&](VkDeviceSize v) { return (v + alignment - 1) / alignment * alignment; };
  offsets.assign(items.size(), 0);
  std::vector<std::size_t> order(items.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return items[a].bytes > items[b].bytes; });
  std::vector<std::size_t> placed;
  VkDeviceSize extent = 0;
  for (std::size_t i : order) {
    // The ranges taken by placed buffers alive at the same time, by offset; the first gap that fits wins.
    std::vector<std::pair<VkDeviceSize, VkDeviceSize>> taken;
    for (std::size_t j : placed)
      if (items[j].first <= items[i].last && items[i].first <= items[j].last)
        taken.emplace_back(offsets[j], offsets[j] + items[j].bytes);
    std::sort(taken.begin(), taken.end());
    VkDeviceSize at = 0;
    for (const auto& [begin, end] : taken) {
      if (at + items[i].bytes <= begin) break;
      at = std::max(at, align(end));
    }
    offsets[i] = at;
    extent = std::max(extent, at + items[i].bytes);
    placed.push_back(i);
  }
  return align(extent);
}

}  // namespace ember::vk
