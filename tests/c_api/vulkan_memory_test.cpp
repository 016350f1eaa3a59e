// Issue 17 parts 4 and 5 from C, on a device the host owns (VulkanHost: validation and synchronization validation
// on, any message fails the test): Ember's blocks from the host's allocator (VmaStyleAllocator), a budget that is
// honoured with nothing leaked, statistics and trim, extra buffer usages on tensor memory, writable wrapped
// buffers, the host's barriers around its buffers and the stage/access of Ember's last write.
// Queue-family ownership transfers (to and from VK_QUEUE_FAMILY_EXTERNAL, as lavapipe has one family) are tested
// in vulkan_ownership_test.cpp.
#include <cmath>
#include <cstring>

#include "tests/c_api/capi_support.hpp"
#include "tests/c_api/vma_style_allocator.hpp"
#include "tests/c_api/vulkan_device.hpp"
#include "tests/c_api/vulkan_host.hpp"

namespace ember::capi_test {
namespace {


constexpr uint64_t kMiB = uint64_t{1} << 20;

Device adopt(VulkanHost& host, const ember_vulkan_adopt_options& o) {
  ember_vulkan_device_desc desc = host.desc();
  ember_device* d = nullptr;
  EXPECT_EQ(ember_vulkan_device_adopt_ex(&desc, &o, &d), EMBER_OK) << ember_last_error();
  return Device(d);
}

ember_vulkan_adopt_options options() {
  ember_vulkan_adopt_options o{};
  EXPECT_EQ(ember_vulkan_adopt_options_init(&o), EMBER_OK);
  return o;
}

VmaStyleAllocator make_allocator(VulkanHost& host, VkDeviceSize page, VkDeviceSize limit = 0) {
  const ember_vulkan_device_desc d = host.desc();
  return VmaStyleAllocator(static_cast<VkPhysicalDevice>(d.physical_device), static_cast<VkDevice>(d.device), page,
                           limit);
}

ember_vulkan_memory_stats stats(const ember_device* d) {
  ember_vulkan_memory_stats s{};
  s.struct_size = sizeof s;
  EXPECT_EQ(ember_vulkan_memory_stats_query(d, &s), EMBER_OK) << ember_last_error();
  return s;
}

ember_vulkan_buffer_state state(const ember_tensor* t) {
  ember_vulkan_buffer_state s{};
  s.struct_size = sizeof s;
  EXPECT_EQ(ember_vulkan_buffer_state_query(t, &s), EMBER_OK) << ember_last_error();
  return s;
}

// exp(x) + x on the device: a computed output.
Tensor exp_plus_x(const ember_tensor* x) {
  ember_tensor *e = nullptr, *y = nullptr;
  EXPECT_EQ(ember_tensor_unary(x, EMBER_UNARY_EXP, &e), EMBER_OK) << ember_last_error();
  Tensor te(e);
  EXPECT_EQ(ember_tensor_add(e, x, &y), EMBER_OK) << ember_last_error();
  return Tensor(y);
}

// Every block Ember holds comes from the host's allocator; results are right; statistics follow what is allocated;
// trim gives empty blocks back to the host; the last handle gives back the rest.
TEST(VulkanMemory, HostAllocatorBacksEmbersBlocks) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  VmaStyleAllocator vma = make_allocator(host, 8 * kMiB);
  const ember_vulkan_allocator callbacks = vma.callbacks();
  ember_vulkan_adopt_options o = options();
  o.allocator = &callbacks;
  {
    Device dev = adopt(host, o);
    ASSERT_TRUE(dev);
    const int at_start = vma.live();
    EXPECT_GE(at_start, 1) << "Ember's first block did not come from the host";
    // A tensor larger than half a block (dedicated block) and small ones (sub-allocated).
    std::vector<float> big(40 * kMiB / sizeof(float), 0.5f);
    Tensor tb = f32_on(dev.get(), big, {static_cast<int64_t>(big.size())});
    Tensor x = f32_on(dev.get(), {-1, 0, 1, 2}, {4});
    Tensor y = exp_plus_x(x.get());
    const auto got = floats(y.get());
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], std::exp(i - 1.0f) + (i - 1.0f), 1e-5f) << i;
    EXPECT_FLOAT_EQ(floats(tb.get())[12345], 0.5f);

    const ember_vulkan_memory_stats s = stats(dev.get());
    EXPECT_EQ(s.host_blocks, s.blocks);
    EXPECT_EQ(static_cast<int>(s.blocks), vma.live());
    EXPECT_GE(s.reserved, 40 * kMiB + 64 * kMiB);  // the dedicated block and a full one
    EXPECT_GE(s.in_use, 40 * kMiB);
    EXPECT_GE(s.peak_reserved, s.reserved);
    EXPECT_EQ(s.budget, 0u);

    tb.reset();  // a dedicated block goes back to the host once the GPU is done with it
    EMBER_ASSERT_OK(ember_vulkan_synchronize(dev.get()));
    const ember_vulkan_memory_stats after = stats(dev.get());
    EXPECT_LT(after.reserved, s.reserved);
    EXPECT_EQ(after.peak_reserved, s.peak_reserved);
    EXPECT_EQ(static_cast<int>(after.blocks), vma.live());
    x.reset();
    y.reset();
    EMBER_ASSERT_OK(ember_vulkan_memory_trim(dev.get()));
    EXPECT_EQ(static_cast<int>(stats(dev.get()).blocks), vma.live());
    EXPECT_LE(vma.live(), at_start);
  }
  EXPECT_EQ(vma.live(), 0) << "Ember kept memory of the host's after its last handle went";
  EXPECT_GE(vma.total_allocations(), 2);  // the first block and the dedicated one
  vma.release_empty_pages();
  EXPECT_EQ(vma.pages(), 0u);
}

// The budgeted allocator test: allocate until the budget refuses, the failure is EMBER_ERR_OUT_OF_MEMORY
// naming the budget and the request, the device stays usable, and after freeing everything the host allocator's
// live count is back where it started.
TEST(VulkanMemory, BudgetIsHonouredAndNothingLeaks) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  VmaStyleAllocator vma = make_allocator(host, 16 * kMiB);
  const ember_vulkan_allocator callbacks = vma.callbacks();
  ember_vulkan_adopt_options o = options();
  o.allocator = &callbacks;
  o.memory_budget = 4 * kMiB;
  Device dev = adopt(host, o);
  ASSERT_TRUE(dev);
  const int at_start = vma.live();
  const int64_t shape[] = {static_cast<int64_t>(256 * 1024 / sizeof(float))};  // 256 KiB each
  std::vector<Tensor> held;
  ember_status last = EMBER_OK;
  std::string message;
  for (int i = 0; i < 64; ++i) {
    ember_tensor* t = nullptr;
    last = ember_tensor_full(dev.get(), EMBER_DTYPE_F32, shape, 1, static_cast<double>(i), &t);
    if (last != EMBER_OK) {
      message = ember_last_error();
      EXPECT_EQ(t, nullptr);
      break;
    }
    held.emplace_back(t);
    const ember_vulkan_memory_stats s = stats(dev.get());
    EXPECT_LE(s.reserved, o.memory_budget) << "after " << held.size() << " tensors";
  }
  ASSERT_EQ(last, EMBER_ERR_OUT_OF_MEMORY) << "64 tensors of 256 KiB fit in a budget of 4 MiB";
  EXPECT_NE(message.find("budget of 4194304 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("request of 262144 bytes"), std::string::npos) << message;
  // 4 MiB hold 15 such tensors beside Ember's own 256 bytes; fewer means blocks wasted the budget.
  EXPECT_EQ(held.size(), 15u);
  EXPECT_EQ(stats(dev.get()).peak_reserved, o.memory_budget);
  // What was made before the failure is intact.
  EXPECT_FLOAT_EQ(floats(held[3].get())[7], 3.0f);
  EXPECT_FLOAT_EQ(floats(held.back().get())[0], static_cast<float>(held.size() - 1));

  held.clear();
  EMBER_ASSERT_OK(ember_vulkan_synchronize(dev.get()));
  EMBER_ASSERT_OK(ember_vulkan_memory_trim(dev.get()));
  EXPECT_EQ(vma.live(), at_start) << "blocks leaked past the budget failure";
  EXPECT_EQ(stats(dev.get()).in_use, 256u) << "only Ember's own 256-byte scratch is left";
  // The device works again, and a lower budget stops growth.
  Tensor again = f32_on(dev.get(), {1, 2}, {2});
  EXPECT_EQ(floats(again.get()), (std::vector<float>{1, 2}));
  EMBER_ASSERT_OK(ember_vulkan_memory_set_budget(dev.get(), 1024));
  const int64_t big[] = {2 * 1024 * 1024};  // 8 MiB: more than the free part of the block held
  ember_tensor* t = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_zeros(dev.get(), EMBER_DTYPE_F32, big, 1, &t), EMBER_ERR_OUT_OF_MEMORY,
                   "budget of 1024 bytes");
  EMBER_ASSERT_OK(ember_vulkan_memory_set_budget(dev.get(), 0));
  EMBER_ASSERT_OK(ember_tensor_zeros(dev.get(), EMBER_DTYPE_F32, big, 1, &t));
  ember_tensor_free(t);
}

// The host's own allocator running out (its limit, below any budget) is out-of-memory too, after Ember gave back
// its empty blocks and tried once more; nothing leaks.
TEST(VulkanMemory, HostAllocatorOutOfMemoryIsClean) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  VmaStyleAllocator vma = make_allocator(host, 1 * kMiB, 80 * kMiB);
  const ember_vulkan_allocator callbacks = vma.callbacks();
  ember_vulkan_adopt_options o = options();
  o.allocator = &callbacks;
  {
    Device dev = adopt(host, o);
    ASSERT_TRUE(dev);
    const int at_start = vma.live();  // Ember's first 64 MiB block
    const int64_t shape[] = {static_cast<int64_t>(40 * kMiB / sizeof(float))};  // a dedicated 40 MiB block
    ember_tensor* t = nullptr;
    EMBER_EXPECT_ERR(ember_tensor_zeros(dev.get(), EMBER_DTYPE_F32, shape, 1, &t), EMBER_ERR_OUT_OF_MEMORY,
                     "the host allocator");
    EXPECT_EQ(t, nullptr);
    EXPECT_GE(vma.failures(), 1);
    EXPECT_EQ(vma.live(), at_start);
    Tensor x = f32_on(dev.get(), {3}, {1});
    EXPECT_EQ(floats(x.get()), (std::vector<float>{3}));
  }
  EXPECT_EQ(vma.live(), 0);
}

// A budget without a host allocator (Ember's own vkAllocateMemory) is honoured the same way.
TEST(VulkanMemory, BudgetWithEmbersOwnAllocations) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  ember_vulkan_adopt_options o = options();
  o.memory_budget = 2 * kMiB;
  Device dev = adopt(host, o);
  ASSERT_TRUE(dev);
  const int64_t fits[] = {static_cast<int64_t>(kMiB / sizeof(float))}, too_big[] = {static_cast<int64_t>(kMiB)};
  ember_tensor *a = nullptr, *b = nullptr;
  EMBER_ASSERT_OK(ember_tensor_zeros(dev.get(), EMBER_DTYPE_F32, fits, 1, &a));
  Tensor ta(a);
  EMBER_EXPECT_ERR(ember_tensor_zeros(dev.get(), EMBER_DTYPE_F32, too_big, 1, &b), EMBER_ERR_OUT_OF_MEMORY,
                   "a request of 4194304 bytes does not fit in the budget of 2097152 bytes");
  const ember_vulkan_memory_stats s = stats(dev.get());
  EXPECT_EQ(s.budget, 2 * kMiB);
  EXPECT_LE(s.reserved, 2 * kMiB);
  EXPECT_EQ(s.host_blocks, 0u);
}

// Extra usages on tensor memory: the host can bind an output as a vertex or indirect buffer. The buffer Ember
// creates carries them (validation checks the creation) and the state query reports them.
TEST(VulkanMemory, TensorBufferUsage) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  ember_vulkan_adopt_options o = options();
  o.tensor_buffer_usage = VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;
  {
    Device dev = adopt(host, o);
    ASSERT_TRUE(dev);
    Tensor x = f32_on(dev.get(), {1, 2, 3}, {3});
    Tensor y = exp_plus_x(x.get());
    const ember_vulkan_buffer_state s = state(y.get());
    EXPECT_EQ(s.usage & o.tensor_buffer_usage, o.tensor_buffer_usage);
    EXPECT_NE(s.usage & VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, 0u);
    // The host's vertex fetch reads y next: Ember's release makes its writes visible to that stage.
    EMBER_EXPECT_OK(ember_vulkan_buffer_release(y.get(), VK_PIPELINE_STAGE_VERTEX_INPUT_BIT,
                                                VK_ACCESS_VERTEX_ATTRIBUTE_READ_BIT, VK_QUEUE_FAMILY_IGNORED));
    EMBER_EXPECT_OK(ember_vulkan_synchronize(dev.get()));
  }
  // Without the option the usages are Ember's own only.
  Device plain = adopt(host, options());
  Tensor z = f32_on(plain.get(), {1}, {1});
  EXPECT_EQ(state(z.get()).usage & VK_BUFFER_USAGE_VERTEX_BUFFER_BIT, 0u);
  plain.reset();

  ember_vulkan_device_desc desc = host.desc();
  ember_device* d = nullptr;
  o.tensor_buffer_usage = VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;  // needs a feature and a memory flag
  EMBER_EXPECT_ERR(ember_vulkan_device_adopt_ex(&desc, &o, &d), EMBER_ERR_INVALID_ARGUMENT, "tensor_buffer_usage");
  EXPECT_EQ(d, nullptr);
}

// A writable wrapped host buffer receives an op's output (a recorded copy); the state query reports the stage and
// access of Ember's last write, which the host's barrier starts from; the host's acquire (it wrote the input with
// the CPU) and release (it copies the output next) are buffer barriers validation accepts.
TEST(VulkanResourceState, WritableWrappedBufferReceivesAnOutput) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  constexpr std::size_t n = 5;
  const float input[n] = {-2, -1, 0, 1, 2.5f};
  HostBuffer in = host.make_buffer(sizeof input), out = host.make_buffer(sizeof input);
  std::memcpy(in.mapped, input, sizeof input);
  std::memset(out.mapped, 0, sizeof input);
  {
    Device dev = adopt(host, options());
    ASSERT_TRUE(dev);
    const int64_t shape[] = {n};
    ember_tensor *x = nullptr, *w = nullptr, *r = nullptr;
    EMBER_ASSERT_OK(ember_vulkan_tensor_wrap_buffer_ex(dev.get(), reinterpret_cast<uint64_t>(in.buffer), 0,
                                                       EMBER_DTYPE_F32, shape, 1, 0, &x));
    Tensor tx(x);
    EMBER_ASSERT_OK(ember_vulkan_tensor_wrap_buffer_ex(dev.get(), reinterpret_cast<uint64_t>(out.buffer), 0,
                                                       EMBER_DTYPE_F32, shape, 1, EMBER_VULKAN_WRAP_WRITABLE, &w));
    Tensor tw(w);
    const ember_vulkan_buffer_state fresh = state(w);
    EXPECT_EQ(fresh.wrapped, 1);
    EXPECT_EQ(fresh.writable, 1);
    EXPECT_EQ(fresh.write_stage, 0u) << "Ember has not written the host's buffer yet";
    EXPECT_EQ(state(x).writable, 0);

    EMBER_ASSERT_OK(ember_vulkan_buffer_acquire(x, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT,
                                                VK_QUEUE_FAMILY_IGNORED));
    Tensor y = exp_plus_x(x);
    const ember_vulkan_buffer_state ys = state(y.get());
    EXPECT_EQ(ys.write_stage, static_cast<uint32_t>(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT));
    EXPECT_EQ(ys.write_access, static_cast<uint32_t>(VK_ACCESS_SHADER_WRITE_BIT));
    EXPECT_EQ(ys.wrapped, 0);
    EXPECT_EQ(ys.writable, 1);

    EMBER_ASSERT_OK(ember_vulkan_tensor_write_wrapped(w, y.get()));
    const ember_vulkan_buffer_state ws = state(w);
    EXPECT_EQ(ws.write_stage, static_cast<uint32_t>(VK_PIPELINE_STAGE_TRANSFER_BIT));
    EXPECT_EQ(ws.write_access, static_cast<uint32_t>(VK_ACCESS_TRANSFER_WRITE_BIT));
    // The host reads the buffer with the CPU once Ember's timeline value is reached.
    EMBER_ASSERT_OK(ember_vulkan_buffer_release(w, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT,
                                                host.desc().queue_family));
    EXPECT_EQ(state(w).queue_family, host.desc().queue_family) << "Ember's own family: no ownership transfer";
    uint64_t value = 0;
    EMBER_ASSERT_OK(ember_vulkan_submit(dev.get(), &value));
    EMBER_ASSERT_OK(ember_vulkan_host_wait(dev.get(), value));
    const auto* got = static_cast<const float*>(out.mapped);
    for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(got[i], std::exp(input[i]) + input[i], 1e-5f * 13) << i;
    // Tensors over the wrapped range see the new contents in later work.
    EXPECT_EQ(floats(w), floats(y.get()));

    // A read-only wrap refuses writes; mismatched sources are refused before anything is recorded.
    EMBER_EXPECT_ERR(ember_vulkan_tensor_write_wrapped(x, y.get()), EMBER_ERR_INVALID_ARGUMENT, "read-only");
    EMBER_EXPECT_ERR(ember_vulkan_tensor_write_wrapped(y.get(), x), EMBER_ERR_INVALID_ARGUMENT,
                     "not a wrapped host buffer");
    Tensor two = f32_on(dev.get(), {1, 2}, {2});
    EMBER_EXPECT_ERR(ember_vulkan_tensor_write_wrapped(w, two.get()), EMBER_ERR_SHAPE, "bytes");
    const int64_t ishape[] = {n};
    ember_tensor* iz = nullptr;
    EMBER_ASSERT_OK(ember_tensor_zeros(dev.get(), EMBER_DTYPE_I64, ishape, 1, &iz));
    Tensor tiz(iz);
    EXPECT_NE(ember_vulkan_tensor_write_wrapped(w, iz), EMBER_OK);
    Tensor cpu = f32({1, 2, 3, 4, 5}, {5});
    EMBER_EXPECT_ERR(ember_vulkan_tensor_write_wrapped(w, cpu.get()), EMBER_ERR_INVALID_ARGUMENT, "not on a Vulkan");
    EMBER_EXPECT_ERR(ember_vulkan_buffer_acquire(cpu.get(), 0, 0, VK_QUEUE_FAMILY_IGNORED), EMBER_ERR_INVALID_ARGUMENT,
                     "not on a Vulkan device");
    EMBER_EXPECT_ERR(ember_vulkan_tensor_wrap_buffer_ex(dev.get(), reinterpret_cast<uint64_t>(out.buffer), 0,
                                                        EMBER_DTYPE_F32, shape, 1, 6, &r),
                     EMBER_ERR_INVALID_ARGUMENT, "unknown bits");
    EXPECT_EQ(r, nullptr);
    ember_vulkan_buffer_state small{};
    small.struct_size = 4;
    EMBER_EXPECT_ERR(ember_vulkan_buffer_state_query(w, &small), EMBER_ERR_INVALID_ARGUMENT, "struct_size");
    EMBER_ASSERT_OK(ember_vulkan_synchronize(dev.get()));
  }
  host.free_buffer(in);
  host.free_buffer(out);
}

TEST(VulkanMemory, ArgumentErrors) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  EMBER_EXPECT_ERR(ember_vulkan_allocator_init(nullptr), EMBER_ERR_INVALID_ARGUMENT, "allocator is NULL");
  ember_vulkan_allocator a{};
  EMBER_ASSERT_OK(ember_vulkan_allocator_init(&a));
  EXPECT_EQ(a.struct_size, sizeof a);
  ember_vulkan_adopt_options o = options();
  o.allocator = &a;  // no callbacks
  ember_vulkan_device_desc desc = host.desc();
  ember_device* d = nullptr;
  EMBER_EXPECT_ERR(ember_vulkan_device_adopt_ex(&desc, &o, &d), EMBER_ERR_INVALID_ARGUMENT,
                   "allocate_memory and free_memory are both required");
  EXPECT_EQ(d, nullptr);
  ember_vulkan_memory_stats s{};
  s.struct_size = sizeof s;
  EMBER_EXPECT_ERR(ember_vulkan_memory_stats_query(nullptr, &s), EMBER_ERR_INVALID_ARGUMENT, "device is NULL");
  EMBER_EXPECT_ERR(ember_vulkan_memory_trim(nullptr), EMBER_ERR_INVALID_ARGUMENT, "device is NULL");
  Device dev = adopt(host, options());
  EMBER_EXPECT_ERR(ember_vulkan_memory_stats_query(dev.get(), nullptr), EMBER_ERR_INVALID_ARGUMENT, "out is NULL");
}

}  // namespace
}  // namespace ember::capi_test
