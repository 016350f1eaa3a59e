// Issue 17 part 5 from C: queue-family ownership transfers of host buffers (ember_vulkan_buffer_acquire /
// ember_vulkan_buffer_release) across families. lavapipe has a single queue family, so the other family here is
// VK_QUEUE_FAMILY_EXTERNAL (Vulkan 1.1: the buffer changes hands with another API or process), which is valid for
// buffers created with VkExternalMemoryBufferCreateInfo. The host's vkCmdPipelineBarrier is wrapped (through the
// vkGetInstanceProcAddr the host gives Ember) so the test sees the families of every buffer barrier Ember records;
// the validation layer with synchronization validation checks the transfers (any message fails the test).
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include "tests/c_api/capi_support.hpp"
#include "tests/c_api/vulkan_device.hpp"
#include "tests/c_api/vulkan_host.hpp"

namespace ember::capi_test {
namespace {

// The buffer barriers Ember records, seen by wrapping the host's vkCmdPipelineBarrier.
struct BarrierLog {
  std::mutex mutex;
  std::vector<VkBufferMemoryBarrier> barriers;
  PFN_vkGetDeviceProcAddr get_device_proc_addr = nullptr;
  PFN_vkCmdPipelineBarrier pipeline_barrier = nullptr;
};
BarrierLog& barrier_log() {
  static BarrierLog log;
  return log;
}

VKAPI_ATTR void VKAPI_CALL logged_pipeline_barrier(VkCommandBuffer cb, VkPipelineStageFlags src,
                                                   VkPipelineStageFlags dst, VkDependencyFlags flags,
                                                   uint32_t memory_count, const VkMemoryBarrier* memory,
                                                   uint32_t buffer_count, const VkBufferMemoryBarrier* buffers,
                                                   uint32_t image_count, const VkImageMemoryBarrier* images) {
  BarrierLog& log = barrier_log();
  {
    std::lock_guard lock(log.mutex);
    log.barriers.insert(log.barriers.end(), buffers, buffers + buffer_count);
  }
  log.pipeline_barrier(cb, src, dst, flags, memory_count, memory, buffer_count, buffers, image_count, images);
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL logged_get_device_proc_addr(VkDevice device, const char* name) {
  BarrierLog& log = barrier_log();
  if (std::strcmp(name, "vkCmdPipelineBarrier") == 0) {
    log.pipeline_barrier = reinterpret_cast<PFN_vkCmdPipelineBarrier>(log.get_device_proc_addr(device, name));
    return reinterpret_cast<PFN_vkVoidFunction>(&logged_pipeline_barrier);
  }
  return log.get_device_proc_addr(device, name);
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL logged_get_instance_proc_addr(VkInstance instance, const char* name) {
  if (std::strcmp(name, "vkGetDeviceProcAddr") == 0) {
    barrier_log().get_device_proc_addr =
        reinterpret_cast<PFN_vkGetDeviceProcAddr>(vkGetInstanceProcAddr(instance, name));
    return reinterpret_cast<PFN_vkVoidFunction>(&logged_get_device_proc_addr);
  }
  return vkGetInstanceProcAddr(instance, name);
}

// The buffer barriers recorded on `buffer` since the log was last cleared.
std::vector<VkBufferMemoryBarrier> barriers_on(VkBuffer buffer) {
  BarrierLog& log = barrier_log();
  std::lock_guard lock(log.mutex);
  std::vector<VkBufferMemoryBarrier> out;
  for (const VkBufferMemoryBarrier& b : log.barriers)
    if (b.buffer == buffer) out.push_back(b);
  return out;
}

void clear_log() {
  std::lock_guard lock(barrier_log().mutex);
  barrier_log().barriers.clear();
}

ember_vulkan_buffer_state state(const ember_tensor* t) {
  ember_vulkan_buffer_state s{};
  s.struct_size = sizeof s;
  EXPECT_EQ(ember_vulkan_buffer_state_query(t, &s), EMBER_OK) << ember_last_error();
  return s;
}

Tensor wrap(const ember_device* d, const HostBuffer& b, int64_t n, uint32_t flags) {
  ember_tensor* t = nullptr;
  const int64_t shape[] = {n};
  EXPECT_EQ(ember_vulkan_tensor_wrap_buffer_ex(d, reinterpret_cast<uint64_t>(b.buffer), 0, EMBER_DTYPE_F32, shape, 1,
                                               flags, &t),
            EMBER_OK)
      << ember_last_error();
  return Tensor(t);
}

// The input comes from outside Vulkan (acquired from EXTERNAL), the output goes back there (released to
// EXTERNAL): each call records one buffer barrier with exactly those families, the state query reports the owner,
// ops and a second release are refused while the range is away, an acquire from the wrong family is refused, and
// the acquire back from EXTERNAL makes the buffer usable again. Values are checked after each round trip.
TEST(VulkanOwnership, TransfersToAndFromTheExternalFamily) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  constexpr auto kHandle = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  if (!host.external_buffers(kHandle)) GTEST_SKIP() << "this device cannot create opaque-fd external buffers";
  constexpr int64_t n = 6;
  const float input[n] = {-2, -1, 0, 0.5f, 1, 2.5f};
  HostBuffer in = host.make_buffer(sizeof input, kHandle), out = host.make_buffer(sizeof input, kHandle);
  std::memcpy(in.mapped, input, sizeof input);
  std::memset(out.mapped, 0, sizeof input);
  const uint32_t ember_family = host.queue_family();
  {
    ember_vulkan_device_desc desc = host.desc();
    desc.get_instance_proc_addr = reinterpret_cast<void*>(&logged_get_instance_proc_addr);
    ember_vulkan_adopt_options o{};
    EMBER_ASSERT_OK(ember_vulkan_adopt_options_init(&o));
    ember_device* d = nullptr;
    EMBER_ASSERT_OK(ember_vulkan_device_adopt_ex(&desc, &o, &d));
    Device dev(d);
    Tensor x = wrap(d, in, n, 0), w = wrap(d, out, n, EMBER_VULKAN_WRAP_WRITABLE);
    clear_log();

    // Acquire both from EXTERNAL (the other API wrote the input; the output's old contents are discarded).
    EMBER_ASSERT_OK(ember_vulkan_buffer_acquire(x.get(), VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT,
                                                VK_QUEUE_FAMILY_EXTERNAL));
    EMBER_ASSERT_OK(ember_vulkan_buffer_acquire(w.get(), 0, 0, VK_QUEUE_FAMILY_EXTERNAL));
    EXPECT_EQ(state(x.get()).queue_family, ember_family);
    ember_tensor *e = nullptr, *y = nullptr;
    EMBER_ASSERT_OK(ember_tensor_unary(x.get(), EMBER_UNARY_EXP, &e));
    Tensor te(e);
    EMBER_ASSERT_OK(ember_tensor_add(e, x.get(), &y));
    Tensor ty(y);
    EMBER_ASSERT_OK(ember_vulkan_tensor_write_wrapped(w.get(), y));
    // Release both to EXTERNAL: the other API reads the output next.
    EMBER_ASSERT_OK(ember_vulkan_buffer_release(w.get(), VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT,
                                                VK_QUEUE_FAMILY_EXTERNAL));
    EMBER_ASSERT_OK(ember_vulkan_buffer_release(x.get(), 0, 0, VK_QUEUE_FAMILY_EXTERNAL));
    EXPECT_EQ(state(w.get()).queue_family, VK_QUEUE_FAMILY_EXTERNAL);
    EXPECT_EQ(state(x.get()).queue_family, VK_QUEUE_FAMILY_EXTERNAL);
    uint64_t value = 0;
    EMBER_ASSERT_OK(ember_vulkan_submit(d, &value));
    EMBER_ASSERT_OK(ember_vulkan_host_wait(d, value));

    // One acquire and one release barrier per buffer, each naming exactly the two families, over the whole range.
    for (VkBuffer buffer : {in.buffer, out.buffer}) {
      const std::vector<VkBufferMemoryBarrier> got = barriers_on(buffer);
      ASSERT_EQ(got.size(), 2u) << (buffer == in.buffer ? "input" : "output");
      EXPECT_EQ(got[0].srcQueueFamilyIndex, VK_QUEUE_FAMILY_EXTERNAL);
      EXPECT_EQ(got[0].dstQueueFamilyIndex, ember_family);
      EXPECT_EQ(got[1].srcQueueFamilyIndex, ember_family);
      EXPECT_EQ(got[1].dstQueueFamilyIndex, VK_QUEUE_FAMILY_EXTERNAL);
      for (const VkBufferMemoryBarrier& b : got) {
        EXPECT_EQ(b.offset, 0u);
        EXPECT_EQ(b.size, sizeof input);
      }
    }
    // The release carried Ember's write of the output (the copy) as its source access.
    EXPECT_NE(barriers_on(out.buffer)[1].srcAccessMask & VK_ACCESS_TRANSFER_WRITE_BIT, 0u);
    const auto* got = static_cast<const float*>(out.mapped);
    for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(got[i], std::exp(input[i]) + input[i], 1e-5f * 13) << i;

    // While EXTERNAL owns them: no op, no second release, no acquire from another family.
    ember_tensor* refused = nullptr;
    EMBER_EXPECT_ERR(ember_tensor_unary(x.get(), EMBER_UNARY_EXP, &refused), EMBER_ERR_INVALID_ARGUMENT,
                     "released to queue family");
    EXPECT_EQ(refused, nullptr);
    EMBER_EXPECT_ERR(ember_vulkan_buffer_release(w.get(), 0, 0, VK_QUEUE_FAMILY_EXTERNAL),
                     EMBER_ERR_INVALID_ARGUMENT, "released to queue family");
    EMBER_EXPECT_ERR(ember_vulkan_buffer_acquire(w.get(), 0, 0, ember_family), EMBER_ERR_INVALID_ARGUMENT,
                     "acquire it from that family");
    EMBER_EXPECT_ERR(ember_vulkan_buffer_acquire(w.get(), 0, 0, VK_QUEUE_FAMILY_FOREIGN_EXT),
                     EMBER_ERR_INVALID_ARGUMENT, "acquire it from that family");

    // The other API changed the input and hands both back: the next op sees the new values.
    clear_log();
    const float input2[n] = {3, -3, 1, 0, -0.5f, 0.25f};
    std::memcpy(in.mapped, input2, sizeof input2);
    EMBER_ASSERT_OK(ember_vulkan_buffer_acquire(x.get(), VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT,
                                                VK_QUEUE_FAMILY_EXTERNAL));
    EMBER_ASSERT_OK(ember_vulkan_buffer_acquire(w.get(), 0, 0, VK_QUEUE_FAMILY_EXTERNAL));
    EXPECT_EQ(state(w.get()).queue_family, ember_family);
    ember_tensor* y2 = nullptr;
    EMBER_ASSERT_OK(ember_tensor_add(x.get(), x.get(), &y2));
    Tensor ty2(y2);
    EMBER_ASSERT_OK(ember_vulkan_tensor_write_wrapped(w.get(), y2));
    EMBER_ASSERT_OK(ember_vulkan_buffer_release(w.get(), VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT,
                                                VK_QUEUE_FAMILY_EXTERNAL));
    EMBER_ASSERT_OK(ember_vulkan_submit(d, &value));
    EMBER_ASSERT_OK(ember_vulkan_host_wait(d, value));
    const std::vector<VkBufferMemoryBarrier> again = barriers_on(out.buffer);
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(again[0].srcQueueFamilyIndex, VK_QUEUE_FAMILY_EXTERNAL);
    EXPECT_EQ(again[0].dstQueueFamilyIndex, ember_family);
    EXPECT_EQ(again[1].srcQueueFamilyIndex, ember_family);
    EXPECT_EQ(again[1].dstQueueFamilyIndex, VK_QUEUE_FAMILY_EXTERNAL);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(got[i], 2 * input2[i]) << i;
    EMBER_ASSERT_OK(ember_vulkan_synchronize(d));
  }
  host.free_buffer(in);
  host.free_buffer(out);
}

// Transfers within Ember's own family, or with VK_QUEUE_FAMILY_IGNORED, are plain buffer barriers (both families
// IGNORED): no ownership changes hands.
TEST(VulkanOwnership, OwnFamilyIsNoTransfer) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  HostBuffer buf = host.make_buffer(4 * sizeof(float));
  {
    ember_vulkan_device_desc desc = host.desc();
    desc.get_instance_proc_addr = reinterpret_cast<void*>(&logged_get_instance_proc_addr);
    ember_device* d = nullptr;
    EMBER_ASSERT_OK(ember_vulkan_device_adopt(&desc, &d));
    Device dev(d);
    Tensor x = wrap(d, buf, 4, EMBER_VULKAN_WRAP_WRITABLE);
    clear_log();
    EMBER_ASSERT_OK(ember_vulkan_buffer_acquire(x.get(), VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT,
                                                host.queue_family()));
    EMBER_ASSERT_OK(ember_vulkan_buffer_release(x.get(), VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT,
                                                VK_QUEUE_FAMILY_IGNORED));
    EXPECT_EQ(state(x.get()).queue_family, host.queue_family());
    uint64_t value = 0;
    EMBER_ASSERT_OK(ember_vulkan_submit(d, &value));
    EMBER_ASSERT_OK(ember_vulkan_host_wait(d, value));
    const std::vector<VkBufferMemoryBarrier> got = barriers_on(buf.buffer);
    ASSERT_EQ(got.size(), 2u);
    for (const VkBufferMemoryBarrier& b : got) {
      EXPECT_EQ(b.srcQueueFamilyIndex, VK_QUEUE_FAMILY_IGNORED);
      EXPECT_EQ(b.dstQueueFamilyIndex, VK_QUEUE_FAMILY_IGNORED);
    }
    EXPECT_EQ(got[0].srcAccessMask, static_cast<VkAccessFlags>(VK_ACCESS_HOST_WRITE_BIT));
    EXPECT_EQ(got[1].dstAccessMask, static_cast<VkAccessFlags>(VK_ACCESS_HOST_READ_BIT));
  }
  host.free_buffer(buf);
}

}  // namespace
}  // namespace ember::capi_test
