// Issue 17 part 6, the lower feature floor, from C: ember_vulkan_requirements_query2 / ember_vulkan_feature_describe,
// a host device created without shaderInt64 (Int tensors as int32 on the device, with validation on: any use of the
// Int64 capability Ember was not given is a validation error that fails the test), and a Vulkan 1.1 host device
// without timeline semaphores (adopted, it records but never submits).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "tests/c_api/capi_support.hpp"
#include "tests/c_api/vulkan_device.hpp"
#include "tests/c_api/vulkan_host.hpp"

namespace ember::capi_test {
namespace {


Tensor ints_on(const ember_device* d, const std::vector<int64_t>& v) {
  ember_tensor* t = nullptr;
  const int64_t shape[] = {static_cast<int64_t>(v.size())};
  EXPECT_EQ(ember_tensor_from_data(d, EMBER_DTYPE_I64, v.data(), v.size() * sizeof(int64_t), shape, 1, &t), EMBER_OK)
      << ember_last_error();
  return Tensor(t);
}

// A rank-1 F32 tensor of v on device d.
Tensor f32_on_device(const ember_device* d, const std::vector<float>& v) {
  return f32_on(d, v, {static_cast<int64_t>(v.size())});
}

// The floor itself: a Vulkan 1.1 host device without shaderInt64 and without timeline semaphores.
HostFeatures vulkan11_floor_features() {
  HostFeatures features;
  features.api_version = VK_API_VERSION_1_1;
  features.shader_int64 = false;
  features.timeline_semaphore = false;
  return features;
}

Device adopt(VulkanHost& host, bool shader_int64, bool timeline_semaphore) {
  ember_vulkan_adopt_options o{};
  EXPECT_EQ(ember_vulkan_adopt_options_init(&o), EMBER_OK);
  o.shader_int64 = shader_int64 ? 1 : 0;
  o.timeline_semaphore = timeline_semaphore ? 1 : 0;
  ember_vulkan_device_desc desc = host.desc();
  ember_device* d = nullptr;
  EXPECT_EQ(ember_vulkan_device_adopt_ex(&desc, &o, &d), EMBER_OK) << ember_last_error();
  return Device(d);
}

TEST(VulkanFloor, RequirementsListRequiredAndOptionalFeatures) {
  ember_vulkan_requirements2 r{};
  r.struct_size = sizeof r;
  const ember_status s = ember_vulkan_requirements_query2(&r);
  ember_backend_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(ember_backend_query(EMBER_BACKEND_VULKAN, &info), EMBER_OK);
  if (!info.compiled) {
    EXPECT_EQ(s, EMBER_ERR_UNSUPPORTED);
    return;
  }
  ASSERT_EQ(s, EMBER_OK) << ember_last_error();
  EXPECT_EQ(r.api_version, VK_API_VERSION_1_1);
  EXPECT_EQ(r.spirv_version, 0x00010300u);
  EXPECT_EQ(r.queue_flags, static_cast<uint32_t>(VK_QUEUE_COMPUTE_BIT));
  EXPECT_EQ(r.required_features, 0u);
  EXPECT_EQ(r.optional_features, EMBER_VULKAN_FEATURE_SHADER_INT64 | EMBER_VULKAN_FEATURE_TIMELINE_SEMAPHORE |
                                     EMBER_VULKAN_FEATURE_FLOAT16 | EMBER_VULKAN_FEATURE_STORAGE_16BIT);
  EXPECT_EQ(r.device_extension_count, 0u);
  EXPECT_EQ(r.device_extensions, nullptr);

  const char* name = nullptr;
  const char* gives = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_feature_describe(EMBER_VULKAN_FEATURE_SHADER_INT64, &name, &gives));
  EXPECT_STREQ(name, "shaderInt64");
  EXPECT_TRUE(has_phrase(gives, "int32"));
  EMBER_ASSERT_OK(ember_vulkan_feature_describe(EMBER_VULKAN_FEATURE_TIMELINE_SEMAPHORE, &name, nullptr));
  EXPECT_STREQ(name, "timelineSemaphore");
  EMBER_ASSERT_OK(ember_vulkan_feature_describe(EMBER_VULKAN_FEATURE_FLOAT16, nullptr, &gives));
  EXPECT_TRUE(has_phrase(gives, "f16"));
  EMBER_EXPECT_ERR(ember_vulkan_feature_describe(EMBER_VULKAN_FEATURE_SHADER_INT64 | EMBER_VULKAN_FEATURE_FLOAT16,
                                                 &name, &gives),
                   EMBER_ERR_INVALID_ARGUMENT, "is not one EMBER_VULKAN_FEATURE_* bit");
  EMBER_EXPECT_ERR(ember_vulkan_feature_describe(0, &name, &gives), EMBER_ERR_INVALID_ARGUMENT, "is not one");

  ember_vulkan_requirements2 small{};
  small.struct_size = 8;
  EMBER_EXPECT_ERR(ember_vulkan_requirements_query2(&small), EMBER_ERR_INVALID_ARGUMENT, "struct_size 8");
  EMBER_EXPECT_ERR(ember_vulkan_requirements_query2(nullptr), EMBER_ERR_INVALID_ARGUMENT, "out is NULL");
}

// A host device without shaderInt64: Int tensors are int32 on it. Values round-trip, arithmetic wraps at 32 bits
// (documented in ember.h), values outside int32 are refused on upload and as scalars, and index ops (int indices)
// work; the host's validation layer fails the test on any Int64 use.
TEST(VulkanFloor, AdoptedDeviceWithoutShaderInt64) {
  SKIP_WITHOUT_VULKAN_DEVICE();
  HostFeatures features;
  features.shader_int64 = false;
  VulkanHost host(features);
  SKIP_WITHOUT_HOST(host);
  Device d = adopt(host, /*shader_int64=*/false, /*timeline_semaphore=*/true);
  ASSERT_TRUE(d);

  constexpr int64_t kMax = std::numeric_limits<int32_t>::max(), kMin = std::numeric_limits<int32_t>::min();
  Tensor a = ints_on(d.get(), {kMax, -5, 7, kMin});
  EXPECT_EQ(ints(a.get()), (std::vector<int64_t>{kMax, -5, 7, kMin}));
  Tensor one = ints_on(d.get(), {1, 1, 1, -1});
  ember_tensor* sum = nullptr;
  EMBER_ASSERT_OK(ember_tensor_add(a.get(), one.get(), &sum));
  Tensor tsum(sum);
  EXPECT_EQ(ints(sum), (std::vector<int64_t>{kMin, -4, 8, kMax}));  // wraps around at 32 bits

  Tensor x = f32_on_device(d.get(), {10, 20, 30, 40});
  Tensor idx = ints_on(d.get(), {3, 0, 3});
  ember_tensor* picked = nullptr;
  EMBER_ASSERT_OK(ember_tensor_index_select(x.get(), 0, idx.get(), &picked));
  Tensor tpicked(picked);
  EXPECT_EQ(floats(picked), (std::vector<float>{40, 10, 40}));
  ember_tensor* arg = nullptr;
  EMBER_ASSERT_OK(ember_tensor_argmax(x.get(), 0, 0, &arg));
  Tensor targ(arg);
  EXPECT_EQ(ints(arg), (std::vector<int64_t>{3}));
  Tensor bad_idx = ints_on(d.get(), {4});
  ember_tensor* none = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_index_select(x.get(), 0, bad_idx.get(), &none), EMBER_ERR_INDEX, "index 4");

  const int64_t too_big[] = {int64_t{1} << 40};
  const int64_t shape[] = {1};
  ember_tensor* t = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_from_data(d.get(), EMBER_DTYPE_I64, too_big, sizeof too_big, shape, 1, &t),
                   EMBER_ERR_INVALID_ARGUMENT, "outside the int32 range");
  EXPECT_EQ(t, nullptr);
}

// A Vulkan 1.1 host device with none of the optional features, adopted with timeline_semaphore = 0: Ember creates
// no semaphore (the host's validation layer would flag one), runs in host-record mode (its work recorded into the
// host's command buffer, the result read by the host's own copy), and every path that would submit fails with the
// message that names host-record mode.
TEST(VulkanFloor, AdoptedVulkan11DeviceWithoutTimelineSemaphores) {
  SKIP_WITHOUT_VULKAN_DEVICE();
  VulkanHost host(vulkan11_floor_features());
  SKIP_WITHOUT_HOST(host);
  Device d = adopt(host, /*shader_int64=*/false, /*timeline_semaphore=*/false);
  ASSERT_TRUE(d);
  Tensor a = f32_on_device(d.get(), {1, 2, 3});
  Tensor i = ints_on(d.get(), {5, -7, 9});

  VkCommandBuffer cb = host.begin_frame();
  EMBER_ASSERT_OK(ember_vulkan_record_begin(d.get(), cb, host.queue_family(), 1));
  ember_tensor* doubled = nullptr;
  EMBER_ASSERT_OK(ember_tensor_add(a.get(), a.get(), &doubled));
  Tensor tdoubled(doubled);
  ember_tensor* squared = nullptr;
  EMBER_ASSERT_OK(ember_tensor_mul(i.get(), i.get(), &squared));  // Int arithmetic, int32 on this device
  Tensor tsquared(squared);
  uint64_t fbuf = 0, foff = 0, fsize = 0, ibuf = 0, ioff = 0, isize = 0;
  EMBER_ASSERT_OK(ember_vulkan_tensor_buffer(doubled, &fbuf, &foff, &fsize));
  EMBER_ASSERT_OK(ember_vulkan_tensor_buffer(squared, &ibuf, &ioff, &isize));
  EMBER_ASSERT_OK(ember_vulkan_record_end(d.get()));
  ASSERT_EQ(fsize, 3 * sizeof(float));
  ASSERT_EQ(isize, 3 * sizeof(int32_t)) << "Int elements take 4 bytes without shaderInt64";
  HostBuffer fread = host.make_buffer(fsize), iread = host.make_buffer(isize);
  auto vk_buffer = [](uint64_t b) { return reinterpret_cast<VkBuffer>(static_cast<std::uintptr_t>(b)); };
  host.record_copy(cb, vk_buffer(fbuf), foff, fread.buffer, fsize);
  host.record_copy(cb, vk_buffer(ibuf), ioff, iread.buffer, isize);
  host.finish_frame(host.submit_frame(cb), cb);
  EMBER_ASSERT_OK(ember_vulkan_safe_frame(d.get(), 1));
  const auto* f = static_cast<const float*>(fread.mapped);
  EXPECT_EQ(std::vector<float>(f, f + 3), (std::vector<float>{2, 4, 6}));
  const auto* n = static_cast<const int32_t*>(iread.mapped);
  EXPECT_EQ(std::vector<int32_t>(n, n + 3), (std::vector<int32_t>{25, 49, 81}));
  host.free_buffer(fread);
  host.free_buffer(iread);

  // Outside host-record mode Ember would have to submit on its own.
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_add(a.get(), a.get(), &y));
  Tensor ty(y);
  constexpr const char* kMessage = "this device was adopted without timeline semaphores: use host-record mode";
  uint64_t value = 0;
  EMBER_EXPECT_ERR(ember_vulkan_submit(d.get(), &value), EMBER_ERR_UNSUPPORTED, kMessage);
  uint64_t semaphore = 0;
  EMBER_EXPECT_ERR(ember_vulkan_timeline_semaphore(d.get(), &semaphore), EMBER_ERR_UNSUPPORTED, kMessage);
  float out[3];
  EMBER_EXPECT_ERR(ember_tensor_copy_to(y, EMBER_DTYPE_F32, out, sizeof out, nullptr), EMBER_ERR_UNSUPPORTED,
                   kMessage);
}

struct PlanFree {
  void operator()(ember_vulkan_plan* p) const { ember_vulkan_plan_free(p); }
};
using Plan = std::unique_ptr<ember_vulkan_plan, PlanFree>;

// Plans on a Vulkan 1.1 device without timeline semaphores: a plan is built without any submit or wait of Ember's
// (its warm-up is a capture that is dropped; the capture itself records nothing), once the module's parameters
// were uploaded in a frame of the host's. Replayed into later frames, it gives what the eager forward recorded into
// a frame gives. ember_vulkan_warmup works there too; ember_vulkan_plan_submit would need Ember's own submit.
TEST(VulkanFloor, PlansWithoutTimelineSemaphores) {
  SKIP_WITHOUT_VULKAN_DEVICE();
  VulkanHost host(vulkan11_floor_features());
  SKIP_WITHOUT_HOST(host);
  Device d = adopt(host, /*shader_int64=*/false, /*timeline_semaphore=*/false);
  ASSERT_TRUE(d);
  uint64_t frame = 1;
  // Whatever Ember records (uploads, eager ops) goes into the host's frames: Ember cannot submit on its own.
  // `after`: the host's own pass, after Ember's.
  auto in_frame = [&](const std::function<void(VkCommandBuffer)>& f,
                      const std::function<void(VkCommandBuffer)>& after = nullptr) {
    VkCommandBuffer cb = host.begin_frame();
    EMBER_EXPECT_OK(ember_vulkan_record_begin(d.get(), cb, host.queue_family(), frame));
    f(cb);
    EMBER_EXPECT_OK(ember_vulkan_record_end(d.get()));
    if (after) after(cb);
    host.finish_frame(host.submit_frame(cb), cb);
    EMBER_ASSERT_OK(ember_vulkan_safe_frame(d.get(), frame));
    ++frame;
  };
  Module m;
  in_frame([&](VkCommandBuffer) {
    const std::vector<ember_layer_desc> layers = {linear(16, 8), layer(EMBER_LAYER_RELU), linear(8, 3)};
    ember_module* raw = nullptr;
    EMBER_EXPECT_OK(ember_module_sequential(d.get(), layers.data(), layers.size(), &raw));
    m.reset(raw);
  });
  ASSERT_TRUE(m);
  const int64_t shape[] = {4, 16};
  EMBER_ASSERT_OK(ember_vulkan_warmup(m.get(), d.get(), EMBER_DTYPE_F32, shape, 2));
  ember_vulkan_plan* raw_plan = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_create(m.get(), d.get(), EMBER_DTYPE_F32, shape, 2, &raw_plan));
  Plan plan(raw_plan);

  constexpr VkDeviceSize in_bytes = 4 * 16 * sizeof(float), out_bytes = 4 * 3 * sizeof(float);
  HostBuffer in = host.make_buffer(in_bytes), planned = host.make_buffer(out_bytes), eager = host.make_buffer(out_bytes);
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_input(plan.get(), 0, reinterpret_cast<uint64_t>(in.buffer), 0));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_output(plan.get(), 0, reinterpret_cast<uint64_t>(planned.buffer), 0));
  for (int f = 0; f < 3; ++f) {
    std::vector<float> x(4 * 16);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.3f * static_cast<float>(f) + 0.17f * static_cast<float>(i));
    std::memcpy(in.mapped, x.data(), in_bytes);
    std::vector<Tensor> keep;  // the eager forward's tensors live until the frame has executed
    uint64_t buf = 0, off = 0, size = 0;
    in_frame(
        [&](VkCommandBuffer cb) {
          EMBER_EXPECT_OK(ember_vulkan_plan_record(plan.get(), cb));
          ember_tensor* tx = nullptr;
          EMBER_EXPECT_OK(ember_vulkan_tensor_wrap_buffer(d.get(), reinterpret_cast<uint64_t>(in.buffer), 0,
                                                          EMBER_DTYPE_F32, shape, 2, &tx));
          keep.emplace_back(tx);
          keep.push_back(forward(m.get(), tx));
          EMBER_EXPECT_OK(ember_vulkan_tensor_buffer(keep.back().get(), &buf, &off, &size));
        },
        [&](VkCommandBuffer cb) {
          EXPECT_EQ(size, out_bytes);
          host.record_copy(cb, reinterpret_cast<VkBuffer>(static_cast<std::uintptr_t>(buf)), off, eager.buffer,
                           out_bytes);
        });
    const auto* p = static_cast<const float*>(planned.mapped);
    const auto* e = static_cast<const float*>(eager.mapped);
    for (int i = 0; i < 12; ++i) EXPECT_NEAR(p[i], e[i], 1e-5f + 1e-5f * std::fabs(e[i])) << "frame " << f << " [" << i << "]";
    EXPECT_NE(std::vector<float>(p, p + 12), std::vector<float>(12, 0.0f)) << "the plan wrote nothing";
  }
  uint64_t value = 0;
  EMBER_EXPECT_ERR(ember_vulkan_plan_submit(plan.get(), &value), EMBER_ERR_UNSUPPORTED,
                   "adopted without timeline semaphores");
  for (HostBuffer* b : {&in, &planned, &eager}) host.free_buffer(*b);
}

// ember_vulkan_plan_submit is Ember's own submit: inside a host frame it is refused before anything is recorded
// (naming the call and what to do instead), and outside the frame the same plan submits.
TEST(VulkanFloor, PlanSubmitInsideAFrameIsRefused) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device d = adopt(host, /*shader_int64=*/true, /*timeline_semaphore=*/true);
  ASSERT_TRUE(d);
  Tensor w = f32_on_device(d.get(), {1, 2, 3, 4});
  ember_vulkan_plan* raw = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_capture_begin(d.get(), &raw));
  Plan plan(raw);
  const int64_t s[] = {4};
  ember_tensor *x = nullptr, *y = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_add_input(raw, EMBER_DTYPE_F32, s, 1, &x));
  Tensor tx(x);
  EMBER_ASSERT_OK(ember_tensor_mul(x, w.get(), &y));
  Tensor ty(y);
  const ember_tensor* outs[] = {y};
  EMBER_ASSERT_OK(ember_vulkan_plan_capture_end(raw, outs, 1));
  HostBuffer in = host.make_buffer(4 * sizeof(float)), out = host.make_buffer(4 * sizeof(float));
  const float xs[] = {1, -1, 0.5f, 2};
  std::memcpy(in.mapped, xs, sizeof xs);
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_input(raw, 0, reinterpret_cast<uint64_t>(in.buffer), 0));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_output(raw, 0, reinterpret_cast<uint64_t>(out.buffer), 0));
  VkCommandBuffer cb = host.begin_frame();
  EMBER_ASSERT_OK(ember_vulkan_record_begin(d.get(), cb, host.queue_family(), 1));
  uint64_t value = 0;
  EMBER_EXPECT_ERR(ember_vulkan_plan_submit(raw, &value), EMBER_ERR_UNSUPPORTED,
                   "ember_vulkan_plan_submit (record the plan into the frame instead) in host-record mode");
  EMBER_ASSERT_OK(ember_vulkan_record_end(d.get()));
  host.finish_frame(host.submit_frame(cb), cb);
  EMBER_ASSERT_OK(ember_vulkan_safe_frame(d.get(), 1));
  EMBER_ASSERT_OK(ember_vulkan_plan_submit(raw, &value));
  EMBER_ASSERT_OK(ember_vulkan_host_wait(d.get(), value));
  const auto* got = static_cast<const float*>(out.mapped);
  EXPECT_EQ(std::vector<float>(got, got + 4), (std::vector<float>{1, -2, 1.5f, 8}));
  plan.reset();
  host.free_buffer(in);
  host.free_buffer(out);
}

}  // namespace
}  // namespace ember::capi_test
