// The first-layer convolution backward (fewer than 8 input channels per group): oneDNN's backward-weights kernel for
// grad weight / bias beside im2col + col2im for grad input (backends/cpu/conv.cpp), against the all-im2col path,
// on 1 and 2 threads (the batch split sums partial weight gradients). Skipped in a build without oneDNN.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

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

void expect_near(const T& a, const T& b, const char* what) {
  ASSERT_EQ(a.shape, b.shape) << what;
  double worst = 0.0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::abs(double(a.data()[i]) - double(b.data()[i])) / (1.0 + std::abs(double(b.data()[i]))));
  EXPECT_LT(worst, 1e-4) << what;
}

struct Case {
  Shape x, w;
  std::array<int64_t, 2> stride, padding, dilation;
  int64_t groups;
  bool bias;
};

class CpuConvBackwardWeights : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!cpu::onednn::enabled()) GTEST_SKIP() << "Ember was built without oneDNN (or EMBER_ONEDNN=0)";
    threads_ = cpu::num_threads();
  }
  void TearDown() override {
    cpu::onednn::set_enabled(true);
    cpu::set_num_threads(threads_);
  }
  int threads_ = 1;
};

TEST_P(CpuConvBackwardWeights, MatchesIm2colOnOneAndTwoThreads) {
  const Case c = GetParam();
  Conv2dOptions o;
  o.stride = c.stride;
  o.padding = c.padding;
  o.dilation = c.dilation;
  o.groups = c.groups;
  const T x = random(c.x, 1), w = random(c.w, 2);
  const T grad = random(cpu::conv2d<float>(x, w, nullptr, o).shape, 3);
  cpu::onednn::set_enabled(false);
  const auto ref = cpu::conv2d_backward(x, w, grad, c.bias, o);  // im2col + GEMM + col2im throughout
  cpu::onednn::set_enabled(true);
  EXPECT_FALSE(cpu::onednn::conv2d_backward(x, w, grad, c.bias, o).has_value())
      << "few input channels: oneDNN's whole backward declines, so the split path is the one tested";
  for (int threads : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << threads << " thread(s)");
    cpu::set_num_threads(threads);
    const auto split = cpu::conv2d_backward(x, w, grad, c.bias, o);
    expect_near(split.input, ref.input, "grad input (col2im)");
    expect_near(split.weight, ref.weight, "grad weight through cpu::conv2d_backward");
    ASSERT_EQ(split.bias.has_value(), c.bias);
    if (c.bias) expect_near(*split.bias, *ref.bias, "grad bias through cpu::conv2d_backward");
    const auto wg = cpu::onednn::conv2d_backward_weights(x, w, grad, c.bias, o);
    if (!wg) {  // declined: only where oneDNN has no JIT kernel for the problem, and never for a dense first layer
      EXPECT_GT(c.groups, 1) << "oneDNN declined the weight gradient of an ungrouped first layer";
      continue;
    }
    expect_near(wg->weight, ref.weight, "grad weight from oneDNN");
    ASSERT_EQ(wg->bias.has_value(), c.bias);
    if (c.bias) expect_near(*wg->bias, *ref.bias, "grad bias from oneDNN");
  }
}

INSTANTIATE_TEST_SUITE_P(
    FirstLayers, CpuConvBackwardWeights,
    ::testing::Values(Case{{3, 3, 9, 9}, {8, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true},    // RGB, same padding
                      Case{{5, 1, 8, 8}, {4, 1, 3, 3}, {2, 2}, {0, 0}, {1, 1}, 1, false},   // odd batch, stride 2
                      Case{{2, 4, 7, 7}, {6, 2, 3, 3}, {1, 1}, {2, 2}, {2, 2}, 2, true},    // groups, dilation
                      Case{{4, 7, 6, 5}, {16, 7, 1, 3}, {1, 2}, {0, 1}, {1, 1}, 1, true},   // 7 channels, 1x3
                      Case{{3, 16, 6, 6}, {16, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 16, true})); // depthwise

}  // namespace
}  // namespace ember
