// A machine without the Vulkan loader: Ember opens libvulkan.so.1 with dlopen (backends/vulkan/loader.hpp), so the
// program starts and creating a context fails with a VulkanError that names the file and the package, instead of
// the process failing to start. EMBER_VULKAN_LOADER points the loader at a file that does not exist; it is read on
// first use, so it is set before anything touches Vulkan (this binary holds only these tests).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "backends/vulkan/context.hpp"
#include "backends/vulkan/loader.hpp"

namespace {

constexpr const char* kMissing = "libvulkan-ember-test-missing.so.1";

class MissingLoader : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { setenv("EMBER_VULKAN_LOADER", kMissing, 1); }
};

TEST_F(MissingLoader, ContextCreationRaisesAVulkanErrorNamingTheLoaderAndThePackage) {
  try {
    ember::vk::Context ctx{ember::vk::ContextOptions{}};
    FAIL() << "a context was created without a loader";
  } catch (const ember::VulkanError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(std::string(kMissing) + " not found: install the Vulkan loader (Debian: libvulkan1)"),
              std::string::npos)
        << msg;
  }
}

TEST_F(MissingLoader, AvailableSaysWhyAndEveryCallFailsTheSameWay) {
  std::string why;
  EXPECT_FALSE(ember::vk::available(&why));
  EXPECT_NE(why.find("install the Vulkan loader"), std::string::npos) << why;
  // Opened once: a second attempt gives the same answer, not a crash or a different error.
  EXPECT_THROW(ember::vk::loader_get_instance_proc_addr(), ember::VulkanError);
  EXPECT_THROW(ember::vk::loader_symbol("vkCreateInstance"), ember::VulkanError);
}

}  // namespace
