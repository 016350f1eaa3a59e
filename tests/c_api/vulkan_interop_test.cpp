// Vulkan from C: Ember's own Vulkan device through ember_device_create (results match the CPU), and a device the
// host owns (VulkanHost, with validation that fails the test on any message) adopted through ember.h, fed from a
// wrapped host buffer and read back with the host's own copy after waiting on Ember's timeline semaphore.
// Only elementwise ops are used: they are what every Vulkan build has.
#include <cmath>
#include <cstring>

#include "tests/c_api/capi_support.hpp"
#include "tests/c_api/vulkan_device.hpp"
#include "tests/c_api/vulkan_host.hpp"

namespace ember::capi_test {
namespace {


ember_backend_info vulkan_info() {
  ember_backend_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(ember_backend_query(EMBER_BACKEND_VULKAN, &info), EMBER_OK) << ember_last_error();
  return info;
}

Device vulkan_device(int32_t index = 0) {
  ember_device* d = nullptr;
  EXPECT_EQ(ember_device_create(EMBER_BACKEND_VULKAN, index, &d), EMBER_OK) << ember_last_error();
  return Device(d);
}

// exp(a) * b + 1 on `d`.
Tensor exp_mul_add_one(const ember_device* d, const std::vector<float>& a, const std::vector<float>& b) {
  Tensor ta = f32_on(d, a, {2, 3}), tb = f32_on(d, b, {2, 3});
  ember_tensor *e = nullptr, *m = nullptr, *r = nullptr;
  EXPECT_EQ(ember_tensor_unary(ta.get(), EMBER_UNARY_EXP, &e), EMBER_OK) << ember_last_error();
  Tensor te(e);
  EXPECT_EQ(ember_tensor_mul(te.get(), tb.get(), &m), EMBER_OK) << ember_last_error();
  Tensor tm(m);
  EXPECT_EQ(ember_tensor_scalar(tm.get(), EMBER_SCALAR_ADD, 1.0, &r), EMBER_OK) << ember_last_error();
  return Tensor(r);
}

TEST(VulkanFromC, BackendInfoMatchesTheMachine) {
  const ember_backend_info info = vulkan_info();
  EXPECT_STREQ(info.name, "vulkan");
  if (!info.compiled) {
    EXPECT_EQ(info.usable, 0);
    EXPECT_EQ(info.device_count, 0);
    return;
  }
  uint32_t n = 0;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  if (vkCreateInstance(&ci, nullptr, &instance) == VK_SUCCESS) {
    vkEnumeratePhysicalDevices(instance, &n, nullptr);
    vkDestroyInstance(instance, nullptr);
  }
  EXPECT_EQ(info.device_count, static_cast<int32_t>(n));
  EXPECT_EQ(info.usable, n > 0 ? 1 : 0);
  EXPECT_EQ(info.float_dtype, EMBER_DTYPE_F32);
}

TEST(VulkanFromC, OwnDeviceComputesWhatTheCpuComputes) {
  SKIP_WITHOUT_VULKAN_DEVICE();
  Device dev = vulkan_device(0);
  const std::vector<float> a{-1.5f, 0.0f, 0.25f, 1.0f, 2.0f, 3.5f}, b{2.0f, -1.0f, 0.5f, 4.0f, -0.25f, 1.0f};
  Tensor on_gpu = exp_mul_add_one(dev.get(), a, b);
  Tensor on_cpu = exp_mul_add_one(nullptr, a, b);
  EXPECT_EQ(shape_of(on_gpu.get()), (std::vector<int64_t>{2, 3}));
  const auto g = floats(on_gpu.get()), c = floats(on_cpu.get());
  ASSERT_EQ(g.size(), c.size());
  for (std::size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], c[i], 1e-5f * std::max(1.0f, std::fabs(c[i]))) << i;

  // The tensor knows its device; a second handle of index 0 is the same device (tensors combine).
  ember_device* where = nullptr;
  EMBER_ASSERT_OK(ember_tensor_device(on_gpu.get(), &where));
  Device where_h(where);
  int32_t backend = -1, index = -1;
  EMBER_ASSERT_OK(ember_device_info(where, &backend, &index));
  EXPECT_EQ(backend, EMBER_BACKEND_VULKAN);
  EXPECT_EQ(index, 0);
  Tensor again = f32_on(where, a, {2, 3});
  ember_tensor* sum = nullptr;
  EMBER_EXPECT_OK(ember_tensor_add(on_gpu.get(), again.get(), &sum));
  ember_tensor_free(sum);

  // Int and bool tensors, and a comparison, round-trip through the host.
  const std::vector<int64_t> iv{3, -2, 7};
  const int64_t ishape[] = {3};
  ember_tensor *ti = nullptr, *cmp = nullptr;
  EMBER_ASSERT_OK(ember_tensor_from_data(dev.get(), EMBER_DTYPE_I64, iv.data(), 24, ishape, 1, &ti));
  Tensor tti(ti);
  EXPECT_EQ(ints(ti), iv);
  EMBER_ASSERT_OK(ember_tensor_compare_scalar(ti, EMBER_CMP_GT, 0.0, &cmp));
  Tensor tcmp(cmp);
  uint8_t flags[3] = {9, 9, 9};
  EMBER_ASSERT_OK(ember_tensor_copy_to(cmp, EMBER_DTYPE_BOOL, flags, sizeof flags, nullptr));
  EXPECT_EQ(flags[0], 1);
  EXPECT_EQ(flags[1], 0);
  EXPECT_EQ(flags[2], 1);
}

TEST(VulkanFromC, DeviceErrors) {
  const ember_backend_info info = vulkan_info();
  ember_device* d = reinterpret_cast<ember_device*>(0x1);
  if (!info.compiled) {
    EMBER_EXPECT_ERR(ember_device_create(EMBER_BACKEND_VULKAN, 0, &d), EMBER_ERR_UNSUPPORTED, "not compiled");
    EXPECT_EQ(d, nullptr);
    return;
  }
  if (!info.usable) {
    EMBER_EXPECT_ERR(ember_device_create(EMBER_BACKEND_VULKAN, 0, &d), EMBER_ERR_UNSUPPORTED, "vulkan");
    EXPECT_EQ(d, nullptr);
    return;
  }
  EMBER_EXPECT_ERR(ember_device_create(EMBER_BACKEND_VULKAN, info.device_count, &d), EMBER_ERR_INDEX, "device(s)");
  EXPECT_EQ(d, nullptr);
  EMBER_EXPECT_ERR(ember_device_create(EMBER_BACKEND_VULKAN, -1, &d), EMBER_ERR_INDEX, "got -1");

  // Mixing backends in one op is refused, never silently copied.
  Device dev = vulkan_device(0);
  Tensor g = f32_on(dev.get(), {1, 2}, {2});
  Tensor c = f32(std::vector<float>{1, 2}, {2});
  ember_tensor* r = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_add(g.get(), c.get(), &r), EMBER_ERR_INVALID_ARGUMENT, "different backends");
}

// The Vulkan runtime lives in a plugin (libember-vulkan.so) that throws the engine's error types: they keep their
// status across the plugin boundary, a device error (here: a tensor beyond what a shader can address) included.
TEST(VulkanFromC, ErrorsRaisedInThePluginKeepTheirStatus) {
  SKIP_WITHOUT_VULKAN_DEVICE();
  Device dev = vulkan_device(0);
  Tensor a = f32_on(dev.get(), {1, 2, 3, 4, 5, 6}, {2, 3});
  ember_tensor* r = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_matmul(a.get(), a.get(), &r), EMBER_ERR_SHAPE,
                   "matmul: inner dims differ: [2, 3] @ [2, 3]");
  EMBER_EXPECT_ERR(ember_tensor_reduce(a.get(), EMBER_REDUCE_SUM, 5, 0, &r), EMBER_ERR_INDEX,
                   "sum: dim 5 out of range for rank 2");
  const int64_t huge[] = {int64_t(1) << 31, 2};  // 16 GiB of f32: beyond maxStorageBufferRange (a 32-bit range)
  EMBER_EXPECT_ERR(ember_tensor_zeros(dev.get(), EMBER_DTYPE_F32, huge, 2, &r), EMBER_ERR_OUT_OF_MEMORY,
                   "vulkan alloc: tensors of 2^31 or more elements are not supported");
  EXPECT_EQ(r, nullptr);
  // The device stays usable.
  Tensor sum = Tensor([&] {
    ember_tensor* t = nullptr;
    EXPECT_EQ(ember_tensor_reduce_all(a.get(), EMBER_REDUCE_SUM, &t), EMBER_OK) << ember_last_error();
    return t;
  }());
  double v = 0;
  ASSERT_EQ(ember_tensor_item(sum.get(), &v), EMBER_OK) << ember_last_error();
  EXPECT_EQ(v, 21.0);
}

// Every interop function exists in every build; without the backend each says so.
TEST(VulkanInterop, UnsupportedWithoutTheBackend) {
  if (vulkan_info().compiled) GTEST_SKIP() << "this libember has the Vulkan backend";
  ember_vulkan_requirements req{};
  req.struct_size = sizeof req;
  uint64_t v = 0;
  ember_device* d = nullptr;
  EMBER_EXPECT_ERR(ember_vulkan_requirements_query(&req), EMBER_ERR_UNSUPPORTED, "not compiled");
  EMBER_EXPECT_ERR(ember_vulkan_device_adopt(nullptr, &d), EMBER_ERR_UNSUPPORTED, "not compiled");
  EMBER_EXPECT_ERR(ember_vulkan_submit(nullptr, &v), EMBER_ERR_UNSUPPORTED, "not compiled");
  EMBER_EXPECT_ERR(ember_vulkan_synchronize(nullptr), EMBER_ERR_UNSUPPORTED, "not compiled");
}

TEST(VulkanInterop, RequirementsAreWhatTheBackendNeeds) {
  if (!vulkan_info().compiled) GTEST_SKIP() << "libember was built without the Vulkan backend";
  ember_vulkan_requirements req{};
  req.struct_size = sizeof req;
  EMBER_ASSERT_OK(ember_vulkan_requirements_query(&req));
  EXPECT_GE(req.api_version, VK_API_VERSION_1_2);
  EXPECT_EQ(req.shader_int64, 1);
  EXPECT_EQ(req.timeline_semaphore, 1);
  EXPECT_TRUE(req.queue_flags & VK_QUEUE_COMPUTE_BIT);
  EXPECT_EQ(req.device_extension_count, 0u);
  ember_vulkan_requirements small{};
  small.struct_size = 4;
  EMBER_EXPECT_ERR(ember_vulkan_requirements_query(&small), EMBER_ERR_INVALID_ARGUMENT,
                   "out: struct_size 4 is smaller than any version of the struct");
  EMBER_EXPECT_ERR(ember_vulkan_requirements_query(nullptr), EMBER_ERR_INVALID_ARGUMENT, "out is NULL");
}

TEST(VulkanInterop, AdoptedDeviceWrapsHostBuffersAndSharesTheTimeline) {
  SKIP_WITHOUT_VULKAN_DEVICE();
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  if (!host.validation()) std::printf("note: VK_LAYER_KHRONOS_validation is not installed; running without it\n");

  constexpr std::size_t n = 6;
  const float input[n] = {-2.0f, -0.5f, 0.0f, 0.5f, 1.0f, 3.0f};
  const VkDeviceSize in_offset = host.storage_alignment();  // a non-zero, aligned offset
  HostBuffer in = host.make_buffer(in_offset + sizeof input);
  HostBuffer readback = host.make_buffer(sizeof input);
  std::memcpy(static_cast<char*>(in.mapped) + in_offset, input, sizeof input);
  VkSemaphore host_timeline = host.make_timeline();
  {
    ember_vulkan_device_desc desc = host.desc();
    ember_device* d = nullptr;
    EMBER_ASSERT_OK(ember_vulkan_device_adopt(&desc, &d));
    Device dev(d);
    int32_t backend = -1, index = 0;
    EMBER_ASSERT_OK(ember_device_info(d, &backend, &index));
    EXPECT_EQ(backend, EMBER_BACKEND_VULKAN);
    EXPECT_EQ(index, -1);

    // y = exp(x) + b, x wrapped over the host's buffer, b uploaded by Ember.
    const int64_t shape[] = {2, 3};
    ember_tensor* x = nullptr;
    EMBER_ASSERT_OK(ember_vulkan_tensor_wrap_buffer(d, reinterpret_cast<uint64_t>(in.buffer), in_offset,
                                                    EMBER_DTYPE_F32, shape, 2, &x));
    Tensor tx(x);
    Tensor b = f32_on(d, {1, 2, 3, 4, 5, 6}, {2, 3});
    // Ember's work waits for the host's semaphore: the host "finishes writing" x only after recording.
    EMBER_ASSERT_OK(ember_vulkan_wait_semaphore(d, reinterpret_cast<uint64_t>(host_timeline), 1));
    ember_tensor *e = nullptr, *y = nullptr;
    EMBER_ASSERT_OK(ember_tensor_unary(x, EMBER_UNARY_EXP, &e));
    Tensor te(e);
    EMBER_ASSERT_OK(ember_tensor_add(e, b.get(), &y));
    Tensor ty(y);

    uint64_t buffer = 0, offset = 0, size = 0, value = 0, semaphore = 0;
    EMBER_ASSERT_OK(ember_vulkan_tensor_buffer(y, &buffer, &offset, &size));
    EXPECT_NE(buffer, 0u);
    EXPECT_EQ(size, sizeof input);
    EMBER_ASSERT_OK(ember_vulkan_submit(d, &value));
    EXPECT_GT(value, 0u);
    EMBER_ASSERT_OK(ember_vulkan_timeline_semaphore(d, &semaphore));
    host.signal(host_timeline, 1);
    host.copy_after(semaphore, value, reinterpret_cast<VkBuffer>(buffer), offset, readback.buffer, size);
    const auto* out = static_cast<const float*>(readback.mapped);
    for (std::size_t i = 0; i < n; ++i)
      EXPECT_NEAR(out[i], std::exp(input[i]) + static_cast<float>(i + 1), 1e-5f * std::exp(input[i]) + 1e-6f) << i;
    EXPECT_GT(host.locks(), 0) << "Ember submitted without the host's queue lock";

    // The same values through Ember's own read path, and the host-side waits.
    EMBER_EXPECT_OK(ember_vulkan_host_wait(d, value));
    EMBER_EXPECT_OK(ember_vulkan_synchronize(d));
    const auto via_ember = floats(y);
    for (std::size_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(via_ember[i], out[i]) << i;

    // The wrapped tensor's storage is the host's buffer itself.
    EMBER_ASSERT_OK(ember_vulkan_tensor_buffer(x, &buffer, &offset, nullptr));
    EXPECT_EQ(buffer, reinterpret_cast<uint64_t>(in.buffer));
    EXPECT_EQ(offset, in_offset);

    // Pipeline cache: the size first, then the bytes.
    size_t cache_size = 0;
    ember_clear_error();
    EXPECT_EQ(ember_vulkan_pipeline_cache_data(d, nullptr, 0, &cache_size), EMBER_OK);  // a size query (Strings rule)
    EXPECT_STREQ(ember_last_error(), "");
    EXPECT_GT(cache_size, 0u);
    std::vector<uint8_t> cache(cache_size);
    EMBER_EXPECT_OK(ember_vulkan_pipeline_cache_data(d, cache.data(), cache.size(), &cache_size));
  }  // every Ember handle on the adopted device is gone: Ember's objects on it are released here
  host.destroy_semaphore(host_timeline);
  host.free_buffer(in);
  host.free_buffer(readback);
}

// ember_vulkan_device_adopt_ex: NULL options and ember_vulkan_adopt_options_init's defaults adopt as
// ember_vulkan_device_adopt does; out-of-range flags and short structs are argument errors. Each option's own
// behaviour is tested with its part (vulkan_record_test, vulkan_memory_test, vulkan_plan_test, vulkan_floor_test).
TEST(VulkanInterop, AdoptWithOptions) {
  SKIP_WITHOUT_VULKAN_DEVICE();
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  ember_vulkan_adopt_options o{};
  EMBER_ASSERT_OK(ember_vulkan_adopt_options_init(&o));
  EXPECT_EQ(o.struct_size, sizeof o);
  EXPECT_EQ(o.max_dispatches_per_submit, 64u);
  EXPECT_EQ(o.shader_int64, 1);
  EXPECT_EQ(o.timeline_semaphore, 1);
  EXPECT_EQ(o.shader_float16, 0);
  EXPECT_EQ(o.allocator, nullptr);
  EXPECT_EQ(o.memory_budget, 0u);
  EXPECT_EQ(o.pipeline_cache, 0u);
  EMBER_EXPECT_ERR(ember_vulkan_adopt_options_init(nullptr), EMBER_ERR_INVALID_ARGUMENT, "options is NULL");

  ember_vulkan_device_desc desc = host.desc();
  for (const ember_vulkan_adopt_options* opts : {static_cast<const ember_vulkan_adopt_options*>(nullptr),
                                                 static_cast<const ember_vulkan_adopt_options*>(&o)}) {
    ember_device* d = nullptr;
    EMBER_ASSERT_OK(ember_vulkan_device_adopt_ex(&desc, opts, &d));
    Device dev(d);
    Tensor x = f32_on(d, {1, 2, 3}, {3});
    ember_tensor* y = nullptr;
    EMBER_ASSERT_OK(ember_tensor_add(x.get(), x.get(), &y));
    Tensor ty(y);
    EXPECT_EQ(floats(y), (std::vector<float>{2, 4, 6}));
  }

  ember_device* d = reinterpret_cast<ember_device*>(0x1);
  ember_vulkan_adopt_options bad = o;
  bad.shader_int64 = 2;
  EMBER_EXPECT_ERR(ember_vulkan_device_adopt_ex(&desc, &bad, &d), EMBER_ERR_INVALID_ARGUMENT,
                   "options: shader_int64 is 2 (0 or 1)");
  EXPECT_EQ(d, nullptr);
  bad = o;
  bad.struct_size = 4;
  EMBER_EXPECT_ERR(ember_vulkan_device_adopt_ex(&desc, &bad, &d), EMBER_ERR_INVALID_ARGUMENT,
                   "options: struct_size 4 is smaller than any version of the struct");
  // (the allocator, budget and buffer usage options: vulkan_memory_test.cpp)
}

TEST(VulkanInterop, ArgumentErrors) {
  SKIP_WITHOUT_VULKAN_DEVICE();
  ember_device* d = reinterpret_cast<ember_device*>(0x1);
  EMBER_EXPECT_ERR(ember_vulkan_device_adopt(nullptr, &d), EMBER_ERR_INVALID_ARGUMENT, "desc is NULL");
  EXPECT_EQ(d, nullptr);
  ember_vulkan_device_desc desc{};
  desc.struct_size = 8;
  EMBER_EXPECT_ERR(ember_vulkan_device_adopt(&desc, &d), EMBER_ERR_INVALID_ARGUMENT,
                   "desc: struct_size 8 is smaller than any version of the struct");
  desc.struct_size = sizeof desc;
  EMBER_EXPECT_ERR(ember_vulkan_device_adopt(&desc, &d), EMBER_ERR_INVALID_ARGUMENT, "are required");
  EMBER_EXPECT_ERR(ember_vulkan_device_adopt(&desc, nullptr), EMBER_ERR_INVALID_ARGUMENT, "out is NULL");

  // Wrong backend: CPU tensors and devices (NULL means the CPU) are refused by name.
  Tensor cpu = f32(std::vector<float>{1, 2}, {2});
  uint64_t buffer = 0, value = 0;
  EMBER_EXPECT_ERR(ember_vulkan_tensor_buffer(cpu.get(), &buffer, nullptr, nullptr), EMBER_ERR_INVALID_ARGUMENT,
                   "not on a Vulkan device");
  EMBER_EXPECT_ERR(ember_vulkan_submit(nullptr, &value), EMBER_ERR_INVALID_ARGUMENT, "device is NULL");
  ember_device* cpu_dev = nullptr;
  EMBER_ASSERT_OK(ember_device_create(EMBER_BACKEND_CPU, 0, &cpu_dev));
  Device cpu_h(cpu_dev);
  EMBER_EXPECT_ERR(ember_vulkan_synchronize(cpu_dev), EMBER_ERR_INVALID_ARGUMENT, "not a Vulkan device");
  EMBER_EXPECT_ERR(ember_vulkan_tensor_buffer(nullptr, &buffer, nullptr, nullptr), EMBER_ERR_NULL_HANDLE,
                   "tensor is NULL (expected an ember_tensor)");

  Device dev = vulkan_device(0);
  Tensor g = f32_on(dev.get(), {1, 2}, {2});
  EMBER_EXPECT_ERR(ember_vulkan_tensor_buffer(g.get(), nullptr, nullptr, nullptr), EMBER_ERR_INVALID_ARGUMENT,
                   "vk_buffer is NULL");
  EMBER_EXPECT_ERR(ember_vulkan_submit(dev.get(), nullptr), EMBER_ERR_INVALID_ARGUMENT, "timeline_value is NULL");
  EMBER_EXPECT_ERR(ember_vulkan_host_wait(dev.get(), UINT64_MAX), EMBER_ERR_INVALID_ARGUMENT, "never submitted");
  EMBER_EXPECT_ERR(ember_vulkan_wait_semaphore(dev.get(), 0, 1), EMBER_ERR_INVALID_ARGUMENT,
                   "host_timeline_semaphore is VK_NULL_HANDLE");

  // Wrapping: the offset alignment, the dtype and the buffer are checked before anything is bound.
  uint64_t real_buffer = 0;
  EMBER_ASSERT_OK(ember_vulkan_tensor_buffer(g.get(), &real_buffer, nullptr, nullptr));
  const int64_t shape[] = {2};
  ember_tensor* w = reinterpret_cast<ember_tensor*>(0x1);
  EMBER_EXPECT_ERR(ember_vulkan_tensor_wrap_buffer(dev.get(), real_buffer, 1, EMBER_DTYPE_F32, shape, 1, &w),
                   EMBER_ERR_INVALID_ARGUMENT, "offset 1 is not a multiple of minStorageBufferOffsetAlignment");
  EXPECT_EQ(w, nullptr);
  EMBER_EXPECT_ERR(ember_vulkan_tensor_wrap_buffer(dev.get(), real_buffer, 0, EMBER_DTYPE_F64, shape, 1, &w),
                   EMBER_ERR_DTYPE, "F32, I64 and BOOL");
  EMBER_EXPECT_ERR(ember_vulkan_tensor_wrap_buffer(dev.get(), 0, 0, EMBER_DTYPE_F32, shape, 1, &w),
                   EMBER_ERR_INVALID_ARGUMENT, "vk_buffer is VK_NULL_HANDLE");
  EMBER_EXPECT_ERR(ember_vulkan_tensor_wrap_buffer(nullptr, real_buffer, 0, EMBER_DTYPE_F32, shape, 1, &w),
                   EMBER_ERR_INVALID_ARGUMENT, "device is NULL");
  EMBER_EXPECT_ERR(ember_vulkan_tensor_wrap_buffer(dev.get(), real_buffer, 0, EMBER_DTYPE_F32, shape, 0, &w),
                   EMBER_ERR_SHAPE, "rank 0");
}

}  // namespace
}  // namespace ember::capi_test
