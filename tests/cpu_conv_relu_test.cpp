// The CPU backend's conv2d_relu (its optional float_conv2d_relu: the ReLU as a oneDNN post-op) against relu of its
// conv2d, with oneDNN on and off, f32 and f64, and the composed default (optional_ops.hpp) on the backend with its
// optional ops hidden.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/onednn.hpp"
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

}  // namespace
}  // namespace ember
