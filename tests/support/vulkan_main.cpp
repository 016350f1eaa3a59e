// main() of the Vulkan test binaries: runs every test on the default Vulkan context with the Khronos validation
// layer on and a VK_EXT_debug_utils callback that fails the running test on any validation warning or error
// (messages during teardown, after the tests, fail the binary). Without any Vulkan device the binary prints why
// and exits 77, which meson reports as SKIP.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <string>

#include "backends/vulkan/context.hpp"

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
  if (!ember::vk::available(&why)) {
    std::printf("no Vulkan device: skipping the Vulkan tests (%s)\n", why.c_str());
    return 77;
  }
  const auto& info = ember::vk::default_context()->info();
  std::printf("Vulkan device: %s (api %u.%u), validation layer on\n", info.name.c_str(),
              VK_API_VERSION_MAJOR(info.api_version), VK_API_VERSION_MINOR(info.api_version));
  const int rc = RUN_ALL_TESTS();
  // Tear the context down while the validation layer is still loaded, so teardown is validated too.
  ember::vk::shutdown_default();
  if (g_messages) std::printf("%d Vulkan validation messages\n", g_messages.load());
  return rc != 0 || g_messages != 0 ? 1 : 0;
}
