// main() of the Vulkan test binaries: runs every test on the default Vulkan context with the Khronos validation
// layer on, its synchronization validation included (hazards between commands without a barrier, which lavapipe's
// in-order execution never shows in results), and a VK_EXT_debug_utils callback that fails the running test on any
// validation warning or error (messages during teardown, after the tests, fail the binary).
// Only a machine without any Vulkan physical device skips (exit 77, which meson reports as SKIP); any other failure
// to create the context -- the validation layer missing, a device without Ember's features -- fails the binary with
// the reason, so a broken setup can never pass as "skipped".
// EMBER_VULKAN_DEVICE_LOCAL=1 runs the same tests with tensor memory the host never maps (the staging paths);
// EMBER_VULKAN_NO_INT64=1 on a device created without shaderInt64 (Int tensors as int32, the EMBER_NO_INT64 shaders).
// EMBER_VULKAN_FLOAT16=1 (or auto) with the f16 GEMM variant (test_backends.hpp's gemm_tol loosens the GEMM-backed
// cases to f16's bound only when Context::float16() says it runs); on a device without shaderFloat16 that run would
// only repeat the f32 one, so it skips (77). auto also enables f16 storage where the device has it (plans only).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "backends/vulkan/context.hpp"
#include "backends/vulkan/memory.hpp"

namespace {
std::atomic<int> g_messages{0};
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ember::vk::ContextOptions options;
  options.validation = true;
  options.on_validation_message = [](const std::string& m) {
    ++g_messages;
    if (::testing::UnitTest::GetInstance()->current_test_info()) ADD_FAILURE() << "Vulkan validation " << m;
    else std::fprintf(stderr, "Vulkan validation (outside a test) %s\n", m.c_str());
  };
  ember::vk::set_default_options(options);
  std::string why;
  if (ember::vk::physical_device_count(&why) == 0) {
    std::printf("no Vulkan device: skipping the Vulkan tests (%s)\n", why.c_str());
    return 77;
  }
  std::shared_ptr<ember::vk::Context> ctx;
  try {
    ctx = ember::vk::default_context();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED: a Vulkan device exists but the test context could not be created: %s\n", e.what());
    return 1;
  }
  const auto& info = ctx->info();
  std::printf("Vulkan device: %s (api %u.%u), validation layer on, synchronization validation %s, tensor memory %s\n",
              info.name.c_str(), VK_API_VERSION_MAJOR(info.api_version), VK_API_VERSION_MINOR(info.api_version),
              info.synchronization_validation ? "on" : "off",
              ctx->allocator().host_visible(ember::vk::MemoryUse::Tensor) ? "host-visible" : "device-local (staging)");
  std::printf("Int tensors on the device: %s\n", ctx->int64() ? "int64 (shaderInt64)" : "int32 (no shaderInt64)");
  if (std::getenv("EMBER_VULKAN_NO_INT64") && ctx->int64()) {
    std::fprintf(stderr, "FAILED: EMBER_VULKAN_NO_INT64 is set but the device runs with shaderInt64\n");
    return 1;
  }
  std::printf("GEMM (matmul, linear, conv): %s\n", ctx->float16() ? "f16 variant (shaderFloat16)" : "f32");
  std::printf("Plans' GEMM weights: %s\n", ctx->float16_storage() ? "f16 copies (storageBuffer16BitAccess)" : "f32");
  if (std::getenv("EMBER_VULKAN_FLOAT16") && !ctx->float16()) {
    std::printf("EMBER_VULKAN_FLOAT16 is set but the device lacks shaderFloat16: skipping (the f32 runs cover it)\n");
    return 77;
  }
  if (info.device_local_tensors && ctx->allocator().host_visible(ember::vk::MemoryUse::Tensor)) {
    std::fprintf(stderr, "FAILED: EMBER_VULKAN_DEVICE_LOCAL is set but tensor memory is host-visible\n");
    return 1;
  }
  ctx.reset();
  const int rc = RUN_ALL_TESTS();
  // Tear the context down while the validation layer is still loaded, so teardown is validated too.
  ember::vk::shutdown_default();
  if (g_messages) std::printf("%d Vulkan validation messages\n", g_messages.load());
  return rc != 0 || g_messages != 0 ? 1 : 0;
}
