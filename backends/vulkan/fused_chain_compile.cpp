// GLSL to SPIR-V at run time for the fused chains (fused_chain_glsl.hpp), through glslang's C interface: the same
// compiler VkFFT uses for its kernels (fft_plans.cpp), targeting Vulkan 1.1 / SPIR-V 1.3 like the build-time shaders.
#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>

#include <memory>
#include <string>

#include "backends/vulkan/fused_chain_glsl.hpp"
#include "backends/vulkan/vk_check.hpp"

namespace ember::vk {
namespace {

// glslang's process-wide state: set up once, kept for the life of the process (it is reference counted, so
// VkFFT's own initialization beside this one is fine).
void initialize_glslang() {
  static const bool ok = glslang_initialize_process() != 0;
  if (!ok) throw VulkanError("vulkan fused chain: glslang_initialize_process failed");
}

struct ShaderDeleter {
  void operator()(glslang_shader_t* s) const { glslang_shader_delete(s); }
};
struct ProgramDeleter {
  void operator()(glslang_program_t* p) const { glslang_program_delete(p); }
};

std::string log_of(const char* log) { return log ? log : ""; }

}  // namespace

std::vector<uint32_t> compile_compute_glsl(const std::string& source, const char* what) {
  initialize_glslang();
  glslang_input_t input{};
  input.language = GLSLANG_SOURCE_GLSL;
  input.stage = GLSLANG_STAGE_COMPUTE;
  input.client = GLSLANG_CLIENT_VULKAN;
  input.client_version = GLSLANG_TARGET_VULKAN_1_1;
  input.target_language = GLSLANG_TARGET_SPV;
  input.target_language_version = GLSLANG_TARGET_SPV_1_3;
  input.code = source.c_str();
  input.default_version = 450;
  input.default_profile = GLSLANG_NO_PROFILE;
  input.messages = GLSLANG_MSG_DEFAULT_BIT;
  input.resource = glslang_default_resource();
  std::unique_ptr<glslang_shader_t, ShaderDeleter> shader(glslang_shader_create(&input));
  if (!shader) throw VulkanError(std::string("vulkan ") + what + ": glslang_shader_create failed");
  if (!glslang_shader_preprocess(shader.get(), &input) || !glslang_shader_parse(shader.get(), &input))
    throw VulkanError(std::string("vulkan ") + what + ": the generated shader does not compile: " +
                      log_of(glslang_shader_get_info_log(shader.get())) + "\n" + source);
  std::unique_ptr<glslang_program_t, ProgramDeleter> program(glslang_program_create());
  glslang_program_add_shader(program.get(), shader.get());
  if (!glslang_program_link(program.get(), GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT))
    throw VulkanError(std::string("vulkan ") + what + ": the generated shader does not link: " +
                      log_of(glslang_program_get_info_log(program.get())));
  glslang_program_SPIRV_generate(program.get(), GLSLANG_STAGE_COMPUTE);
  std::vector<uint32_t> words(glslang_program_SPIRV_get_size(program.get()));
  glslang_program_SPIRV_get(program.get(), words.data());
  return words;
}

}  // namespace ember::vk
