// The CPU backend's conv2d_relu (its optional float_conv2d_relu: the ReLU as a oneDNN post-op) against relu of its
// conv2d, with oneDNN on and off, f32 and f64, and the composed default (optional_ops.hpp) on the backend with its
// optional ops hidden; conv2d_relu_max_pool (oneDNN's pooling on the blocked output) against the two kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/backend/optional_ops.hpp"
#include "tests/support/hide_optional.hpp"

namespace ember {
namespace {

template <class T>
cpu::CpuTensor<T> random(Shape s, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  cpu::CpuTensor<T> t(std::move(s));
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<T>(u(gen));
  return t;
}

template <class T>
void expect_relu_of(const cpu::CpuTensor<T>& got, const cpu::CpuTensor<T>& conv, const char* what) {
  ASSERT_EQ(got.shape, conv.shape) << what;
  int64_t clipped = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double want = std::max(0.0, double(conv.data()[i]));
    clipped += conv.data()[i] < 0;
    ASSERT_NEAR(double(got.data()[i]), want, 1e-4 * (1 + std::abs(want))) << what << " element " << i;
  }
  EXPECT_GT(clipped, 0) << what << ": no negative output, the ReLU is untested";
}

Conv2dOptions opts(int64_t stride, int64_t pad, int64_t groups) {
  Conv2dOptions o;
  o.stride = {stride, stride};
  o.padding = {pad, pad};
  o.groups = groups;
  return o;
}

TEST(CpuConvRelu, MatchesReluOfConvWithAndWithoutOneDnn) {
  for (const Conv2dOptions& o : {opts(1, 1, 1), opts(2, 0, 1), opts(1, 1, 2)}) {
    const auto x = random<float>(Shape{3, 16, 7, 6}, 1), w = random<float>(Shape{32, 16 / o.groups, 3, 3}, 2);
    const auto b = random<float>(Shape{32}, 3);
    for (bool dnn : {true, false}) {
      cpu::onednn::set_enabled(dnn);
      for (const cpu::CpuTensor<float>* bias : {&b, static_cast<const cpu::CpuTensor<float>*>(nullptr)})
        expect_relu_of(cpu::conv2d_relu(x, w, bias, o), cpu::conv2d(x, w, bias, o), dnn ? "oneDNN" : "im2col");
    }
    cpu::onednn::set_enabled(true);
  }
}

TEST(CpuConvRelu, DoubleAndTheComposedDefault) {
  const auto xd = random<double>(Shape{2, 4, 5, 5}, 4), wd = random<double>(Shape{6, 4, 3, 3}, 5);
  expect_relu_of(cpu::conv2d_relu<double>(xd, wd, nullptr, opts(1, 1, 1)), cpu::conv2d<double>(xd, wd, nullptr, opts(1, 1, 1)), "f64");
  using Hidden = test::HideOptional<Cpu<float>>;
  static_assert(optional_ops::HasFusedConv2dRelu<Cpu<float>> && !optional_ops::HasFusedConv2dRelu<Hidden>);
  const auto x = random<float>(Shape{2, 8, 5, 5}, 6), w = random<float>(Shape{8, 8, 3, 3}, 7);
  expect_relu_of(optional_ops::float_conv2d_relu<Hidden>(x, w, nullptr, opts(1, 1, 1)),
                 cpu::conv2d<float>(x, w, nullptr, opts(1, 1, 1)), "composed");
}

Pool2dOptions pool_opts(int64_t k, int64_t s, int64_t p) {
  Pool2dOptions o;
  o.kernel = {k, k};
  o.stride = {s, s};
  o.padding = {p, p};
  return o;
}

// conv2d_relu_max_pool (oneDNN pooling the blocked convolution output) against max_pool2d of conv2d_relu, over
// 2x2 / 2 and padded 3x3 / 2 pools, a batch split over 2 threads (uneven: 3 images), and f64 / oneDNN off.
TEST(CpuConvRelu, MaxPoolOfTheBlockedOutputMatchesTheTwoKernels) {
  const int threads_before = cpu::num_threads();
  const auto x = random<float>(Shape{3, 16, 9, 10}, 8), w = random<float>(Shape{32, 16, 3, 3}, 9);
  const auto b = random<float>(Shape{32}, 10);
  for (const Pool2dOptions& pool : {pool_opts(2, 2, 0), pool_opts(3, 2, 1)}) {
    for (int threads : {1, 2}) {
      for (bool dnn : {true, false}) {
        cpu::set_num_threads(threads);
        cpu::onednn::set_enabled(dnn);
        const auto got = cpu::conv2d_relu_max_pool(x, w, &b, opts(1, 1, 1), pool);
        const auto want = cpu::max_pool2d(cpu::conv2d_relu(x, w, &b, opts(1, 1, 1)), pool).output;
        ASSERT_EQ(got.shape, want.shape);
        for (int64_t i = 0; i < got.numel(); ++i)
          ASSERT_NEAR(got.data()[i], want.data()[i], 1e-4 * (1 + std::abs(want.data()[i])))
              << "pool " << pool.kernel[0] << " threads " << threads << " oneDNN " << dnn << " element " << i;
      }
    }
  }
  cpu::onednn::set_enabled(true);
  cpu::set_num_threads(threads_before);
  const auto xd = random<double>(Shape{1, 2, 6, 6}, 11), wd = random<double>(Shape{3, 2, 3, 3}, 12);
  const auto gd = cpu::conv2d_relu_max_pool<double>(xd, wd, nullptr, opts(1, 1, 1), pool_opts(2, 2, 0));
  const auto wantd = cpu::max_pool2d(cpu::conv2d_relu<double>(xd, wd, nullptr, opts(1, 1, 1)), pool_opts(2, 2, 0));
  for (int64_t i = 0; i < gd.numel(); ++i) EXPECT_EQ(gd.data()[i], wantd.output.data()[i]);
}

}  // namespace
}  // namespace ember
