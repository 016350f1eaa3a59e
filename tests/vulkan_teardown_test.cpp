// Tearing down a context of Ember's own right after its last submit. lavapipe's queue thread signals a submit's
// fence and only then finishes with the submit's timeline semaphore (it locks the semaphore and links the signalled
// point into it); a context that destroyed its timeline semaphore as soon as the fence read signalled let that
// thread write into freed memory: a segfault (or a glibc assertion on a garbage mutex) in a lavapipe thread, a few
// runs in a hundred of vulkan_internals on a loaded machine, at the end of any test with a device of its own and at
// exit for the default context (tests/support/vulkan_main.cpp's shutdown_default). Context::release drains the
// queue before anything goes. These rounds end each context right after uploads through staging buffers and a
// read-back (the pattern of the tests that crashed); under load the binary crashed within a few dozen runs before.
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
  o.device_local_tensors = true;  // uploads and the read-back are staging copies, one submit each
  for (int round = 0; round < 6; ++round) {
    const auto dev = vulkan::create(o);
    // Many submit-and-wait cycles, each a fence wait the next op follows at once; the last read-back waited for its
    // submit's fence only, and the context goes right after it.
    for (int i = 0; i < 40; ++i) {
      const auto t = Tensor<Vulkan, 1>::from_values(std::vector<float>(1 << 14, static_cast<float>(i)), {1 << 14}, dev);
      EXPECT_EQ(t.add_scalar(1.0).into_data().to_vec<float>()[7], static_cast<float>(i + 1)) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace ember
