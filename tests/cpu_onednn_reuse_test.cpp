// The oneDNN forward's plan keeps its memory objects and argument map between calls and points them at each call's
// buffers (backends/cpu/onednn_conv.cpp): consecutive calls of one problem with other inputs, biases and outputs
// must each see their own buffers, not the first call's. Compared with the im2col + GEMM path. Skipped in a build
// without oneDNN.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ember
