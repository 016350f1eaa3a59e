// Vulkan plans beneath the C ABI (issue 17): the arena placement of intermediates, and a captured MLP whose
// intermediates share memory computing what the eager forward computes. Runs on the default context with
// validation and synchronization validation on (tests/support/vulkan_main.cpp), like vulkan_internals.
#include <gtest/gtest.h>

#include <random>

#include "backends/vulkan/context.hpp"
#include "backends/vulkan/interop.hpp"
#include "backends/vulkan/plan.hpp"
#include "backends/vulkan/plan_memory.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "engine/ember.hpp"
#include "engine/nn/nn.hpp"

namespace ember {
namespace {

bool overlap(std::size_t a0, std::size_t a1, std::size_t b0, std::size_t b1) { return a0 <= b1 && b0 <= a1; }

TEST(VulkanPlanMemory, BuffersAliveAtOnceNeverShareBytes) {
  // A: commands 0-1, B: 2-3 (may share A's bytes), C: 1-2 (alive with both).
  std::vector<vk::Lifetime> items = {{100, 0, 1}, {100, 2, 3}, {50, 1, 2}};
  std::vector<VkDeviceSize> at;
  EXPECT_EQ(vk::place_in_arena(items, 64, at), 192u);
  EXPECT_EQ(at, (std::vector<VkDeviceSize>{0, 0, 128}));

  std::mt19937 rng(17);
  items.clear();
  VkDeviceSize total = 0;
  for (int i = 0; i < 300; ++i) {
    const std::size_t first = rng() % 100, len = rng() % 20;
    items.push_back({1 + rng() % 5000, first, first + len});
    total += items.back().bytes;
  }
  const VkDeviceSize size = vk::place_in_arena(items, 256, at);
  EXPECT_LT(size, total) << "nothing was shared";
  for (std::size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(at[i] % 256, 0u);
    EXPECT_LE(at[i] + items[i].bytes, size);
    for (std::size_t j = i + 1; j < items.size(); ++j)
      if (overlap(items[i].first, items[i].last, items[j].first, items[j].last)) {
        EXPECT_FALSE(at[i] < at[j] + items[j].bytes && at[j] < at[i] + items[i].bytes) << i << " and " << j;
      }
  }
}

TEST(VulkanPlan, IntermediatesShareAnArenaAndResultsMatchEager) {
  auto ctx = vk::default_context();
  VulkanDevice dev{ctx};
  std::vector<nn::Linear<Vulkan>> layers;
  for (int i = 0; i < 6; ++i) layers.push_back(nn::LinearConfig{32, 32}.init<Vulkan>(dev));
  auto forward = [&](Tensor<Vulkan, 2> h) {
    for (const auto& l : layers) h = l.forward(h).relu();
    return h;
  };
  const auto x = Tensor<Vulkan, 2>::from_values(std::vector<float>(8 * 32, 0.25f), {8, 32}, dev);
  const auto want = forward(x).into_data().to_vec<float>();

  auto plan = std::make_shared<vk::Plan>(ctx);
  plan->begin();
  vk::VulkanTensor<float> in{ctx, plan->add_input(8 * 32 * 4), Shape({8, 32})};
  const auto y = forward(Tensor<Vulkan, 2>(in));
  plan->end({{y.primitive().alloc, y.primitive().bytes()}});
  EXPECT_GT(plan->arena_bytes(), 0u);
  EXPECT_LT(plan->arena_bytes(), plan->intermediate_bytes());
  EXPECT_GT(plan->barriers(), 0u);

  // Ember's own buffers stand in for the host's.
  const auto out = Tensor<Vulkan, 2>::zeros({8, 32}, dev);
  ctx->synchronize();
  plan->bind_input(0, x.primitive().alloc->buffer(), x.primitive().alloc->offset());
  plan->bind_output(0, out.primitive().alloc->buffer(), out.primitive().alloc->offset());
  for (int frame = 0; frame < 2; ++frame) {
    vulkan::host_wait(dev, plan->submit());
    const auto got = out.into_data().to_vec<float>();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << i;
  }
}

}  // namespace
}  // namespace ember
