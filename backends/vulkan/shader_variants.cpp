#include "backends/vulkan/shader_variants.hpp"

#include <fmt/format.h>

#include "backends/vulkan/context.hpp"

namespace ember::vk {

bool declares_int64(std::span<const uint32_t> spirv) {
  constexpr uint32_t kOpCapability = 17, kCapabilityInt64 = 11;
  constexpr std::size_t kHeaderWords = 5;
  for (std::size_t i = kHeaderWords; i < spirv.size();) {
    const uint32_t count = spirv[i] >> 16, opcode = spirv[i] & 0xFFFFu;
    if (opcode != kOpCapability || count == 0) break;  // capabilities lead the module
    if (count >= 2 && i + 1 < spirv.size() && spirv[i + 1] == kCapabilityInt64) return true;
    i += count;
  }
  return false;
}

std::span<const uint32_t> spirv_for(const Context& ctx, const Shader& shader) {
  if (ctx.int64()) return shader.spirv;
  if (!shader.spirv_no_int64.empty()) return shader.spirv_no_int64;
  if (declares_int64(shader.spirv))
    throw DeviceError(fmt::format("vulkan: shader {} needs shaderInt64 and has no 32-bit Int variant; this device "
                                  "runs without shaderInt64 (declare it with EMBER_SHADER_DEF_INT)",
                                  shader.name));
  return shader.spirv;
}

}  // namespace ember::vk
