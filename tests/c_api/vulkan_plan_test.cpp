// Vulkan plans from C (issue 17, parts 2 and 7): a forward captured once and recorded into the host's command
// buffers frame after frame gives what the eager forward gives; inputs are rebound per frame; ops needing a CPU
// round trip are rejected naming the op; wrong shapes and misuse are errors; handles free in any order; the host's
// VkPipelineCache is used; warm-up creates the pipelines. Every test runs on a host device with validation and
// synchronization validation (VulkanHost fails the test on any message).
#include <cmath>
#include <cstring>

#include "tests/c_api/capi_support.hpp"
#include "tests/c_api/vulkan_device.hpp"
#include "tests/c_api/vulkan_host.hpp"

namespace ember::capi_test {
namespace {

struct PlanFree {
  void operator()(ember_vulkan_plan* p) const { ember_vulkan_plan_free(p); }
};
using Plan = std::unique_ptr<ember_vulkan_plan, PlanFree>;

Device adopt(VulkanHost& host, uint64_t pipeline_cache = 0) {
  ember_vulkan_device_desc desc = host.desc();
  ember_vulkan_adopt_options o{};
  EXPECT_EQ(ember_vulkan_adopt_options_init(&o), EMBER_OK);
  o.pipeline_cache = pipeline_cache;
  ember_device* d = nullptr;
  EXPECT_EQ(ember_vulkan_device_adopt_ex(&desc, &o, &d), EMBER_OK) << ember_last_error();
  return Device(d);
}

Module sequential_on(const ember_device* d, const std::vector<ember_layer_desc>& layers) {
  ember_module* m = nullptr;
  EXPECT_EQ(ember_module_sequential(d, layers.data(), layers.size(), &m), EMBER_OK) << ember_last_error();
  return Module(m);
}

// Frame-dependent inputs in [-1, 1].
std::vector<float> frame_input(std::size_t n, int frame) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(0.37f * static_cast<float>(frame) + 0.11f * static_cast<float>(i));
  return v;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-4f + 1e-4f * std::fabs(want[i])) << what << " [" << i << "]";
}

// Builds the plan of module over `shape`, then for `frames` frames alternates two input and two output buffers
// of the host's, records the plan into the host's frame and compares with the eager forward of the same input.
void replay_against_eager(VulkanHost& host, ember_device* d, ember_module* m, const std::vector<int64_t>& shape,
                          int frames) {
  ember_vulkan_plan* p = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_create(m, d, EMBER_DTYPE_F32, shape.data(), shape.size(), &p));
  Plan plan(p);
  size_t n_in = 0, n_out = 0;
  EMBER_ASSERT_OK(ember_vulkan_plan_counts(p, &n_in, &n_out));
  ASSERT_EQ(n_in, 1u);
  ASSERT_EQ(n_out, 1u);
  ember_vulkan_plan_tensor_info in_info{}, out_info{};
  in_info.struct_size = out_info.struct_size = sizeof in_info;
  EMBER_ASSERT_OK(ember_vulkan_plan_input_info(p, 0, &in_info));
  EMBER_ASSERT_OK(ember_vulkan_plan_output_info(p, 0, &out_info));
  EXPECT_EQ(in_info.dtype, EMBER_DTYPE_F32);
  ASSERT_EQ(in_info.rank, shape.size());
  std::size_t numel = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    EXPECT_EQ(in_info.shape[i], shape[i]);
    numel *= static_cast<std::size_t>(shape[i]);
  }
  EXPECT_EQ(in_info.bytes, numel * sizeof(float));

  const VkDeviceSize offset = host.storage_alignment();  // bound at a non-zero offset
  HostBuffer ins[2] = {host.make_buffer(offset + in_info.bytes), host.make_buffer(offset + in_info.bytes)};
  HostBuffer outs[2] = {host.make_buffer(offset + out_info.bytes), host.make_buffer(offset + out_info.bytes)};
  for (int f = 0; f < frames; ++f) {
    const int slot = f % 2;
    const auto x = frame_input(numel, f);
    std::memcpy(static_cast<char*>(ins[slot].mapped) + offset, x.data(), in_info.bytes);
    EMBER_ASSERT_OK(ember_vulkan_plan_bind_input(p, 0, reinterpret_cast<uint64_t>(ins[slot].buffer), offset));
    EMBER_ASSERT_OK(ember_vulkan_plan_bind_output(p, 0, reinterpret_cast<uint64_t>(outs[slot].buffer), offset));
    host.run_frame([&](VkCommandBuffer cb) { EMBER_EXPECT_OK(ember_vulkan_plan_record(p, cb)); });
    const auto* got = reinterpret_cast<const float*>(static_cast<const char*>(outs[slot].mapped) + offset);
    Tensor tx = f32_on(d, x, shape);
    Tensor want = forward(m, tx.get());
    expect_near(std::vector<float>(got, got + out_info.bytes / sizeof(float)), floats(want.get()), "frame");
  }
  for (auto& b : ins) host.free_buffer(b);
  for (auto& b : outs) host.free_buffer(b);
}

TEST(VulkanPlan, MlpRecordedIntoHostFramesMatchesEager) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host);
  Module m = sequential_on(dev.get(), {linear(64, 32), layer(EMBER_LAYER_RELU), linear(32, 10)});
  replay_against_eager(host, dev.get(), m.get(), {8, 64}, 4);
}

TEST(VulkanPlan, SmallCnnRecordedIntoHostFramesMatchesEager) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host);
  ember_layer_desc conv = layer(EMBER_LAYER_CONV2D);
  conv.in_features = 1;
  conv.out_features = 4;
  conv.kernel_size[0] = conv.kernel_size[1] = 3;
  conv.padding[0] = conv.padding[1] = 1;
  ember_layer_desc flat = layer(EMBER_LAYER_FLATTEN);
  Module m = sequential_on(dev.get(), {conv, layer(EMBER_LAYER_RELU), layer(EMBER_LAYER_MAX_POOL2D), flat,
                                       linear(4 * 4 * 4, 10)});
  replay_against_eager(host, dev.get(), m.get(), {2, 1, 8, 8}, 3);
}

// A caller-written forward (two inputs, two outputs), captured, then submitted on Ember's own queue.
TEST(VulkanPlan, CapturedOpsSubmittedOnEmbersQueue) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host);
  ember_device* d = dev.get();
  Tensor w = f32_on(d, {1, 2, 3, 4, 5, 6}, {3, 2});
  ember_vulkan_plan* p = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_capture_begin(d, &p));
  Plan plan(p);
  const int64_t xs[] = {2, 3}, bs[] = {2};
  ember_tensor *x = nullptr, *b = nullptr, *xw = nullptr, *y = nullptr, *e = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_add_input(p, EMBER_DTYPE_F32, xs, 2, &x));
  EMBER_ASSERT_OK(ember_vulkan_plan_add_input(p, EMBER_DTYPE_F32, bs, 1, &b));
  Tensor tx(x), tb(b);
  EMBER_ASSERT_OK(ember_tensor_matmul(x, w.get(), &xw));
  Tensor txw(xw);
  EMBER_ASSERT_OK(ember_tensor_add(xw, b, &y));
  Tensor ty(y);
  EMBER_ASSERT_OK(ember_tensor_unary(y, EMBER_UNARY_EXP, &e));
  Tensor te(e);
  EMBER_EXPECT_ERR(ember_vulkan_plan_counts(p, nullptr, nullptr), EMBER_ERR_INVALID_ARGUMENT, "still capturing");
  const ember_tensor* outs[] = {y, e};
  EMBER_ASSERT_OK(ember_vulkan_plan_capture_end(p, outs, 2));

  HostBuffer in_x = host.make_buffer(6 * sizeof(float)), in_b = host.make_buffer(2 * sizeof(float));
  HostBuffer out_y = host.make_buffer(4 * sizeof(float)), out_e = host.make_buffer(4 * sizeof(float));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_input(p, 0, reinterpret_cast<uint64_t>(in_x.buffer), 0));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_input(p, 1, reinterpret_cast<uint64_t>(in_b.buffer), 0));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_output(p, 0, reinterpret_cast<uint64_t>(out_y.buffer), 0));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_output(p, 1, reinterpret_cast<uint64_t>(out_e.buffer), 0));
  for (int f = 0; f < 3; ++f) {
    const auto xv = frame_input(6, f);
    const std::vector<float> bv = {0.5f * static_cast<float>(f), -1.0f};
    std::memcpy(in_x.mapped, xv.data(), 6 * sizeof(float));
    std::memcpy(in_b.mapped, bv.data(), 2 * sizeof(float));
    uint64_t value = 0;
    EMBER_ASSERT_OK(ember_vulkan_plan_submit(p, &value));
    EMBER_ASSERT_OK(ember_vulkan_host_wait(d, value));
    std::vector<float> want_y(4), want_e(4);
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c) {
        float s = bv[c];
        for (int k = 0; k < 3; ++k) s += xv[r * 3 + k] * (1.0f + static_cast<float>(k * 2 + c));
        want_y[r * 2 + c] = s;
        want_e[r * 2 + c] = std::exp(s);
      }
    const auto* gy = static_cast<const float*>(out_y.mapped);
    const auto* ge = static_cast<const float*>(out_e.mapped);
    expect_near({gy, gy + 4}, want_y, "y");
    expect_near({ge, ge + 4}, want_e, "exp(y)");
  }
  EMBER_EXPECT_OK(ember_vulkan_synchronize(d));
  for (HostBuffer* hb : {&in_x, &in_b, &out_y, &out_e}) host.free_buffer(*hb);
}

// An op that needs a CPU round trip fails inside the capture, naming itself, and the plan is not built; the device
// computes eagerly again afterwards.
TEST(VulkanPlan, OpNeedingACpuRoundTripIsRejected) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host);
  ember_device* d = dev.get();
  ember_vulkan_plan* p = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_capture_begin(d, &p));
  Plan plan(p);
  const int64_t s[] = {4};
  ember_tensor *x = nullptr, *y = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_add_input(p, EMBER_DTYPE_F32, s, 1, &x));
  Tensor tx(x);
  EMBER_ASSERT_OK(ember_tensor_add(x, x, &y));
  Tensor ty(y);
  float back[4];
  EMBER_EXPECT_ERR(ember_tensor_copy_to(y, EMBER_DTYPE_F32, back, sizeof back, nullptr), EMBER_ERR_UNSUPPORTED,
                   "ember_tensor_copy_to: cannot be captured into a Vulkan plan: it needs a CPU round trip");
  ember_vulkan_plan* other = nullptr;
  EMBER_EXPECT_ERR(ember_vulkan_plan_capture_begin(d, &other), EMBER_ERR_INVALID_ARGUMENT, "already capturing");
  const ember_tensor* outs[] = {y};
  EMBER_EXPECT_ERR(ember_vulkan_plan_capture_end(p, outs, 1), EMBER_ERR_UNSUPPORTED, "the plan was not built");
  EMBER_EXPECT_ERR(ember_vulkan_plan_record(p, reinterpret_cast<void*>(0x1)), EMBER_ERR_INVALID_ARGUMENT,
                   "not built");
  // Eager again.
  Tensor a = f32_on(d, {1, 2, 3}, {3});
  ember_tensor* b = nullptr;
  EMBER_ASSERT_OK(ember_tensor_add(a.get(), a.get(), &b));
  Tensor tb(b);
  EXPECT_EQ(floats(b), (std::vector<float>{2, 4, 6}));
}

// VkFFT records its own commands (its descriptor sets and dispatches): not replayable from a plan, so the FFT
// op fails inside a capture, naming itself.
TEST(VulkanPlan, FftInsideACaptureIsRejected) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host);
  ember_vulkan_plan* p = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_capture_begin(dev.get(), &p));
  Plan plan(p);
  const int64_t s[] = {2, 8};
  ember_tensor *x = nullptr, *y = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_add_input(p, EMBER_DTYPE_F32, s, 2, &x));
  Tensor tx(x);
  EMBER_EXPECT_ERR(ember_tensor_fft(x, EMBER_FFT_RFFT, -1, -1, EMBER_FFT_NORM_BACKWARD, &y), EMBER_ERR_UNSUPPORTED,
                   "ember_tensor_fft: cannot be captured into a Vulkan plan: it needs recording commands of its own");
  EXPECT_EQ(y, nullptr);
  const ember_tensor* outs[] = {x};
  EMBER_EXPECT_ERR(ember_vulkan_plan_capture_end(p, outs, 1), EMBER_ERR_UNSUPPORTED, "the plan was not built");
}

// Embedding's index check is device-side inside a plan (issue 17 part 3): the plan builds, replays what the eager
// forward computes, and a replay with bad indices is reported by ember_vulkan_plan_poll_errors with the op's
// message once Ember knows the replay completed; its indices were clamped (the outputs are those of the clamped
// indices: nothing read outside the table), and a later good replay polls clean. Replays recorded by the host
// outside record mode, in host-record mode (known complete by the safe frame) and submitted by Ember (timeline).
TEST(VulkanPlan, EmbeddingPlanMatchesEagerAndPollsItsIndexCheck) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host);
  ember_layer_desc emb = layer(EMBER_LAYER_EMBEDDING);
  emb.in_features = 10;
  emb.out_features = 3;
  Module m = sequential_on(dev.get(), {emb, layer(EMBER_LAYER_TANH)});
  const int64_t s[] = {4};
  ember_vulkan_plan* p = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_create(m.get(), dev.get(), EMBER_DTYPE_I64, s, 1, &p));
  Plan plan(p);
  EMBER_EXPECT_OK(ember_vulkan_plan_poll_errors(p));  // no replay yet
  HostBuffer in = host.make_buffer(4 * sizeof(int64_t)), out = host.make_buffer(12 * sizeof(float));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_input(p, 0, reinterpret_cast<uint64_t>(in.buffer), 0));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_output(p, 0, reinterpret_cast<uint64_t>(out.buffer), 0));
  const auto eager = [&](const std::vector<int64_t>& idx) {
    ember_tensor* ti = nullptr;
    EXPECT_EQ(ember_tensor_from_data(dev.get(), EMBER_DTYPE_I64, idx.data(), idx.size() * sizeof(int64_t), s, 1, &ti),
              EMBER_OK);
    Tensor t(ti);
    return floats(forward(m.get(), ti).get());
  };
  const auto got = [&] {
    const auto* f = static_cast<const float*>(out.mapped);
    return std::vector<float>(f, f + 12);
  };
  const std::vector<int64_t> good = {3, 0, 9, 3}, bad = {3, 12, -1, 7}, clamped = {3, 9, 0, 7};
  const char* bad_message = "index 12 out of range for dim 0 of size 10";

  // Recorded by the host outside record mode (the host's fence waited in run_frame).
  std::memcpy(in.mapped, good.data(), 32);
  host.run_frame([&](VkCommandBuffer cb) { EMBER_EXPECT_OK(ember_vulkan_plan_record(p, cb)); });
  expect_near(got(), eager(good), "embedding plan, good frame");
  EMBER_EXPECT_OK(ember_vulkan_plan_poll_errors(p));
  std::memcpy(in.mapped, bad.data(), 32);
  host.run_frame([&](VkCommandBuffer cb) { EMBER_EXPECT_OK(ember_vulkan_plan_record(p, cb)); });
  EMBER_EXPECT_ERR(ember_vulkan_plan_poll_errors(p), EMBER_ERR_INDEX, bad_message);
  EMBER_EXPECT_ERR(ember_vulkan_plan_poll_errors(p), EMBER_ERR_INDEX, "the plan's last replay");  // still its verdict
  expect_near(got(), eager(clamped), "embedding plan, bad frame (clamped indices)");
  EMBER_EXPECT_OK(ember_vulkan_poll_errors(dev.get()));  // the device's own checks do not include the plan's
  std::memcpy(in.mapped, good.data(), 32);
  host.run_frame([&](VkCommandBuffer cb) { EMBER_EXPECT_OK(ember_vulkan_plan_record(p, cb)); });
  EMBER_EXPECT_OK(ember_vulkan_plan_poll_errors(p));  // the next replay cleared the words
  expect_near(got(), eager(good), "embedding plan, good frame after a bad one");

  // Host-record mode: the bad frame's verdict is read only once the host reported the frame safe.
  uint64_t value = 0;
  EMBER_ASSERT_OK(ember_vulkan_submit(dev.get(), &value));  // the eager forwards above
  EMBER_ASSERT_OK(ember_vulkan_host_wait(dev.get(), value));
  std::memcpy(in.mapped, bad.data(), 32);
  VkCommandBuffer cb = host.begin_frame();
  EMBER_ASSERT_OK(ember_vulkan_record_begin(dev.get(), cb, host.queue_family(), 1));
  EMBER_EXPECT_OK(ember_vulkan_plan_record(p, cb));
  EMBER_ASSERT_OK(ember_vulkan_record_end(dev.get()));
  EMBER_EXPECT_OK(ember_vulkan_plan_poll_errors(p));  // frame 1 may still run: nothing read yet
  host.finish_frame(host.submit_frame(cb), cb);
  EMBER_EXPECT_OK(ember_vulkan_plan_poll_errors(p));  // not reported safe yet
  EMBER_ASSERT_OK(ember_vulkan_safe_frame(dev.get(), 1));
  EMBER_EXPECT_ERR(ember_vulkan_plan_poll_errors(p), EMBER_ERR_INDEX, "recorded in frame 1");
  EMBER_EXPECT_ERR(ember_vulkan_plan_poll_errors(p), EMBER_ERR_INDEX, bad_message);

  // Submitted by Ember: known complete when the timeline reached the submit's value.
  std::memcpy(in.mapped, good.data(), 32);
  EMBER_ASSERT_OK(ember_vulkan_plan_submit(p, &value));
  EMBER_ASSERT_OK(ember_vulkan_host_wait(dev.get(), value));
  EMBER_EXPECT_OK(ember_vulkan_plan_poll_errors(p));
  expect_near(got(), eager(good), "embedding plan, submitted");
  std::memcpy(in.mapped, bad.data(), 32);
  EMBER_ASSERT_OK(ember_vulkan_plan_submit(p, &value));
  EMBER_ASSERT_OK(ember_vulkan_host_wait(dev.get(), value));
  EMBER_EXPECT_ERR(ember_vulkan_plan_poll_errors(p), EMBER_ERR_INDEX, "submitted as timeline value");
  EMBER_EXPECT_ERR(ember_vulkan_plan_poll_errors(nullptr), EMBER_ERR_NULL_HANDLE, "plan is NULL");
  host.free_buffer(in);
  host.free_buffer(out);
}

// Integer division's zero-divisor check inside a captured plan: a replay dividing by zero is reported by the poll
// with the op's message (CPU semantics otherwise), and the next good replay polls clean.
TEST(VulkanPlan, CapturedIntegerDivisionPollsItsZeroCheck) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host);
  ember_vulkan_plan* p = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_capture_begin(dev.get(), &p));
  Plan plan(p);
  const int64_t s[] = {4};
  ember_tensor *x = nullptr, *y = nullptr, *q = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_add_input(p, EMBER_DTYPE_I64, s, 1, &x));
  Tensor tx(x);
  EMBER_ASSERT_OK(ember_vulkan_plan_add_input(p, EMBER_DTYPE_I64, s, 1, &y));
  Tensor ty(y);
  EMBER_ASSERT_OK(ember_tensor_div(x, y, &q));
  Tensor tq(q);
  const ember_tensor* outs[] = {q};
  EMBER_ASSERT_OK(ember_vulkan_plan_capture_end(p, outs, 1));
  ember_vulkan_plan_tensor_info in_info{}, out_info{};
  in_info.struct_size = sizeof in_info;
  out_info.struct_size = sizeof out_info;
  EMBER_ASSERT_OK(ember_vulkan_plan_input_info(p, 0, &in_info));
  EMBER_ASSERT_OK(ember_vulkan_plan_output_info(p, 0, &out_info));
  ASSERT_EQ(in_info.bytes, out_info.bytes);
  const bool wide = in_info.bytes == 4 * sizeof(int64_t);  // int32 words on a device without shaderInt64
  HostBuffer bx = host.make_buffer(in_info.bytes), by = host.make_buffer(in_info.bytes),
             bq = host.make_buffer(out_info.bytes);
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_input(p, 0, reinterpret_cast<uint64_t>(bx.buffer), 0));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_input(p, 1, reinterpret_cast<uint64_t>(by.buffer), 0));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_output(p, 0, reinterpret_cast<uint64_t>(bq.buffer), 0));
  const auto put = [&](HostBuffer& b, const std::vector<int64_t>& v) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (wide) static_cast<int64_t*>(b.mapped)[i] = v[i];
      else static_cast<int32_t*>(b.mapped)[i] = static_cast<int32_t>(v[i]);
    }
  };
  const auto got = [&] {
    std::vector<int64_t> v(4);
    for (std::size_t i = 0; i < 4; ++i)
      v[i] = wide ? static_cast<const int64_t*>(bq.mapped)[i] : static_cast<const int32_t*>(bq.mapped)[i];
    return v;
  };
  const auto cpu_div = [&](const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    ember_tensor *ta = nullptr, *tb = nullptr, *tr = nullptr;
    EXPECT_EQ(ember_tensor_from_data(nullptr, EMBER_DTYPE_I64, a.data(), 32, s, 1, &ta), EMBER_OK);
    EXPECT_EQ(ember_tensor_from_data(nullptr, EMBER_DTYPE_I64, b.data(), 32, s, 1, &tb), EMBER_OK);
    Tensor ga(ta), gb(tb);
    EXPECT_EQ(ember_tensor_div(ta, tb, &tr), EMBER_OK) << ember_last_error();
    Tensor gr(tr);
    return ints(tr);
  };
  const std::vector<int64_t> a = {7, 8, -9, -10}, good = {2, -3, 4, 5}, zero = {2, 0, 4, 5};
  put(bx, a);
  put(by, good);
  host.run_frame([&](VkCommandBuffer cb) { EMBER_EXPECT_OK(ember_vulkan_plan_record(p, cb)); });
  EMBER_EXPECT_OK(ember_vulkan_plan_poll_errors(p));
  EXPECT_EQ(got(), cpu_div(a, good));
  put(by, zero);
  host.run_frame([&](VkCommandBuffer cb) { EMBER_EXPECT_OK(ember_vulkan_plan_record(p, cb)); });
  EMBER_EXPECT_ERR(ember_vulkan_plan_poll_errors(p), EMBER_ERR_INVALID_ARGUMENT, "div: integer division by zero");
  put(by, good);
  host.run_frame([&](VkCommandBuffer cb) { EMBER_EXPECT_OK(ember_vulkan_plan_record(p, cb)); });
  EMBER_EXPECT_OK(ember_vulkan_plan_poll_errors(p));
  EXPECT_EQ(got(), cpu_div(a, good));
  host.free_buffer(bx);
  host.free_buffer(by);
  host.free_buffer(bq);
}

// Building waits for the GPU: in host-record mode every build and warm-up is refused naming the mode, and nothing is
// recorded into the host's frame (the frame then holds only Ember's record_begin / _end barriers and runs clean).
TEST(VulkanPlan, BuildingInHostRecordModeIsRefused) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host);
  Module m = sequential_on(dev.get(), {linear(8, 4)});
  uint64_t value = 0;
  EMBER_ASSERT_OK(ember_vulkan_submit(dev.get(), &value));
  const int64_t s[] = {2, 8};
  VkCommandBuffer cb = host.begin_frame();
  EMBER_ASSERT_OK(ember_vulkan_record_begin(dev.get(), cb, host.queue_family(), 1));
  ember_vulkan_plan* p = nullptr;
  EMBER_EXPECT_ERR(ember_vulkan_plan_create(m.get(), dev.get(), EMBER_DTYPE_F32, s, 2, &p), EMBER_ERR_UNSUPPORTED,
                   "cannot build a plan or warm up in host-record mode (frame 1");
  EXPECT_EQ(p, nullptr);
  EMBER_EXPECT_ERR(ember_vulkan_plan_capture_begin(dev.get(), &p), EMBER_ERR_UNSUPPORTED, "host-record mode");
  EXPECT_EQ(p, nullptr);
  EMBER_EXPECT_ERR(ember_vulkan_warmup(m.get(), dev.get(), EMBER_DTYPE_F32, s, 2), EMBER_ERR_UNSUPPORTED,
                   "host-record mode");
  EMBER_ASSERT_OK(ember_vulkan_record_end(dev.get()));
  host.finish_frame(host.submit_frame(cb), cb);
  EMBER_ASSERT_OK(ember_vulkan_safe_frame(dev.get(), 1));
  // Outside record mode the same build works.
  EMBER_ASSERT_OK(ember_vulkan_plan_create(m.get(), dev.get(), EMBER_DTYPE_F32, s, 2, &p));
  ember_vulkan_plan_free(p);
}

TEST(VulkanPlan, WrongShapesAndMisuseAreErrors) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host);
  ember_device* d = dev.get();
  Module m = sequential_on(d, {linear(64, 10)});
  ember_vulkan_plan* p = reinterpret_cast<ember_vulkan_plan*>(0x1);
  const int64_t wrong[] = {4, 10}, right[] = {4, 64};
  EMBER_EXPECT_ERR(ember_vulkan_plan_create(m.get(), d, EMBER_DTYPE_F32, wrong, 2, &p), EMBER_ERR_SHAPE, "layer 0");
  EXPECT_EQ(p, nullptr);
  EMBER_EXPECT_ERR(ember_vulkan_plan_create(m.get(), nullptr, EMBER_DTYPE_F32, right, 2, &p),
                   EMBER_ERR_INVALID_ARGUMENT, "a Vulkan device is needed");
  // A failed build leaves the device eager (no capture left behind): a new plan builds.
  EMBER_ASSERT_OK(ember_vulkan_plan_create(m.get(), d, EMBER_DTYPE_F32, right, 2, &p));
  Plan plan(p);
  EMBER_EXPECT_ERR(ember_vulkan_plan_bind_input(p, 1, 0x1234, 0), EMBER_ERR_INDEX, "input 1 out of range");
  EMBER_EXPECT_ERR(ember_vulkan_plan_bind_output(p, 0, 0, 0), EMBER_ERR_INVALID_ARGUMENT, "VK_NULL_HANDLE");
  ember_vulkan_plan_tensor_info info{};
  info.struct_size = sizeof info;
  EMBER_EXPECT_ERR(ember_vulkan_plan_output_info(p, 3, &info), EMBER_ERR_INDEX, "output 3 out of range");
  host.run_frame([&](VkCommandBuffer cb) {
    EMBER_EXPECT_ERR(ember_vulkan_plan_record(p, cb), EMBER_ERR_INVALID_ARGUMENT, "input 0 is not bound");
  });
  ember_tensor* t = nullptr;
  EMBER_EXPECT_ERR(ember_vulkan_plan_add_input(p, EMBER_DTYPE_F32, right, 2, &t), EMBER_ERR_INVALID_ARGUMENT,
                   "not capturing");
  EMBER_EXPECT_ERR(ember_vulkan_plan_record(nullptr, nullptr), EMBER_ERR_NULL_HANDLE, "ember_vulkan_plan");
  EXPECT_EQ(ember_vulkan_plan_free(nullptr), EMBER_OK);
}

// The plan keeps its device and the module's parameters: freeing them first leaves a plan that still records.
TEST(VulkanPlan, FreeingOrderIsFree) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  ember_vulkan_plan* p = nullptr;
  std::vector<float> want;
  const int64_t s[] = {2, 4};
  const auto x = frame_input(8, 7);
  {
    Device dev = adopt(host);
    Module m = sequential_on(dev.get(), {linear(4, 3), layer(EMBER_LAYER_TANH)});
    EMBER_ASSERT_OK(ember_vulkan_plan_create(m.get(), dev.get(), EMBER_DTYPE_F32, s, 2, &p));
    Tensor tx = f32_on(dev.get(), x, {2, 4});
    want = floats(forward(m.get(), tx.get()).get());
  }  // module and device handles freed
  Plan plan(p);
  HostBuffer in = host.make_buffer(8 * sizeof(float)), out = host.make_buffer(6 * sizeof(float));
  std::memcpy(in.mapped, x.data(), 8 * sizeof(float));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_input(p, 0, reinterpret_cast<uint64_t>(in.buffer), 0));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_output(p, 0, reinterpret_cast<uint64_t>(out.buffer), 0));
  host.run_frame([&](VkCommandBuffer cb) { EMBER_EXPECT_OK(ember_vulkan_plan_record(p, cb)); });
  const auto* got = static_cast<const float*>(out.mapped);
  expect_near({got, got + 6}, want, "after freeing module and device");
  plan.reset();  // the last reference: Ember's objects on the host's device go now
  host.free_buffer(in);
  host.free_buffer(out);
}

// Counts the compute pipelines Ember creates on an adopted device, and the cache it creates them into: the desc's
// get_instance_proc_addr hands Ember a vkGetDeviceProcAddr whose vkCreateComputePipelines is this wrapper.
struct PipelineSpy {
  static inline int created = 0;
  static inline VkPipelineCache last_cache = VK_NULL_HANDLE;
  static inline PFN_vkCreateComputePipelines real = nullptr;
  static VKAPI_ATTR VkResult VKAPI_CALL create(VkDevice d, VkPipelineCache cache, uint32_t n,
                                               const VkComputePipelineCreateInfo* infos,
                                               const VkAllocationCallbacks* alloc, VkPipeline* out) {
    created += static_cast<int>(n);
    last_cache = cache;
    return real(d, cache, n, infos, alloc, out);
  }
  static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL device_proc(VkDevice d, const char* name) {
    if (std::strcmp(name, "vkCreateComputePipelines") == 0) {
      real = reinterpret_cast<PFN_vkCreateComputePipelines>(vkGetDeviceProcAddr(d, name));
      return reinterpret_cast<PFN_vkVoidFunction>(&create);
    }
    return vkGetDeviceProcAddr(d, name);
  }
  static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL instance_proc(VkInstance i, const char* name) {
    if (std::strcmp(name, "vkGetDeviceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&device_proc);
    return vkGetInstanceProcAddr(i, name);
  }
};

// Adopt option pipeline_cache: Ember creates its pipelines into the host's VkPipelineCache and never destroys it.
// Warm-up creates every pipeline a forward needs: the eager forward and a plan over the same shape afterwards
// create none.
TEST(VulkanPlan, HostPipelineCacheAndWarmup) {
  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  VkPipelineCache cache = VK_NULL_HANDLE;
  VK_ASSERT(vkCreatePipelineCache(host.device(), &ci, nullptr, &cache));
  {
    ember_vulkan_device_desc desc = host.desc();
    desc.get_instance_proc_addr = reinterpret_cast<void*>(&PipelineSpy::instance_proc);
    ember_vulkan_adopt_options o{};
    EMBER_ASSERT_OK(ember_vulkan_adopt_options_init(&o));
    o.pipeline_cache = reinterpret_cast<uint64_t>(cache);
    ember_device* d = nullptr;
    EMBER_ASSERT_OK(ember_vulkan_device_adopt_ex(&desc, &o, &d));
    Device dev(d);
    Module m = sequential_on(d, {linear(16, 8), layer(EMBER_LAYER_GELU), linear(8, 2), layer(EMBER_LAYER_SOFTMAX)});
    const int64_t s[] = {3, 16};
    PipelineSpy::created = 0;
    EMBER_ASSERT_OK(ember_vulkan_warmup(m.get(), d, EMBER_DTYPE_F32, s, 2));
    const int warmed = PipelineSpy::created;
    EXPECT_GT(warmed, 0);
    EXPECT_EQ(PipelineSpy::last_cache, cache) << "Ember did not create its pipelines into the host's cache";
    size_t ember_view = 0, host_size = 0;
    EXPECT_EQ(ember_vulkan_pipeline_cache_data(d, nullptr, 0, &ember_view), EMBER_OK);  // a size query
    VK_ASSERT(vkGetPipelineCacheData(host.device(), cache, &host_size, nullptr));
    EXPECT_EQ(ember_view, host_size) << "Ember's cache is not the host's";

    Tensor x = f32_on(d, frame_input(48, 1), {3, 16});
    Tensor y = forward(m.get(), x.get());
    EXPECT_EQ(shape_of(y.get()), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(PipelineSpy::created, warmed) << "the eager forward created pipelines the warm-up had not";
    ember_vulkan_plan* p = nullptr;
    EMBER_ASSERT_OK(ember_vulkan_plan_create(m.get(), d, EMBER_DTYPE_F32, s, 2, &p));
    Plan plan(p);
    EXPECT_EQ(PipelineSpy::created, warmed) << "the plan created pipelines the warm-up had not";
  }  // Ember's device goes; the cache is still the host's (destroying it twice would be a validation error)
  vkDestroyPipelineCache(host.device(), cache, nullptr);
}

}  // namespace
}  // namespace ember::capi_test
