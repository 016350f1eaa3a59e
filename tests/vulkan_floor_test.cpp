// Issue 17 part 6, the lower feature floor, inside the Vulkan backend: Int tensors as int32 on a context without
// shaderInt64 (storage size, range checks at the boundary, 32-bit wrap-around, scalars beyond int32), a context
// adopted without timeline semaphores (records, never submits), and the f16 GEMM variant (used, and within f16's
// error bound). The op suite itself runs without shaderInt64 as op_suite_vulkan_no_int64. Validation is on for
// every context here (tests/support/vulkan_main.cpp for the default one).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/vulkan/commands.hpp"
#include "backends/vulkan/context.hpp"
#include "backends/vulkan/interop.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "engine/ember.hpp"

namespace ember {
namespace {

using I1 = Tensor<Vulkan, 1, Int>;
using T2 = Tensor<Vulkan, 2>;
constexpr int64_t kMax32 = std::numeric_limits<int32_t>::max(), kMin32 = std::numeric_limits<int32_t>::min();

vk::ContextOptions validated() {
  vk::ContextOptions o;
  o.validation = true;
  o.on_validation_message = [](const std::string& m) { ADD_FAILURE() << "Vulkan validation " << m; };
  return o;
}

TEST(VulkanFloor, IntTensorsAreInt32WithoutShaderInt64) {
  vk::ContextOptions o = validated();
  o.shader_int64 = false;
  const auto dev = vulkan::create(o);
  ASSERT_FALSE(dev.get()->int64());
  const auto x = I1::from_values(std::vector<int64_t>{kMax32, -7, 0, kMin32}, {4}, dev);
  EXPECT_EQ(vulkan::buffer_of(x).size, 16u) << "four Int elements should take 4 bytes each";
  EXPECT_EQ(x.into_data().to_vec<int64_t>(), (std::vector<int64_t>{kMax32, -7, 0, kMin32}));
  // Arithmetic wraps around at 32 bits (ember.h, README): like a 32-bit device int.
  EXPECT_EQ(x.add_scalar(1.0).into_data().to_vec<int64_t>(), (std::vector<int64_t>{kMin32, -6, 1, kMin32 + 1}));
  EXPECT_EQ(x.mul_scalar(2.0).into_data().to_vec<int64_t>(), (std::vector<int64_t>{-2, -14, 0, 0}));
  EXPECT_EQ(x.sum().into_data().to_vec<int64_t>(), (std::vector<int64_t>{-8}));
  // Scalars beyond int32: comparisons have one answer for every element, arithmetic operands are refused.
  EXPECT_EQ(x.lt(3e9).into_data().to_vec<int64_t>(), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(x.gt(-3e9).into_data().to_vec<int64_t>(), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_THROW((void)x.add_scalar(3e9), ArgumentError);
  // Values outside int32 are refused at the boundary, with the reason.
  try {
    (void)I1::from_values(std::vector<int64_t>{1, int64_t{1} << 40}, {2}, dev);
    ADD_FAILURE() << "an Int value beyond int32 was accepted";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("1099511627776 is outside the int32 range"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)I1::full({2}, 5e9, dev), ArgumentError);
  EXPECT_THROW((void)I1::arange(0, int64_t{1} << 33, dev), ArgumentError);
  EXPECT_EQ(I1::arange(-2, 2, dev).into_data().to_vec<int64_t>(), (std::vector<int64_t>{-2, -1, 0, 1}));
  // The same values on a context with shaderInt64 take 8 bytes each and do not wrap.
  const auto wide = I1::from_values(std::vector<int64_t>{kMax32}, {1});
  if (wide.primitive().ctx->int64()) {
    EXPECT_EQ(vulkan::buffer_of(wide).size, 8u);
    EXPECT_EQ(wide.add_scalar(1.0).into_data().to_vec<int64_t>()[0], kMax32 + 1);
  }
}

TEST(VulkanFloor, OwnDeviceNeedsTimelineSemaphores) {
  vk::ContextOptions o = validated();
  o.timeline_semaphore = false;
  EXPECT_THROW((void)vulkan::create(o), ArgumentError);
}

// A context adopted with timeline_semaphore = false (the host's device lacks them, e.g. Vulkan 1.1): no semaphore
// is created, work is recorded, and every submit path fails with the message that points to host-record mode.
TEST(VulkanFloor, AdoptedWithoutTimelineSemaphoresNeverSubmits) {
  auto host = vk::default_context();
  vulkan::ExternalDevice ext;
  ext.instance = host->instance();
  ext.physical_device = host->physical_device();
  ext.device = host->device();
  ext.queue_family = host->queue_family();
  vk::ContextOptions o;
  o.timeline_semaphore = false;
  const auto dev = vulkan::adopt(ext, o);
  EXPECT_FALSE(dev.get()->timeline_semaphores());
  const auto submits = dev.get()->stream().stats().submits;
  const auto x = T2::from_values(std::vector<float>{1, 2, 3, 4}, {2, 2}, dev);
  const auto y = x.add(x);
  const std::string message = "this device was adopted without timeline semaphores: use host-record mode";
  auto expect_refused = [&](auto&& f, const char* what) {
    try {
      f();
      ADD_FAILURE() << what << " did not fail";
    } catch (const DeviceError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << what << ": " << e.what();
    }
  };
  expect_refused([&] { (void)vulkan::submit(dev); }, "submit");
  expect_refused([&] { (void)vulkan::timeline(dev); }, "timeline");
  expect_refused([&] { (void)y.into_data(); }, "into_data");
  EXPECT_EQ(dev.get()->stream().stats().submits, submits);
}

// The f16 GEMM (gemm.comp HALF) runs where the device has shaderFloat16 and f16 variants are asked for: its
// results differ from the f32 GEMM's (so it really ran) by no more than f16 rounding of inputs and products allows.
TEST(VulkanFloor, Float16GemmIsUsedAndWithinItsErrorBound) {
  vk::ContextOptions o = validated();
  o.shader_float16 = true;
  const auto dev = vulkan::create(o);
  if (!dev.get()->float16()) GTEST_SKIP() << "this device lacks shaderFloat16";
  constexpr int64_t m = 33, k = 70, n = 45;  // not multiples of the tile: edges too
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> a(m * k), b(k * n);
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = u(rng);
  const auto c16 = T2::from_values(a, {m, k}, dev).matmul(T2::from_values(b, {k, n}, dev)).into_data().to_vec<float>();
  const auto c32 = T2::from_values(a, {m, k}).matmul(T2::from_values(b, {k, n})).into_data().to_vec<float>();
  double max16 = 0, max32 = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        exact += double(a[i * k + p]) * b[p * n + j];
        magnitude += std::abs(double(a[i * k + p]) * b[p * n + j]);
      }
      // Each product: two inputs rounded to f16 and the product rounded (3 * 2^-11), plus f32 summation.
      const double bound = magnitude * (3.0 * std::ldexp(1.0, -11) + k * std::ldexp(1.0, -24));
      const double e16 = std::abs(c16[i * n + j] - exact), e32 = std::abs(c32[i * n + j] - exact);
      EXPECT_LE(e16, bound) << "c[" << i << "][" << j << "]";
      max16 = std::max(max16, e16);
      max32 = std::max(max32, e32);
    }
  }
  EXPECT_GT(max16, 10 * max32) << "the f16 context gave f32-accurate results: the f16 variant did not run";
}

// The f16 features of this device, read independently of Ember.
struct F16Features {
  bool arithmetic = false, storage = false;
};
F16Features device_f16(const vk::Context& ctx) {
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.pNext = &f11;
  VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f.pNext = &f12;
  ctx.fn().GetPhysicalDeviceFeatures2(ctx.physical_device(), &f);
  return {f12.shaderFloat16 == VK_TRUE, f11.storageBuffer16BitAccess == VK_TRUE};
}

// float16_auto on Ember's own device: each f16 variant exactly where the device has its feature (which Ember then
// enables: validation flags any use of a capability not enabled); storage_float16 alone takes storage only.
TEST(VulkanFloor, Float16AutoTakesEachVariantTheDeviceHas) {
  vk::ContextOptions o = validated();
  o.float16_auto = true;
  const auto dev = vulkan::create(o);
  const F16Features has = device_f16(*dev.get());
  EXPECT_EQ(dev.get()->float16(), has.arithmetic);
  EXPECT_EQ(dev.get()->float16_storage(), has.storage);

  vk::ContextOptions s = validated();
  s.storage_float16 = true;
  const auto storage_only = vulkan::create(s);
  EXPECT_FALSE(storage_only.get()->float16());
  EXPECT_EQ(storage_only.get()->float16_storage(), has.storage);
  // f16 storage changes plans only: an eager matmul stays f32 (exact here: small integers).
  const auto c = T2::from_values(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, storage_only)
                     .matmul(T2::from_values(std::vector<float>{1, 0, 0, 1, 2049, 1}, {3, 2}, storage_only))
                     .into_data()
                     .to_vec<float>();
  EXPECT_EQ(c, (std::vector<float>{6148, 5, 12298, 11})) << "2049 is not an f16 value: an f16 read would give 2048";

  vk::ContextOptions off = validated();
  const auto plain = vulkan::create(off);
  EXPECT_FALSE(plain.get()->float16());
  EXPECT_FALSE(plain.get()->float16_storage());
}

}  // namespace
}  // namespace ember
