// The Vulkan backend's machinery, beneath the op suite: pooled memory, the maxStorageBufferRange limit, barriers
// only between dependent dispatches, periodic submits, the pipeline cache round trip, and adopting a device that
// Ember did not create (and not destroying it). Runs on the default context with validation on
// (tests/support/vulkan_main.cpp).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "backends/vulkan/commands.hpp"
#include "backends/vulkan/context.hpp"
#include "backends/vulkan/interop.hpp"
#include "backends/vulkan/memory.hpp"
#include "backends/vulkan/pipelines.hpp"
#include "backends/vulkan/resource_state.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "engine/ember.hpp"
#include "engine/nn/nn.hpp"
#include "engine/optim/optim.hpp"
#include "records/module_record.hpp"

namespace ember {
namespace {

using T2 = Tensor<Vulkan, 2>;

std::shared_ptr<vk::Context> ctx() { return vk::default_context(); }

// Dropout's masks are made on the device (shaders/bernoulli.comp), not drawn on the host and uploaded: the values are
// the same either way (op suite, RandomBernoulliMatchesHostAtEverySizeAndP), so this is what shows the route.
static_assert(HasBernoulliKernel<Vulkan> && DrawsOnBackend<Autodiff<Vulkan>, Float>);

TEST(VulkanMemory, FreedRangesAreReusedWithoutNewBlocks) {
  auto& alloc = ctx()->allocator();
  ctx()->synchronize();
  { auto warm = alloc.allocate(1 << 20, vk::MemoryUse::Tensor); }
  ctx()->synchronize();
  const auto before = alloc.stats(vk::MemoryUse::Tensor);
  for (int i = 0; i < 100; ++i) {
    auto a = alloc.allocate(1 << 20, vk::MemoryUse::Tensor);
    auto b = alloc.allocate(3 << 10, vk::MemoryUse::Tensor);
    EXPECT_NE(a->offset() + a->size() > b->offset() && b->offset() + b->size() > a->offset() &&
                  a->buffer() == b->buffer(),
              true)
        << "live allocations overlap";
  }
  const auto after = alloc.stats(vk::MemoryUse::Tensor);
  EXPECT_EQ(after.blocks, before.blocks);
  EXPECT_EQ(after.in_use, before.in_use);
}

TEST(VulkanMemory, TensorsBeyondTheBindableRangeAreRefused) {
  const auto range = ctx()->info().max_storage_buffer_range;
  try {
    (void)ctx()->allocator().allocate(range + 4, vk::MemoryUse::Tensor);
    FAIL() << "expected DeviceOutOfMemory";
  } catch (const DeviceOutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("maxStorageBufferRange"), std::string::npos) << e.what();
  }
}

TEST(VulkanMemory, DeviceLocalTensorsMoveThroughStagingBuffers) {
  // device_local_tensors: even on unified memory (lavapipe) tensors are never mapped, so uploads and reads are
  // recorded copies through staging memory -- the discrete-GPU path, which must give back the exact values.
  vk::ContextOptions o;
  o.validation = true;
  o.on_validation_message = [](const std::string& m) { ADD_FAILURE() << m; };
  o.device_local_tensors = true;
  const auto dev = vulkan::create(o);
  const auto c = dev.get();
  EXPECT_FALSE(c->allocator().host_visible(vk::MemoryUse::Tensor));
  EXPECT_EQ(c->allocator().stats(vk::MemoryUse::Staging).blocks, 0u);
  const std::vector<float> values{1.5f, -2.25f, 3e-20f, 7e30f, 0.0f, -0.0f};
  const auto x = T2::from_values(values, {2, 3}, dev);
  EXPECT_EQ(x.primitive().alloc->mapped(), nullptr) << "a device-local tensor was mapped";
  EXPECT_GT(c->allocator().stats(vk::MemoryUse::Staging).blocks, 0u) << "the upload did not use a staging buffer";
  const auto copies = c->stream().stats();
  EXPECT_EQ(x.into_data().to_vec<float>(), values);
  EXPECT_EQ(x.mul_scalar(2.0).into_data().to_vec<float>()[3], 14e30f);
  EXPECT_GT(c->stream().stats().waits, copies.waits);
  const auto i = Tensor<Vulkan, 1, Int>::from_values(std::vector<int64_t>{int64_t{1} << 40, -3}, {2}, dev);
  EXPECT_EQ(i.into_data().to_vec<int64_t>(), (std::vector<int64_t>{int64_t{1} << 40, -3}));
}

TEST(VulkanStream, BarriersOnlyBetweenDependentDispatches) {
  auto& s = ctx()->stream();
  const auto a = T2::full({64, 64}, 1.0);
  const auto b = T2::full({64, 64}, 2.0);
  ctx()->synchronize();
  const auto start = s.stats();
  // Independent: two ops reading the same inputs, writing different outputs.
  const auto x = a.add(b);
  const auto y = a.mul(b);
  const auto mid = s.stats();
  EXPECT_EQ(mid.barriers, start.barriers) << "independent dispatches got a barrier";
  EXPECT_EQ(mid.dispatches, start.dispatches + 2);
  // Dependent: reads x, written by an earlier dispatch.
  const auto z = x.exp();
  EXPECT_EQ(s.stats().barriers, mid.barriers + 1);
  EXPECT_NEAR(z.into_data().to_vec<float>()[0], std::exp(3.0f), 1e-3);
  EXPECT_EQ(y.into_data().to_vec<float>()[5], 2.0f);
}

TEST(VulkanStream, WriteAfterReadGetsABarrier) {
  // Overwriting memory an earlier, unbarriered command reads (in-place updates do this) needs an execution
  // dependency: a GPU may start the write before the read has finished. Synchronization validation reports a
  // missing one as WRITE_AFTER_READ even on lavapipe, which runs commands in order.
  auto& s = ctx()->stream();
  const auto a = T2::full({64, 64}, 1.0);
  const auto b = T2::full({64, 64}, 2.0);
  ctx()->synchronize();
  const auto start = s.stats();
  const auto x = a.exp();  // reads a
  EXPECT_EQ(s.stats().barriers, start.barriers);
  {
    std::lock_guard lock(ctx()->mutex());
    s.copy(b.primitive().alloc, 0, a.primitive().alloc, 0, a.primitive().alloc->size());  // writes a
  }
  EXPECT_EQ(s.stats().barriers, start.barriers + 1) << "no barrier between a read and a later write of it";
  EXPECT_NEAR(x.into_data().to_vec<float>()[7], std::exp(1.0f), 1e-5);
  EXPECT_EQ(a.into_data().to_vec<float>()[7], 2.0f);
}

TEST(VulkanValidation, SynchronizationValidationReportsAMissingBarrier) {
  // The test binaries rely on the layer's synchronization validation to see hazards lavapipe never shows in
  // results: a copy recorded behind the stream's back (no buffer args, so no barrier) reads memory a fill has just
  // written, and the layer must say so.
  if (const char* e = std::getenv("EMBER_VULKAN_SYNC_VALIDATION"); e && std::string(e) == "0")
    GTEST_SKIP() << "EMBER_VULKAN_SYNC_VALIDATION=0";
  static std::atomic<int> hazards{0};
  vk::ContextOptions o;
  o.validation = true;
  o.on_validation_message = [](const std::string& m) {
    if (m.find("SYNC-HAZARD") != std::string::npos) ++hazards;
    else ADD_FAILURE() << m;
  };
  const auto dev = vulkan::create(o);
  const auto c = dev.get();
  ASSERT_TRUE(c->info().synchronization_validation);
  const auto a = T2::full({16, 16}, 1.0, dev);  // a fill dispatch writes a
  const auto b = T2::full({16, 16}, 0.0, dev);
  {
    std::lock_guard lock(c->mutex());
    const auto& src = *a.primitive().alloc;
    const auto& dst = *b.primitive().alloc;
    c->stream().record({}, [&](VkCommandBuffer cb) {
      const VkBufferCopy region{src.offset(), dst.offset(), src.size()};
      c->fn().CmdCopyBuffer(cb, src.buffer(), dst.buffer(), 1, &region);
    });
  }
  c->synchronize();
  EXPECT_GT(hazards.load(), 0) << "no SYNC-HAZARD message for a read right after an unbarriered write";
}

TEST(VulkanStream, LongGraphsAreSubmittedInBatches) {
  auto& s = ctx()->stream();
  ctx()->synchronize();
  const auto before = s.stats().submits;
  auto x = T2::full({8, 8}, 0.0);
  for (int i = 0; i < 200; ++i) x = x.add_scalar(1.0);
  EXPECT_GE(s.stats().submits, before + 2) << "200 dispatches should have been submitted in batches of 64";
  EXPECT_EQ(x.into_data().to_vec<float>()[63], 200.0f);
}

TEST(VulkanPipelines, CacheRoundTripsThroughANewContext) {
  (void)T2::full({4, 4}, 1.0).add_scalar(1.0).into_data();
  const auto data = ctx()->save_pipeline_cache();
  EXPECT_GT(data.size(), 16u);
  vk::ContextOptions o;
  o.validation = true;
  o.on_validation_message = [](const std::string& m) { ADD_FAILURE() << m; };
  o.pipeline_cache = data;
  const auto dev = vulkan::create(o);
  const auto r = T2::full({4, 4}, 1.0, dev).add_scalar(2.0).into_data().to_vec<float>();
  EXPECT_EQ(r[15], 3.0f);
  o.pipeline_cache = {1, 2, 3, 4, 5};  // garbage: ignored, never an error
  const auto dev2 = vulkan::create(o);
  EXPECT_EQ(T2::full({2, 2}, 4.0, dev2).into_data().to_vec<float>()[3], 4.0f);
}

TEST(VulkanInterop, AdoptedDeviceIsSharedAndNotDestroyed) {
  // Ember's own context plays the host: its device is handed to a second context, which must run ops on it and
  // leave it alive when it goes away.
  auto host = ctx();
  vulkan::ExternalDevice ext;
  ext.instance = host->instance();
  ext.physical_device = host->physical_device();
  ext.device = host->device();
  ext.queue_family = host->queue_family();
  static int locks = 0, unlocks = 0;
  ext.lock_queue = [](void*) { ++locks; };
  ext.unlock_queue = [](void*) { ++unlocks; };
  {
    const auto dev = vulkan::adopt(ext);
    const auto x = T2::from_values(std::vector<float>{1, 2, 3, 4}, {2, 2}, dev);
    EXPECT_EQ(x.add(x).into_data().to_vec<float>()[3], 8.0f);
    const auto view = vulkan::buffer_of(x);
    EXPECT_NE(view.buffer, VK_NULL_HANDLE);
    EXPECT_EQ(view.size, 16u);
    // Wrap the storage of a tensor (a buffer this context does not own) and compute from it.
    const auto w = vulkan::wrap_buffer<Float, 2>(dev, view.buffer, view.offset, {2, 2});
    EXPECT_EQ(w.mul_scalar(10.0).into_data().to_vec<float>()[2], 30.0f);
    const uint64_t v = vulkan::submit(dev);
    vulkan::host_wait(dev, v);
  }
  EXPECT_GT(locks, 0);
  EXPECT_EQ(locks, unlocks);
  // The host's device still works after the adopting context is gone.
  EXPECT_EQ(T2::full({2, 2}, 5.0).add_scalar(1.0).into_data().to_vec<float>()[0], 6.0f);
}

TEST(VulkanInterop, RequirementsNameWhatEmberNeeds) {
  const auto r = vulkan::requirements();
  EXPECT_TRUE(r.shader_int64);
  EXPECT_TRUE(r.timeline_semaphore);
  EXPECT_TRUE(r.queue_flags & VK_QUEUE_COMPUTE_BIT);
  EXPECT_GE(r.api_version, VK_API_VERSION_1_2);
}

TEST(VulkanErrors, BadArgumentsAreErrorsNotCrashes) {
  vulkan::ExternalDevice ext;  // all null
  EXPECT_THROW(vulkan::adopt(ext), ArgumentError);
  auto host = ctx();
  ext.instance = host->instance();
  ext.physical_device = host->physical_device();
  ext.device = host->device();
  ext.queue_family = 99;
  EXPECT_THROW(vulkan::adopt(ext), ArgumentError);
  const auto x = T2::full({2, 2}, 1.0);
  const auto misaligned = [&] { (void)vulkan::wrap_buffer<Float, 2>(VulkanDevice{}, vulkan::buffer_of(x).buffer, 3, {1, 1}); };
  EXPECT_THROW(misaligned(), ArgumentError);
  EXPECT_THROW(vulkan::host_wait(VulkanDevice{}, ctx()->stream().last_submitted() + 100), ArgumentError);
  // Tensors of two devices in one op: an error, not a crash.
  vk::ContextOptions o;
  o.validation = true;
  o.on_validation_message = [](const std::string& m) { ADD_FAILURE() << m; };
  const auto other = vulkan::create(o);
  const auto y = T2::full({2, 2}, 2.0, other);
  EXPECT_THROW((void)x.add(y), ArgumentError);
  EXPECT_EQ(x.add(y.to_device(VulkanDevice{})).into_data().to_vec<float>()[0], 3.0f);
}

TEST(VulkanOptimizer, LoadedStateFollowsTheModulesDevice) {
  // A module on a device other than the default: Adam state saved and loaded back must land on that device (the
  // record has no device), so the next step does not mix contexts (which the validation layer would report).
  using AD = Autodiff<Vulkan>;
  vk::ContextOptions o;
  o.validation = true;
  o.on_validation_message = [](const std::string& m) { ADD_FAILURE() << m; };
  const auto dev = vulkan::create(o);
  seed(5);
  auto model = nn::LinearConfig{4, 3}.init<AD>(dev);
  const auto x = Tensor<AD, 2>::from_values(std::vector<float>{1, 2, 3, 4, -1, 0, 2, 1}, {2, 4}, dev);
  auto loss = [&](const nn::Linear<AD>& m) { return m.forward(x).mul(m.forward(x)).mean(); };
  auto grads = [&](const nn::Linear<AD>& m) { return GradientsParams<AD>::from_grads(loss(m).backward(), m); };
  Adam<AD> a;
  model = a.step(0.1, model, grads(model));
  Adam<AD> b;
  b.load_state(a.state(), model);
  const auto next_a = a.step(0.1, model, grads(model));
  const auto next_b = b.step(0.1, model, grads(model));
  EXPECT_EQ(into_record(next_a).params.at("weight").data.to_vec<float>(),
            into_record(next_b).params.at("weight").data.to_vec<float>());
}

// Host-record mode (issue 17 part 1) on a context of Ember's own whose tensors are never mapped, so the upload is a
// staging copy recorded into the "host's" command buffer: the staging memory and the tensors dropped during the
// frame stay allocated until safe_frame reports the frame complete, and not a byte longer.
TEST(VulkanHostRecord, TransientMemoryIsFreedOnlyAfterTheSafeFrame) {
  vk::ContextOptions o;
  o.validation = true;
  o.on_validation_message = [](const std::string& m) { ADD_FAILURE() << m; };
  o.device_local_tensors = true;
  const auto dev = vulkan::create(o);
  const auto c = dev.get();
  const auto& fn = c->fn();
  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  // Warm-up outside record mode: pipelines, blocks.
  EXPECT_EQ(T2::from_values(values, {2, 3}, dev).exp().add_scalar(1.0).into_data().to_vec<float>().size(), 6u);
  c->synchronize();
  const auto tensors = c->allocator().stats(vk::MemoryUse::Tensor).in_use;
  const auto staging = c->allocator().stats(vk::MemoryUse::Staging).in_use;

  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.queueFamilyIndex = c->queue_family();
  VkCommandPool pool = VK_NULL_HANDLE;
  ASSERT_EQ(fn.CreateCommandPool(c->device(), &pi, nullptr, &pool), VK_SUCCESS);
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  ASSERT_EQ(fn.AllocateCommandBuffers(c->device(), &ai, &cb), VK_SUCCESS);
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  ASSERT_EQ(fn.BeginCommandBuffer(cb, &bi), VK_SUCCESS);

  const auto submits = c->stream().stats().submits;
  vulkan::record_begin(dev, cb, c->queue_family(), 1);
  {
    const auto x = T2::from_values(values, {2, 3}, dev);
    const auto y = x.exp().add(x);
    EXPECT_THROW((void)y.into_data(), VulkanError) << "a read in record mode must not submit";
  }  // every handle is gone; the frame still uses the memory
  vulkan::record_end(dev);
  EXPECT_EQ(c->stream().stats().submits, submits);
  EXPECT_GT(c->allocator().stats(vk::MemoryUse::Staging).in_use, staging) << "the upload's staging was released";
  EXPECT_GT(c->allocator().stats(vk::MemoryUse::Tensor).in_use, tensors) << "the frame's tensors were released";

  ASSERT_EQ(fn.EndCommandBuffer(cb), VK_SUCCESS);
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  ASSERT_EQ(fn.CreateFence(c->device(), &fi, nullptr, &fence), VK_SUCCESS);
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  c->with_queue([&](VkQueue q) { EXPECT_EQ(fn.QueueSubmit(q, 1, &si, fence), VK_SUCCESS); });
  EXPECT_EQ(fn.WaitForFences(c->device(), 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
  // Completed, but not reported: still held.
  EXPECT_GT(c->allocator().stats(vk::MemoryUse::Tensor).in_use, tensors);
  EXPECT_EQ(vulkan::pending_frames(dev).frames, 1u);
  vulkan::safe_frame(dev, 1);
  EXPECT_EQ(c->allocator().stats(vk::MemoryUse::Staging).in_use, staging);
  EXPECT_EQ(c->allocator().stats(vk::MemoryUse::Tensor).in_use, tensors);
  EXPECT_EQ(vulkan::pending_frames(dev).frames, 0u);
  fn.DestroyFence(c->device(), fence, nullptr);
  fn.DestroyCommandPool(c->device(), pool, nullptr);
}

// ---------------------------------------------------------------- issue 17 parts 4 and 5: memory the host
// controls, resource states (the C ABI's side, with a host allocator: tests/c_api/vulkan_memory_test.cpp)
vk::ContextOptions validated_options() {
  vk::ContextOptions o;
  o.validation = true;
  o.on_validation_message = [](const std::string& m) { ADD_FAILURE() << m; };
  return o;
}

// Ember's own device with a budget: staging blocks count too (device_local_tensors makes uploads use them), the
// blocks shrink to fit, past the budget an allocation fails after empty blocks are released, and the device goes
// on working once memory is freed.
TEST(VulkanMemoryBudget, OwnDeviceHonoursTheBudget) {
  vk::ContextOptions o = validated_options();
  o.device_local_tensors = true;
  o.memory_budget = 6 << 20;
  const auto dev = vulkan::create(o);
  auto& alloc = dev.get()->allocator();
  std::vector<Tensor<Vulkan, 1>> held;
  std::string failure;
  try {
    for (int i = 0; i < 100; ++i) {
      const std::vector<float> mib(1 << 18, static_cast<float>(i));  // 1 MiB
      held.push_back(Tensor<Vulkan, 1>::from_values(mib, {1 << 18}, dev));
      EXPECT_LE(alloc.totals().reserved, o.memory_budget);
    }
  } catch (const DeviceOutOfMemory& e) {
    failure = e.what();
  }
  ASSERT_FALSE(failure.empty()) << "100 MiB of tensors fit in a 6 MiB budget";
  EXPECT_NE(failure.find("budget of 6291456 bytes"), std::string::npos) << failure;
  EXPECT_GE(held.size(), 3u) << "the budget was wasted on block sizes";
  EXPECT_EQ(held[1].into_data().to_vec<float>()[5], 1.0f);
  const auto peak = alloc.totals().peak_reserved;
  EXPECT_LE(peak, o.memory_budget);
  held.clear();
  dev.get()->synchronize();
  alloc.release_unused();
  EXPECT_LT(alloc.totals().reserved, peak);
  EXPECT_EQ(alloc.totals().in_use, 256u) << "only the stream's scratch buffer is left";
  const auto y = Tensor<Vulkan, 1>::from_values(std::vector<float>{1, 2}, {2}, dev).mul_scalar(3.0);
  EXPECT_EQ(y.into_data().to_vec<float>(), (std::vector<float>{3, 6}));
}

TEST(VulkanMemoryBudget, TensorUsagesAreCheckedAndApplied) {
  vk::ContextOptions o = validated_options();
  o.tensor_buffer_usage = VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;
  const auto dev = vulkan::create(o);
  const auto x = Tensor<Vulkan, 1>::from_values(std::vector<float>{1}, {1}, dev);
  EXPECT_NE(x.primitive().alloc->usage() & VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, 0u);
  o.tensor_buffer_usage = VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  EXPECT_THROW(vulkan::create(o), ArgumentError);
}

// A product of at most 8 rows runs gemm_skinny.comp instead of gemm.comp's 64 x 64 tiles: the same bits. Each of
// its rows against the same row of a 64-row product (the tiled shader; rows do not interact), for every transpose
// flag, odd K and N (the slabs' and columns' edges; K = 3 takes the shallowest slab), and the row counts of each
// skinny variant.
// dev: a context of the test's own, whose pipeline count says which shaders the products made.
void few_rows_case(const VulkanDevice& dev, int64_t k) {
  constexpr int64_t kBig = 64, n = 100;
  Rng rng(5);
  std::vector<float> a(kBig * k), b(k * n);  // logical A [64, k] and B [k, n]
  for (auto& v : a) v = static_cast<float>(rng.uniform() * 2 - 1);
  for (auto& v : b) v = static_cast<float>(rng.uniform() * 2 - 1);
  // The first `rows` rows of A, stored [rows, k] or transposed [k, rows]; B stored [k, n] or [n, k].
  const auto a_stored = [&](int64_t rows, bool trans) {
    std::vector<float> out(static_cast<std::size_t>(rows * k));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < k; ++j) out[static_cast<std::size_t>(trans ? j * rows + r : r * k + j)] = a[r * k + j];
    return T2::from_values(std::span<const float>(out),
                           trans ? std::array<int64_t, 2>{k, rows} : std::array<int64_t, 2>{rows, k}, dev);
  };
  const auto b_stored = [&](bool trans) {
    std::vector<float> out(b.size());
    for (int64_t j = 0; j < k; ++j)
      for (int64_t c = 0; c < n; ++c) out[static_cast<std::size_t>(trans ? c * k + j : j * n + c)] = b[j * n + c];
    return T2::from_values(std::span<const float>(out),
                           trans ? std::array<int64_t, 2>{n, k} : std::array<int64_t, 2>{k, n}, dev);
  };
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      const auto bt = b_stored(tb);
      const auto big = Vulkan::float_matmul_transposed(a_stored(kBig, ta).primitive(), bt.primitive(), ta, tb);
      const std::vector<float> want = T2(big).into_data().to_vec<float>();
      const std::size_t pipelines = dev.get()->pipelines().size();
      for (const int64_t rows : {1, 2, 3, 4, 7, 8, 9}) {  // 9: the tiled shader
        const auto small = Vulkan::float_matmul_transposed(a_stored(rows, ta).primitive(), bt.primitive(), ta, tb);
        const std::vector<float> got = T2(small).into_data().to_vec<float>();
        ASSERT_EQ(got.size(), static_cast<std::size_t>(rows * n));
        EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
            << "rows " << rows << ", trans_a " << ta << ", trans_b " << tb;
      }
      // The skinny shader ran: one pipeline per row count variant (1, 2, 4, 8 rows) and transpose flags.
      EXPECT_EQ(dev.get()->pipelines().size() - pipelines, 4u);
    }
}

TEST(VulkanGemm, FewRowsGiveTheTiledShadersBits) {
  vk::ContextOptions o;
  o.validation = true;
  o.on_validation_message = [](const std::string& m) { ADD_FAILURE() << m; };
  const auto dev = vulkan::create(o);
  for (const int64_t k : {37, 3}) few_rows_case(dev, k);
}

// Ember's last write of a range: a dispatch (compute shader) or a copy (transfer), what a host's barrier starts
// from; a read-only wrapped buffer refuses writes in the stream itself, before anything is recorded.
TEST(VulkanResourceState, LastWriteAndReadOnlyWraps) {
  const auto c = ctx();
  auto& alloc = c->allocator();
  const auto x = T2::from_values(std::vector<float>{1, 2, 3, 4}, {2, 2}).mul_scalar(2.0);
  const auto& a = x.primitive().alloc;
  EXPECT_EQ(vk::buffer_state(*c, *a).write_stage,
            static_cast<VkPipelineStageFlags>(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT));
  auto dst = alloc.allocate(16, vk::MemoryUse::Tensor);
  {
    std::lock_guard lock(c->mutex());
    c->stream().copy(a, 0, dst, 0, 16);
  }
  const vk::BufferState s = vk::buffer_state(*c, *dst);
  EXPECT_EQ(s.write_stage, static_cast<VkPipelineStageFlags>(VK_PIPELINE_STAGE_TRANSFER_BIT));
  EXPECT_EQ(s.write_access, static_cast<VkAccessFlags>(VK_ACCESS_TRANSFER_WRITE_BIT));
  EXPECT_FALSE(s.wrapped);
  EXPECT_TRUE(s.writable);
  // dst's buffer range, wrapped as the host's would be.
  auto read_only = alloc.wrap(dst->buffer(), dst->offset(), 16, false);
  auto writable = alloc.wrap(dst->buffer(), dst->offset(), 16, true);
  EXPECT_TRUE(vk::buffer_state(*c, *read_only).wrapped);
  EXPECT_FALSE(vk::buffer_state(*c, *read_only).writable);
  const auto before = c->stream().stats().dispatches;
  EXPECT_THROW(vk::write_wrapped(*c, read_only, a, 16), ArgumentError);
  {
    std::lock_guard lock(c->mutex());
    EXPECT_THROW(c->stream().copy(a, 0, read_only, 0, 16), ArgumentError);
  }
  EXPECT_EQ(c->stream().stats().dispatches, before) << "a refused write was recorded";
  vk::write_wrapped(*c, writable, a, 16);
  EXPECT_EQ(vk::buffer_state(*c, *writable).write_stage,
            static_cast<VkPipelineStageFlags>(VK_PIPELINE_STAGE_TRANSFER_BIT));
  // The host's barriers: same family, so no ownership changes hands.
  vk::acquire(*c, writable, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT, VK_QUEUE_FAMILY_IGNORED);
  vk::release(*c, writable, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT, c->queue_family());
  EXPECT_EQ(vk::buffer_state(*c, *writable).queue_family, c->queue_family());
  c->synchronize();
}

}  // namespace
}  // namespace ember
