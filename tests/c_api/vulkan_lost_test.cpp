// Issue 17 part 8 from C, on a device the host owns (VulkanHost: validation with synchronization validation, any
// message fails the test): EMBER_ERR_DEVICE_LOST from a simulated loss, fail-fast afterwards (no queue use, no
// wait), recovery by adopting again and reloading the saved record; the asynchronous readback ring (values, polls
// that never block while a host semaphore is pending, wrap-around, small buffers, freeing with copies in flight);
// the queue Ember is given or chooses.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include "tests/c_api/capi_support.hpp"
#include "tests/c_api/vulkan_device.hpp"
#include "tests/c_api/vulkan_host.hpp"

namespace ember::capi_test {
namespace {

struct ReadbackFree {
  void operator()(ember_vulkan_readback* r) const { ember_vulkan_readback_free(r); }
};
using Readback = std::unique_ptr<ember_vulkan_readback, ReadbackFree>;

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Device adopt(VulkanHost& host, uint32_t queue_index = 0) {
  ember_vulkan_device_desc desc = host.desc(queue_index);
  ember_device* d = nullptr;
  EXPECT_EQ(ember_vulkan_device_adopt(&desc, &d), EMBER_OK) << ember_last_error();
  return Device(d);
}

Tensor scalar_op(const ember_tensor* x, int32_t op, double s) {
  ember_tensor* y = nullptr;
  EXPECT_EQ(ember_tensor_scalar(x, op, s, &y), EMBER_OK) << ember_last_error();
  return Tensor(y);
}

// ---------------------------------------------------------------- device lost
const std::vector<float> kX{0.5f, -1.0f, 2.0f, 0.25f, 1.5f, 0.0f, -0.5f, 1.0f, -2.0f, 0.75f, 0.5f, -1.5f};  // [3, 4]
const std::vector<float> kTarget{1.0f, 0.0f, -1.0f, 0.5f, 0.5f, 0.5f};                                   // [3, 2]

Module mlp(const ember_device* d) {
  const std::vector<ember_layer_desc> layers{linear(4, 8), layer(EMBER_LAYER_RELU), linear(8, 2)};
  ember_module* m = nullptr;
  EXPECT_EQ(ember_module_sequential(d, layers.data(), layers.size(), &m), EMBER_OK) << ember_last_error();
  return Module(m);
}

// One SGD step on the MSE between the MLP's output and kTarget.
ember_status train_step(ember_module* m, ember_optimizer* opt, const ember_tensor* x, const ember_tensor* target) {
  ember_tensor *y = nullptr, *loss = nullptr;
  ember_grads* grads = nullptr;
  ember_status s = ember_module_forward(m, x, EMBER_MODE_TRAIN, &y);
  if (s == EMBER_OK) s = ember_loss_mse(y, target, EMBER_REDUCTION_MEAN, &loss);
  if (s == EMBER_OK) s = ember_tensor_backward(loss, nullptr, &grads);
  if (s == EMBER_OK) s = ember_optimizer_step(opt, grads);
  ember_grads_free(grads);
  ember_tensor_free(loss);
  ember_tensor_free(y);
  return s;
}

std::vector<uint8_t> record_bytes(const ember_module* m) {
  ember_record* rec = nullptr;
  EXPECT_EQ(ember_module_to_record(m, &rec), EMBER_OK) << ember_last_error();
  RecordH r(rec);
  size_t size = 0;
  EXPECT_EQ(ember_record_to_bytes(rec, nullptr, nullptr, 0, &size), EMBER_OK);  // a size query
  std::vector<uint8_t> bytes(size);
  EXPECT_EQ(ember_record_to_bytes(rec, nullptr, bytes.data(), bytes.size(), &size), EMBER_OK) << ember_last_error();
  return bytes;
}

// Train on an adopted device, save; lose the device at the next submit; every later call fails at once without
// the host's queue; free everything; adopt the (on lavapipe: same) device again, reload: the same outputs.
TEST(VulkanDeviceLost, AdoptedDeviceFailsFastAndRecoversFromTheSavedRecord) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  VkSemaphore host_timeline = host.make_timeline();
  std::vector<uint8_t> saved;
  std::vector<float> before;
  {
    Device dev = adopt(host);
    ember_device* d = dev.get();
    ASSERT_NE(d, nullptr);
    Tensor x = f32_on(d, kX, {3, 4}), target = f32_on(d, kTarget, {3, 2});
    Module m = mlp(d);
    ember_optimizer_options oo{};
    EMBER_ASSERT_OK(ember_optimizer_options_init(&oo, EMBER_OPTIM_SGD));
    oo.lr = 0.1;
    ember_optimizer* o = nullptr;
    EMBER_ASSERT_OK(ember_optimizer_create(m.get(), &oo, &o));
    Optim opt(o);
    for (int i = 0; i < 3; ++i) EMBER_ASSERT_OK(train_step(m.get(), o, x.get(), target.get()));
    saved = record_bytes(m.get());
    before = floats(forward(m.get(), x.get()).get());
    ASSERT_EQ(before.size(), 6u);

    // A readback of a finished result, to check it fails fast too once the device is gone.
    ember_vulkan_readback* rb = nullptr;
    EMBER_ASSERT_OK(ember_vulkan_readback_create(d, 64, 2, &rb));
    Readback ring(rb);
    uint64_t ticket = 0;
    EMBER_ASSERT_OK(ember_vulkan_readback_enqueue(rb, x.get(), &ticket));
    EMBER_ASSERT_OK(ember_vulkan_synchronize(d));

    int32_t lost = -1;
    EMBER_ASSERT_OK(ember_vulkan_device_is_lost(d, &lost));
    EXPECT_EQ(lost, 0);
    EMBER_ASSERT_OK(ember_vulkan_simulate_device_lost(d, 0));  // the next submit or fence wait is the loss
    Tensor y = forward(m.get(), x.get());                        // recorded only
    std::vector<float> out(6, -7.0f);
    EMBER_EXPECT_ERR(ember_tensor_copy_to(y.get(), EMBER_DTYPE_F32, out.data(), out.size() * sizeof(float), nullptr),
                     EMBER_ERR_DEVICE_LOST, "vkQueueSubmit failed: VK_ERROR_DEVICE_LOST");
    EXPECT_EQ(out[0], -7.0f);
    EMBER_ASSERT_OK(ember_vulkan_device_is_lost(d, &lost));
    EXPECT_EQ(lost, 1);
    EXPECT_STREQ(ember_status_name(EMBER_ERR_DEVICE_LOST), "EMBER_ERR_DEVICE_LOST");

    // Fail fast: every use of the device fails with DEVICE_LOST, at once, and the host's queue is never taken.
    const int locks = host.locks();
    const auto t0 = Clock::now();
    const char* again = "the device was lost (VK_ERROR_DEVICE_LOST from vkQueueSubmit)";
    ember_tensor* r = reinterpret_cast<ember_tensor*>(0x1);
    EMBER_EXPECT_ERR(ember_tensor_add(x.get(), x.get(), &r), EMBER_ERR_DEVICE_LOST, again);
    EXPECT_EQ(r, nullptr);
    EMBER_EXPECT_ERR(ember_module_forward(m.get(), x.get(), EMBER_MODE_EVAL, &r), EMBER_ERR_DEVICE_LOST, again);
    EMBER_EXPECT_ERR(train_step(m.get(), o, x.get(), target.get()), EMBER_ERR_DEVICE_LOST, again);
    const int64_t shape[] = {2};
    EMBER_EXPECT_ERR(ember_tensor_zeros(d, EMBER_DTYPE_F32, shape, 1, &r), EMBER_ERR_DEVICE_LOST, again);
    EMBER_EXPECT_ERR(ember_tensor_copy_to(x.get(), EMBER_DTYPE_F32, out.data(), 12 * sizeof(float), nullptr),
                     EMBER_ERR_DEVICE_LOST, again);
    uint64_t value = 0;
    EMBER_EXPECT_ERR(ember_vulkan_submit(d, &value), EMBER_ERR_DEVICE_LOST, again);
    EMBER_EXPECT_ERR(ember_vulkan_synchronize(d), EMBER_ERR_DEVICE_LOST, again);
    EMBER_EXPECT_ERR(ember_vulkan_host_wait(d, 1), EMBER_ERR_DEVICE_LOST, again);
    EMBER_EXPECT_ERR(ember_vulkan_wait_semaphore(d, reinterpret_cast<uint64_t>(host_timeline), 1),
                     EMBER_ERR_DEVICE_LOST, again);
    float got[12];
    size_t size = 0;
    int32_t ready = -1;
    EMBER_EXPECT_ERR(ember_vulkan_readback_poll(rb, ticket, got, sizeof got, &size, &ready), EMBER_ERR_DEVICE_LOST,
                     again);
    EXPECT_EQ(ready, 0);
    EMBER_EXPECT_ERR(ember_vulkan_readback_enqueue(rb, x.get(), &ticket), EMBER_ERR_DEVICE_LOST, again);
    ember_vulkan_readback* rb2 = nullptr;
    EMBER_EXPECT_ERR(ember_vulkan_readback_create(d, 64, 2, &rb2), EMBER_ERR_DEVICE_LOST, again);
    EXPECT_EQ(host.locks(), locks) << "Ember used the host's queue after the loss";
    const double fail_fast_ms = ms_since(t0);
    EXPECT_LT(fail_fast_ms, 250.0) << "failing fast took long";
    std::printf("device lost: 12 calls failed fast in %.3f ms, host queue locks after the loss: %d\n", fail_fast_ms,
                host.locks() - locks);
  }  // freeing every handle works on the lost device
  // Recovery: adopt again (a real host recreates its VkDevice first) and reload the record saved before the loss.
  {
    Device dev = adopt(host);
    ember_device* d = dev.get();
    ASSERT_NE(d, nullptr);
    Tensor x = f32_on(d, kX, {3, 4});
    Module m = mlp(d);
    EXPECT_NE(floats(forward(m.get(), x.get()).get()), before) << "a fresh MLP already computes the trained outputs";
    ember_record* rec = nullptr;
    EMBER_ASSERT_OK(ember_record_from_bytes(saved.data(), saved.size(), &rec));
    RecordH r(rec);
    EMBER_ASSERT_OK(ember_module_load_record(m.get(), rec, EMBER_LOAD_STRICT, nullptr));
    EXPECT_EQ(floats(forward(m.get(), x.get()).get()), before);
    int32_t lost = -1;
    EMBER_ASSERT_OK(ember_vulkan_device_is_lost(d, &lost));
    EXPECT_EQ(lost, 0);
  }
  host.destroy_semaphore(host_timeline);
}

// Ember's own device: once lost, ember_device_create of that index gives a new, working device; handles made on
// the lost one keep failing fast until freed.
TEST(VulkanDeviceLost, OwnDeviceIsCreatedAgainAfterALoss) {
  SKIP_WITHOUT_VULKAN_DEVICE();
  ember_device* d = nullptr;
  EMBER_ASSERT_OK(ember_device_create(EMBER_BACKEND_VULKAN, 0, &d));
  Device dev(d);
  Tensor a = f32_on(d, {1, 2, 3}, {3});
  EMBER_ASSERT_OK(ember_vulkan_simulate_device_lost(d, 0));
  Tensor b = scalar_op(a.get(), EMBER_SCALAR_MUL, 2.0);
  std::vector<float> out(3);
  EMBER_EXPECT_ERR(ember_tensor_copy_to(b.get(), EMBER_DTYPE_F32, out.data(), sizeof(float) * 3, nullptr),
                   EMBER_ERR_DEVICE_LOST, "VK_ERROR_DEVICE_LOST");

  ember_device* d2 = nullptr;
  EMBER_ASSERT_OK(ember_device_create(EMBER_BACKEND_VULKAN, 0, &d2));
  Device dev2(d2);
  int32_t lost = -1;
  EMBER_ASSERT_OK(ember_vulkan_device_is_lost(d2, &lost));
  EXPECT_EQ(lost, 0);
  Tensor c = f32_on(d2, {1, 2, 3}, {3});
  EXPECT_EQ(floats(scalar_op(c.get(), EMBER_SCALAR_MUL, 2.0).get()), (std::vector<float>{2, 4, 6}));
  int32_t backend = -1, index = -1;
  EMBER_ASSERT_OK(ember_device_info(d, &backend, &index));
  EXPECT_EQ(index, 0) << "the lost device still reports its index";
  ember_tensor* r = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_add(a.get(), a.get(), &r), EMBER_ERR_DEVICE_LOST, "the device was lost");
}

TEST(VulkanDeviceLost, ArgumentErrors) {
  SKIP_WITHOUT_VULKAN_DEVICE();
  EMBER_EXPECT_ERR(ember_vulkan_simulate_device_lost(nullptr, 0), EMBER_ERR_INVALID_ARGUMENT, "device is NULL");
  ember_device* cpu = nullptr;
  EMBER_ASSERT_OK(ember_device_create(EMBER_BACKEND_CPU, 0, &cpu));
  Device cpu_h(cpu);
  int32_t lost = 0;
  EMBER_EXPECT_ERR(ember_vulkan_device_is_lost(cpu, &lost), EMBER_ERR_INVALID_ARGUMENT, "not a Vulkan device");
  ember_device* d = nullptr;
  EMBER_ASSERT_OK(ember_device_create(EMBER_BACKEND_VULKAN, 0, &d));
  Device dev(d);
  EMBER_EXPECT_ERR(ember_vulkan_device_is_lost(d, nullptr), EMBER_ERR_INVALID_ARGUMENT, "lost is NULL");
}

// ---------------------------------------------------------------- readback ring
bool poll_until_ready(ember_vulkan_readback* rb, uint64_t ticket, void* dst, size_t capacity) {
  const auto t0 = Clock::now();
  while (ms_since(t0) < 20000.0) {
    int32_t ready = 0;
    size_t size = 0;
    if (ember_vulkan_readback_poll(rb, ticket, dst, capacity, &size, &ready) != EMBER_OK) {
      ADD_FAILURE() << ember_last_error();
      return false;
    }
    if (ready) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// The result arrives once the GPU ran the copy; until then (Ember's work waits on the host's semaphore) every poll
// says "not ready" and returns at once.
TEST(VulkanReadback, ResultsArriveLaterAndPollsNeverBlock) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  VkSemaphore host_timeline = host.make_timeline();
  {
    Device dev = adopt(host);
    ember_device* d = dev.get();
    ember_vulkan_readback* rb = nullptr;
    EMBER_ASSERT_OK(ember_vulkan_readback_create(d, 6 * sizeof(float), 2, &rb));
    Readback ring(rb);
    Tensor x = f32_on(d, {-2.0f, -0.5f, 0.0f, 0.5f, 1.0f, 3.0f}, {2, 3});
    EMBER_ASSERT_OK(ember_vulkan_wait_semaphore(d, reinterpret_cast<uint64_t>(host_timeline), 1));
    ember_tensor* e = nullptr;
    EMBER_ASSERT_OK(ember_tensor_unary(x.get(), EMBER_UNARY_EXP, &e));
    Tensor te(e);
    Tensor y = scalar_op(e, EMBER_SCALAR_ADD, 1.0);
    uint64_t ticket = 0, value = 0;
    auto t0 = Clock::now();
    EMBER_ASSERT_OK(ember_vulkan_readback_enqueue(rb, y.get(), &ticket));
    EMBER_ASSERT_OK(ember_vulkan_submit(d, &value));  // the frame's submit: its work waits for the host on the GPU
    EXPECT_LT(ms_since(t0), 100.0) << "enqueue + submit blocked";
    EXPECT_EQ(ticket, 1u);

    float got[6] = {-9, -9, -9, -9, -9, -9};
    double worst = 0;
    t0 = Clock::now();
    while (ms_since(t0) < 300.0) {  // the host semaphore stays pending meanwhile
      const auto p0 = Clock::now();
      int32_t ready = -1;
      size_t size = 0;
      EMBER_ASSERT_OK(ember_vulkan_readback_poll(rb, ticket, got, sizeof got, &size, &ready));
      worst = std::max(worst, ms_since(p0));
      EXPECT_EQ(ready, 0);
      EXPECT_EQ(size, sizeof got);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_LT(worst, 5.0) << "a poll blocked";
    std::printf("readback: slowest poll %.3f ms while the host semaphore was pending\n", worst);
    EXPECT_EQ(got[0], -9.0f) << "a poll wrote before the copy ran";
    host.signal(host_timeline, 1);
    ASSERT_TRUE(poll_until_ready(rb, ticket, got, sizeof got));
    const std::vector<float> want = floats(y.get());  // Ember's own read of the same tensor
    EXPECT_EQ(std::vector<float>(got, got + 6), want);
    EXPECT_FLOAT_EQ(got[5], std::exp(3.0f) + 1.0f);
  }
  host.destroy_semaphore(host_timeline);
}

TEST(VulkanReadback, RingWrapsAroundAndChecksItsArguments) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host);
  ember_device* d = dev.get();
  ember_vulkan_readback* rb = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_readback_create(d, 4 * sizeof(float), 3, &rb));
  Readback ring(rb);
  std::vector<Tensor> keep;
  for (int k = 1; k <= 5; ++k) {
    const float v = static_cast<float>(k);
    keep.push_back(f32_on(d, {v, v + 0.5f, -v, 0.0f}, {4}));
    Tensor twice = scalar_op(keep.back().get(), EMBER_SCALAR_MUL, 2.0);
    uint64_t ticket = 0;
    EMBER_ASSERT_OK(ember_vulkan_readback_enqueue(rb, twice.get(), &ticket));  // the tensor may go at once
    EXPECT_EQ(ticket, static_cast<uint64_t>(k));
  }
  uint64_t value = 0;
  EMBER_ASSERT_OK(ember_vulkan_submit(d, &value));  // all five copies in one batch: slots 1 and 2 are rewritten
  float got[4] = {};
  size_t size = 0;
  int32_t ready = -1;
  EMBER_EXPECT_ERR(ember_vulkan_readback_poll(rb, 1, got, sizeof got, &size, &ready), EMBER_ERR_INVALID_ARGUMENT,
                   "ticket 1 was overwritten by ticket 4 (a ring of 3 slots");
  EMBER_EXPECT_ERR(ember_vulkan_readback_poll(rb, 2, got, sizeof got, &size, &ready), EMBER_ERR_INVALID_ARGUMENT,
                   "ticket 2 was overwritten by ticket 5");
  EMBER_EXPECT_ERR(ember_vulkan_readback_poll(rb, 6, got, sizeof got, &size, &ready), EMBER_ERR_INVALID_ARGUMENT,
                   "ticket 6 was never enqueued on this ring (last: 5)");
  EMBER_EXPECT_ERR(ember_vulkan_readback_poll(rb, 0, got, sizeof got, &size, &ready), EMBER_ERR_INVALID_ARGUMENT,
                   "ticket 0 was never enqueued");
  for (int k = 5; k >= 3; --k) {
    ASSERT_TRUE(poll_until_ready(rb, static_cast<uint64_t>(k), got, sizeof got));
    const float v = static_cast<float>(k);
    EXPECT_EQ(std::vector<float>(got, got + 4), (std::vector<float>{2 * v, 2 * v + 1, -2 * v, 0})) << k;
  }
  // A buffer too small: the size needed, nothing written.
  float small[2] = {-9, -9};
  size = 0;
  ready = -1;
  EMBER_EXPECT_ERR(ember_vulkan_readback_poll(rb, 5, small, sizeof small, &size, &ready), EMBER_ERR_BUFFER_TOO_SMALL,
                   "buffer of 8 bytes for ticket 5's 16 bytes");
  EXPECT_EQ(size, 16u);
  EXPECT_EQ(ready, 0);
  EXPECT_EQ(small[0], -9.0f);
  // Capacity 0: a size query (ember.h's Strings rule): EMBER_OK with the size, not ready, the last error kept.
  const std::string before = ember_last_error();
  size = 0;
  ready = -1;
  EXPECT_EQ(ember_vulkan_readback_poll(rb, 5, nullptr, 0, &size, &ready), EMBER_OK);
  EXPECT_EQ(size, 16u);
  EXPECT_EQ(ready, 0);
  EXPECT_EQ(std::string(ember_last_error()), before);
  EMBER_EXPECT_ERR(ember_vulkan_readback_poll(rb, 5, nullptr, 16, &size, &ready), EMBER_ERR_INVALID_ARGUMENT,
                   "dst is NULL");
  EMBER_EXPECT_ERR(ember_vulkan_readback_poll(rb, 5, got, sizeof got, &size, nullptr), EMBER_ERR_INVALID_ARGUMENT,
                   "ready is NULL");

  // Int tensors come back as their storage (int64), bool tensors as 32-bit words.
  const int64_t ivals[2] = {int64_t{1} << 40, -3};
  const int64_t ishape[] = {2};
  ember_tensor* it = nullptr;
  EMBER_ASSERT_OK(ember_tensor_from_data(d, EMBER_DTYPE_I64, ivals, sizeof ivals, ishape, 1, &it));
  Tensor ti(it);
  uint64_t ticket = 0;
  EMBER_ASSERT_OK(ember_vulkan_readback_enqueue(rb, it, &ticket));
  EMBER_ASSERT_OK(ember_vulkan_submit(d, &value));
  int64_t igot[2] = {};
  ASSERT_TRUE(poll_until_ready(rb, ticket, igot, sizeof igot));
  EXPECT_EQ(igot[0], ivals[0]);
  EXPECT_EQ(igot[1], ivals[1]);
  ember_tensor* cmp = nullptr;
  EMBER_ASSERT_OK(ember_tensor_compare_scalar(it, EMBER_CMP_GT, 0.0, &cmp));
  Tensor tcmp(cmp);
  EMBER_ASSERT_OK(ember_vulkan_readback_enqueue(rb, cmp, &ticket));
  EMBER_ASSERT_OK(ember_vulkan_submit(d, &value));
  uint32_t words[2] = {9, 9};
  ASSERT_TRUE(poll_until_ready(rb, ticket, words, sizeof words));
  EXPECT_EQ(words[0], 1u);
  EXPECT_EQ(words[1], 0u);

  // What enqueue refuses: a tensor larger than a slot, one of the CPU or of another Vulkan device.
  Tensor big = f32_on(d, {1, 2, 3, 4, 5}, {5});
  EMBER_EXPECT_ERR(ember_vulkan_readback_enqueue(rb, big.get(), &ticket), EMBER_ERR_INVALID_ARGUMENT,
                   "the tensor's 20 bytes do not fit a slot of 16 bytes");
  Tensor cpu = f32(std::vector<float>{1, 2}, {2});
  EMBER_EXPECT_ERR(ember_vulkan_readback_enqueue(rb, cpu.get(), &ticket), EMBER_ERR_INVALID_ARGUMENT,
                   "not on a Vulkan device");
  ember_device* own = nullptr;
  EMBER_ASSERT_OK(ember_device_create(EMBER_BACKEND_VULKAN, 0, &own));
  Device own_h(own);
  Tensor other = f32_on(own, {1, 2}, {2});
  EMBER_EXPECT_ERR(ember_vulkan_readback_enqueue(rb, other.get(), &ticket), EMBER_ERR_INVALID_ARGUMENT,
                   "another Vulkan device than the ring");
  EMBER_EXPECT_ERR(ember_vulkan_readback_enqueue(rb, big.get(), nullptr), EMBER_ERR_INVALID_ARGUMENT,
                   "ticket is NULL");
  EMBER_EXPECT_ERR(ember_vulkan_readback_enqueue(nullptr, big.get(), &ticket), EMBER_ERR_NULL_HANDLE,
                   "ring is NULL (expected an ember_vulkan_readback)");

  // Creation arguments.
  ember_vulkan_readback* bad = reinterpret_cast<ember_vulkan_readback*>(0x1);
  EMBER_EXPECT_ERR(ember_vulkan_readback_create(d, 0, 2, &bad), EMBER_ERR_INVALID_ARGUMENT, "slot_bytes is 0");
  EXPECT_EQ(bad, nullptr);
  EMBER_EXPECT_ERR(ember_vulkan_readback_create(d, 16, 0, &bad), EMBER_ERR_INVALID_ARGUMENT, "slots is 0 (1..4096)");
  EMBER_EXPECT_ERR(ember_vulkan_readback_create(d, 16, 4097, &bad), EMBER_ERR_INVALID_ARGUMENT, "slots is 4097");
  EMBER_EXPECT_ERR(ember_vulkan_readback_create(d, uint64_t{1} << 31, 4, &bad), EMBER_ERR_INVALID_ARGUMENT,
                   "exceed 4 GiB");
  EMBER_EXPECT_ERR(ember_vulkan_readback_create(nullptr, 16, 2, &bad), EMBER_ERR_INVALID_ARGUMENT, "device is NULL");
  EMBER_EXPECT_ERR(ember_vulkan_readback_create(d, 16, 2, nullptr), EMBER_ERR_INVALID_ARGUMENT, "out is NULL");
  EMBER_EXPECT_OK(ember_vulkan_readback_free(nullptr));
  ember_vulkan_readback* once = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_readback_create(d, 16, 1, &once));
  EMBER_EXPECT_OK(ember_vulkan_readback_free(once));
  EMBER_EXPECT_ERR(ember_vulkan_readback_free(once), EMBER_ERR_INVALID_HANDLE, "already freed");
}

// Freeing the ring, or the device handle and the tensors, while a copy waits on the GPU (for the host's
// semaphore) returns at once; the copy keeps the memory it writes until it ran (validation would report a freed
// buffer in use), and a ring keeps its device alive.
TEST(VulkanReadback, FreeingWithCopiesInFlightNeverWaits) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  VkSemaphore host_timeline = host.make_timeline();
  ember_vulkan_readback* survivor = nullptr;
  uint64_t survivor_ticket = 0;
  {
    Device dev = adopt(host);
    ember_device* d = dev.get();
    Tensor x = f32_on(d, {1, 2, 3, 4}, {4});
    EMBER_ASSERT_OK(ember_vulkan_wait_semaphore(d, reinterpret_cast<uint64_t>(host_timeline), 1));
    Tensor y = scalar_op(x.get(), EMBER_SCALAR_ADD, 10.0);
    ember_vulkan_readback* rb = nullptr;
    EMBER_ASSERT_OK(ember_vulkan_readback_create(d, 16, 2, &rb));
    EMBER_ASSERT_OK(ember_vulkan_readback_create(d, 16, 2, &survivor));
    uint64_t ticket = 0;
    EMBER_ASSERT_OK(ember_vulkan_readback_enqueue(rb, y.get(), &ticket));
    EMBER_ASSERT_OK(ember_vulkan_readback_enqueue(survivor, y.get(), &survivor_ticket));
    uint64_t value = 0;
    EMBER_ASSERT_OK(ember_vulkan_submit(d, &value));
    const auto t0 = Clock::now();
    EMBER_ASSERT_OK(ember_vulkan_readback_free(rb));
    EXPECT_LT(ms_since(t0), 50.0) << "freeing a ring with a copy in flight waited";
  }  // the tensors and the device handle go too: the survivor ring keeps the device
  host.signal(host_timeline, 1);
  float got[4] = {};
  ASSERT_TRUE(poll_until_ready(survivor, survivor_ticket, got, sizeof got));
  EXPECT_EQ(std::vector<float>(got, got + 4), (std::vector<float>{11, 12, 13, 14}));
  EMBER_EXPECT_OK(ember_vulkan_readback_free(survivor));  // the last hold on the device: Ember's objects go here
  host.destroy_semaphore(host_timeline);
}

// In host-record mode the copy goes into the host's command buffer (no submit, no queue lock) and is ready once
// the host reported its frame safe -- not before, even when the GPU is done, since only the host knows that.
TEST(VulkanReadback, HostRecordedCopiesAreReadyOnceTheFrameIsSafe) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host);
  ember_device* d = dev.get();
  ember_vulkan_readback* rb = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_readback_create(d, 16, 2, &rb));
  Readback ring(rb);
  Tensor x = f32_on(d, {1, 2, 3, 4}, {4});
  uint64_t value = 0;
  EMBER_ASSERT_OK(ember_vulkan_submit(d, &value));  // nothing of Ember's own may be pending in record mode
  const int locks = host.locks();
  VkCommandBuffer cb = host.begin_frame();
  EMBER_ASSERT_OK(ember_vulkan_record_begin(d, cb, host.queue_family(), 1));
  Tensor y = scalar_op(x.get(), EMBER_SCALAR_MUL, 3.0);
  uint64_t ticket = 0;
  EMBER_ASSERT_OK(ember_vulkan_readback_enqueue(rb, y.get(), &ticket));
  EMBER_ASSERT_OK(ember_vulkan_record_end(d));
  EXPECT_EQ(host.locks(), locks) << "Ember used the queue in host-record mode";
  float got[4] = {-9, -9, -9, -9};
  size_t size = 0;
  int32_t ready = -1;
  EMBER_ASSERT_OK(ember_vulkan_readback_poll(rb, ticket, got, sizeof got, &size, &ready));
  EXPECT_EQ(ready, 0);
  host.finish_frame(host.submit_frame(cb), cb);  // the GPU ran the frame; Ember has not been told
  EMBER_ASSERT_OK(ember_vulkan_readback_poll(rb, ticket, got, sizeof got, &size, &ready));
  EXPECT_EQ(ready, 0);
  EXPECT_EQ(got[0], -9.0f);
  EMBER_ASSERT_OK(ember_vulkan_safe_frame(d, 1));
  EMBER_ASSERT_OK(ember_vulkan_readback_poll(rb, ticket, got, sizeof got, &size, &ready));
  EXPECT_EQ(ready, 1);
  EXPECT_EQ(std::vector<float>(got, got + 4), (std::vector<float>{3, 6, 9, 12}));
}

// A copy waits for the caller's submit: enqueue never submits on its own.
TEST(VulkanReadback, EnqueueLeavesTheSubmitToTheCaller) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host);
  ember_device* d = dev.get();
  ember_vulkan_readback* rb = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_readback_create(d, 16, 2, &rb));
  Readback ring(rb);
  Tensor x = f32_on(d, {1, 2, 3, 4}, {4});
  Tensor y = scalar_op(x.get(), EMBER_SCALAR_SUB, 1.0);
  const int locks = host.locks();
  uint64_t ticket = 0;
  EMBER_ASSERT_OK(ember_vulkan_readback_enqueue(rb, y.get(), &ticket));
  EXPECT_EQ(host.locks(), locks) << "enqueue submitted";
  float got[4] = {};
  size_t size = 0;
  int32_t ready = -1;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EMBER_ASSERT_OK(ember_vulkan_readback_poll(rb, ticket, got, sizeof got, &size, &ready));
  EXPECT_EQ(ready, 0);
  uint64_t value = 0;
  EMBER_ASSERT_OK(ember_vulkan_submit(d, &value));
  ASSERT_TRUE(poll_until_ready(rb, ticket, got, sizeof got));
  EXPECT_EQ(std::vector<float>(got, got + 4), (std::vector<float>{0, 1, 2, 3}));
}

// ---------------------------------------------------------------- queue choice
TEST(VulkanQueueChoice, AdoptedDeviceRunsOnTheQueueItIsGiven) {
  VulkanHost host(2);
  SKIP_WITHOUT_HOST(host);
  // A queue the device was not created with is refused by name.
  {
    ember_vulkan_device_desc desc = host.desc(host.queues());
    ember_device* d = reinterpret_cast<ember_device*>(0x1);
    EMBER_EXPECT_ERR(ember_vulkan_device_adopt(&desc, &d), EMBER_ERR_INVALID_ARGUMENT,
                     "index " + std::to_string(host.queues()) + " does not exist");
    EXPECT_EQ(d, nullptr);
  }
  const uint32_t index = host.queues() - 1;  // queue 1 where the family has two, else 0 (lavapipe has one)
  if (index == 0)
    std::printf("note: queue family %u has %u queue(s): the adopted-queue check runs on queue 0 only\n",
                host.queue_family(), host.family_queue_count());
  Device dev = adopt(host, index);
  ember_device* d = dev.get();
  ASSERT_NE(d, nullptr);
  uint32_t family = 99, queue = 99;
  EMBER_ASSERT_OK(ember_vulkan_queue_info(d, &family, &queue));
  EXPECT_EQ(family, host.queue_family());
  EXPECT_EQ(queue, index);
  EMBER_EXPECT_OK(ember_vulkan_queue_info(d, nullptr, nullptr));
  // Work on that queue, read by the host on its own queue 0 after Ember's timeline (a cross-queue wait).
  Tensor x = f32_on(d, {1, 2, 3, 4}, {4});
  Tensor y = scalar_op(x.get(), EMBER_SCALAR_MUL, -3.0);
  uint64_t buffer = 0, offset = 0, size = 0, value = 0, semaphore = 0;
  EMBER_ASSERT_OK(ember_vulkan_tensor_buffer(y.get(), &buffer, &offset, &size));
  EMBER_ASSERT_OK(ember_vulkan_submit(d, &value));
  EMBER_ASSERT_OK(ember_vulkan_timeline_semaphore(d, &semaphore));
  HostBuffer readback = host.make_buffer(size);
  host.copy_after(semaphore, value, reinterpret_cast<VkBuffer>(buffer), offset, readback.buffer, size);
  const auto* out = static_cast<const float*>(readback.mapped);
  EXPECT_EQ(std::vector<float>(out, out + 4), (std::vector<float>{-3, -6, -9, -12}));
  EMBER_EXPECT_OK(ember_vulkan_synchronize(d));
  y.reset();
  x.reset();
  dev.reset();
  host.free_buffer(readback);
}

TEST(VulkanQueueChoice, OwnDeviceReportsItsQueue) {
  SKIP_WITHOUT_VULKAN_DEVICE();
  ember_device* d = nullptr;
  EMBER_ASSERT_OK(ember_device_create(EMBER_BACKEND_VULKAN, 0, &d));
  Device dev(d);
  uint32_t family = 99, queue = 99;
  EMBER_ASSERT_OK(ember_vulkan_queue_info(d, &family, &queue));
  // The physical device's families, as the host sees them: Ember's default is a compute-only family when there is one.
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateInstance(&ci, nullptr, &instance), VK_SUCCESS);
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance, &n, nullptr);
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(instance, &n, devices.data());
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(devices[0], &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(devices[0], &nq, families.data());
  vkDestroyInstance(instance, nullptr);
  int want = -1;
  for (uint32_t i = 0; i < nq && want < 0; ++i)
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
      want = static_cast<int>(i);
  for (uint32_t i = 0; i < nq && want < 0; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) want = static_cast<int>(i);
  EXPECT_EQ(family, static_cast<uint32_t>(want));
  EXPECT_EQ(queue, 0u);
}

}  // namespace
}  // namespace ember::capi_test
