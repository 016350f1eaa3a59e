// Tearing down a context of Ember's own right after its last submit. lavapipe's queue thread signals a submit's
// fence and only then finishes with the submit's timeline semaphore (it locks the semaphore and links the signalled
// point into it); a context that destroyed its timeline semaphore as soon as the fence read signalled let that
// thread write into freed memory: a segfault, a glibc assertion on a garbage mutex or a hang in a lavapipe thread,
// a few runs in a hundred of vulkan_internals / vulkan_floor on a loaded machine, at the end of a test with a device
// of its own and at exit for the default context (tests/support/vulkan_main.cpp's shutdown_default).
// Context::release now drains the queue before anything goes. These rounds replay the pattern of the test that
// crashed most (a tight budget, uploads through staging buffers, unused blocks released, a last read-back, then the
// teardown): without the drain, 30 of 60 runs of this test alone failed, 6 at a time on 2 cores.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/vulkan/context.hpp"
#include "backends/vulkan/interop.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "engine/ember.hpp"

namespace ember {
namespace {

TEST(VulkanTeardown, ContextDestroyedRightAfterItsLastSubmit) {
  vk::ContextOptions o;
  o.validation = true;
  o.on_validation_message = [](const std::string& m) { ADD_FAILURE() << m; };
  o.device_local_tensors = true;  // uploads are staging copies
  o.memory_budget = 6 << 20;      // a tight budget: uploads finish the stream to reuse staging memory
  for (int round = 0; round < 8; ++round) {
    const auto dev = vulkan::create(o);
    std::vector<Tensor<Vulkan, 1>> held;
    bool out_of_memory = false;
    try {
      for (int i = 0; i < 100; ++i)
        held.push_back(Tensor<Vulkan, 1>::from_values(std::vector<float>(1 << 18, static_cast<float>(i)), {1 << 18}, dev));
    } catch (const DeviceOutOfMemory&) {
      out_of_memory = true;
    }
    ASSERT_TRUE(out_of_memory) << "round " << round << ": 100 MiB of tensors fit in a 6 MiB budget";
    EXPECT_EQ(held.at(1).into_data().to_vec<float>()[5], 1.0f) << "round " << round;
    held.clear();
    dev.get()->synchronize();
    dev.get()->allocator().release_unused();
    const auto y = Tensor<Vulkan, 1>::from_values(std::vector<float>{1, 2}, {2}, dev).mul_scalar(3.0);
    EXPECT_EQ(y.into_data().to_vec<float>(), (std::vector<float>{3, 6})) << "round " << round;
    // That read-back waited for its submit's fence only; the context goes right after.
  }
}

}  // namespace
}  // namespace ember
