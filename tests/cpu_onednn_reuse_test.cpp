// What the oneDNN forward keeps between calls (backends/cpu/onednn_conv.cpp), compared with the im2col + GEMM
// path: the plan's memory objects and argument map, pointed at each call's buffers (consecutive calls of one
// problem with other inputs, biases and outputs must each see their own buffers, not the first call's), and the
// blocked output a convolution keeps for the next one (used only while it still holds that tensor's values).
// Skipped in a build without oneDNN.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/parallel.hpp"

namespace ember {
namespace {

using T = cpu::CpuTensor<float>;

T random(Shape s, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  T t(std::move(s));
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = u(gen);
  return t;
}

void expect_close(const T& got, const T& want, const char* what, int call) {
  ASSERT_EQ(got.shape, want.shape) << what << " call " << call;
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.data()[i], want.data()[i], 1e-4 * (1 + std::abs(want.data()[i])))
        << what << " call " << call << " element " << i;
}

Conv2dOptions same_padding() {
  Conv2dOptions o;
  o.padding = {1, 1};
  return o;
}

Pool2dOptions pool_2x2() {
  Pool2dOptions p;
  p.kernel = {2, 2};
  p.stride = {2, 2};
  return p;
}

// Three calls of each problem (one thread: one plan) with distinct inputs, weights and biases; all results are
// taken first and compared afterwards, so a plan still pointing at an earlier call's buffers shows as a mismatch.
TEST(OneDnnPlanReuse, EachCallReadsAndWritesItsOwnBuffers) {
  if (!cpu::onednn::enabled()) GTEST_SKIP() << "Ember was built without oneDNN (or EMBER_ONEDNN=0)";
  const int threads_before = cpu::num_threads();
  cpu::set_num_threads(1);
  // 1 -> 16 channels reads the plain input itself; 16 -> 32 reorders it into the blocked layout first.
  for (const auto& [cin, cout] : {std::pair<int64_t, int64_t>{1, 16}, {16, 32}}) {
    std::vector<T> xs, ws, bs, conv, pooled;
    for (uint32_t call = 0; call < 3; ++call) {
      xs.push_back(random(Shape{2, cin, 8, 8}, 10 * call + 1));
      ws.push_back(random(Shape{cout, cin, 3, 3}, 10 * call + 2));
      bs.push_back(random(Shape{cout}, 10 * call + 3));
    }
    for (std::size_t i = 0; i < 3; ++i) {
      conv.push_back(cpu::conv2d_relu(xs[i], ws[i], &bs[i], same_padding()));
      pooled.push_back(cpu::conv2d_relu_max_pool(xs[i], ws[i], &bs[i], same_padding(), pool_2x2()));
    }
    cpu::onednn::set_enabled(false);
    for (std::size_t i = 0; i < 3; ++i) {
      const T want = cpu::conv2d_relu(xs[i], ws[i], &bs[i], same_padding());
      expect_close(conv[i], want, "conv2d_relu", static_cast<int>(i));
      expect_close(pooled[i], cpu::max_pool2d(want, pool_2x2()).output, "conv2d_relu_max_pool", static_cast<int>(i));
    }
    cpu::onednn::set_enabled(true);
  }
  cpu::set_num_threads(threads_before);
}

// --- A convolution reading the tensor the previous one returned takes that one's kept blocked output.

T conv_reference(const T& x, const T& w, const T& b) {
  cpu::onednn::set_enabled(false);
  T y = cpu::conv2d_relu(x, w, &b, same_padding());
  cpu::onednn::set_enabled(true);
  return y;
}

class OneDnnBlockedChain : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu::onednn::enabled()) GTEST_SKIP() << "Ember was built without oneDNN (or EMBER_ONEDNN=0)";
    cpu::set_num_threads(1);  // one slice: the kept output is per thread
  }
  void TearDown() override { cpu::set_num_threads(threads_before_); }
  int threads_before_ = cpu::num_threads();
  // 16 -> 16 -> 32 channels: both read and write oneDNN's blocked layout on any x86-64 it has kernels for.
  const T x1 = random(Shape{2, 16, 8, 8}, 41), x2 = random(Shape{2, 16, 8, 8}, 42);
  const T w1 = random(Shape{16, 16, 3, 3}, 43), b1 = random(Shape{16}, 44);
  const T w2 = random(Shape{32, 16, 3, 3}, 45), b2 = random(Shape{32}, 46);
};

TEST_F(OneDnnBlockedChain, TheNextConvolutionReadsTheKeptBlockedOutput) {
  const T y = cpu::conv2d_relu(x1, w1, &b1, same_padding());
  const int64_t before = cpu::onednn::forward_blocked_inputs_reused();
  const T z = cpu::conv2d_relu(y, w2, &b2, same_padding());
  EXPECT_EQ(cpu::onednn::forward_blocked_inputs_reused(), before + 1);
  expect_close(z, conv_reference(y, w2, b2), "conv -> conv", 0);
  // The fused pooling reads it the same way.
  const T y2 = cpu::conv2d_relu(x2, w1, &b1, same_padding());
  const T pooled = cpu::conv2d_relu_max_pool(y2, w2, &b2, same_padding(), pool_2x2());
  EXPECT_EQ(cpu::onednn::forward_blocked_inputs_reused(), before + 2);
  expect_close(pooled, cpu::max_pool2d(conv_reference(y2, w2, b2), pool_2x2()).output, "conv -> conv + pool", 0);
}

// The producer's plan ran again (its scratch now holds another input's convolution) without keeping a new output:
// the fused pooling of the same convolution problem shares the plan. The older tensor is reordered as usual.
TEST_F(OneDnnBlockedChain, NotAfterTheProducerWroteItsScratchAgain) {
  const T ya = cpu::conv2d_relu(x1, w1, &b1, same_padding());
  const T pooled = cpu::conv2d_relu_max_pool(x2, w1, &b1, same_padding(), pool_2x2());
  const int64_t before = cpu::onednn::forward_blocked_inputs_reused();
  const T z = cpu::conv2d_relu(ya, w2, &b2, same_padding());
  EXPECT_EQ(cpu::onednn::forward_blocked_inputs_reused(), before);
  expect_close(z, conv_reference(ya, w2, b2), "older output", 0);
  expect_close(pooled, cpu::max_pool2d(conv_reference(x2, w1, b1), pool_2x2()).output, "the pooling between", 0);
}

// The same problem twice in a row (conv(conv(x)) with equal shapes): one plan, whose scratch is both the kept
// source and the new output, so the source is reordered from the tensor instead.
TEST_F(OneDnnBlockedChain, NotFromTheConsumersOwnScratch) {
  const T y = cpu::conv2d_relu(x1, w1, &b1, same_padding());
  const int64_t before = cpu::onednn::forward_blocked_inputs_reused();
  const T z = cpu::conv2d_relu(y, w1, &b1, same_padding());
  EXPECT_EQ(cpu::onednn::forward_blocked_inputs_reused(), before);
  expect_close(z, conv_reference(y, w1, b1), "same plan twice", 0);
}

// The output died and the allocator gave its block to a new tensor with other values: never the kept copy.
TEST_F(OneDnnBlockedChain, NotForANewBufferAtADeadOnesAddress) {
  const float* dead_at = nullptr;
  {
    const T y = cpu::conv2d_relu(x1, w1, &b1, same_padding());
    dead_at = y.data();
  }
  T fresh(Shape{2, 16, 8, 8});
  const T values = random(Shape{2, 16, 8, 8}, 47);
  std::copy(values.data(), values.data() + values.numel(), fresh.data());
  if (fresh.data() != dead_at) GTEST_SKIP() << "the allocator did not reuse the dead block's address";
  const int64_t before = cpu::onednn::forward_blocked_inputs_reused();
  const T z = cpu::conv2d_relu(fresh, w2, &b2, same_padding());
  EXPECT_EQ(cpu::onednn::forward_blocked_inputs_reused(), before);
  expect_close(z, conv_reference(fresh, w2, b2), "new buffer", 0);
}

}  // namespace
}  // namespace ember
