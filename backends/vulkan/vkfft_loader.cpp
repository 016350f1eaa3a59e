#include "backends/vulkan/vkfft_loader.hpp"

#include "backends/vulkan/loader.hpp"

namespace ember::vk {

const VkfftFunctions& vkfft_functions() {
  static const VkfftFunctions table = [] {
    VkfftFunctions t;
#define EMBER_VK_RESOLVE(name) t.name = reinterpret_cast<PFN_vk##name>(loader_symbol("vk" #name));
    EMBER_VKFFT_FUNCTIONS(EMBER_VK_RESOLVE)
#undef EMBER_VK_RESOLVE
    return t;
  }();
  return table;
}

}  // namespace ember::vk
