#pragma once
// Which compiled variant of a shader a context runs. Int tensors are int64 on devices with shaderInt64 and int32
// on devices without it (Context::int64()); shaders that touch Int data are compiled both ways (shaders/int64.glsl).
#include <cstdint>
#include <span>

#include "backends/vulkan/pipelines.hpp"

namespace ember::vk {

class Context;

// The SPIR-V of `shader` for ctx. Throws DeviceError when ctx lacks shaderInt64 and the shader has only a 64-bit
// variant (a shader added without its EMBER_NO_INT64 twin): a clear error instead of a validation failure or a
// driver crash.
std::span<const uint32_t> spirv_for(const Context& ctx, const Shader& shader);

// Whether a SPIR-V module declares the Int64 capability (its OpCapability instructions come first).
bool declares_int64(std::span<const uint32_t> spirv);

}  // namespace ember::vk
