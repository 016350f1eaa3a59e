// The oneDNN forward's cache of weights reordered into its blocked layout (backends/cpu/onednn_conv.cpp): reused
// while the weight tensor's buffer lives, never for another buffer, even one the allocator placed at the dead
// buffer's address. Compared with the im2col + GEMM path. Skipped in a build without oneDNN.
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

double worst_difference(const T& a, const T& b) {
  double worst = 0.0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::abs(double(a.data()[i]) - double(b.data()[i])) / (1.0 + std::abs(double(b.data()[i]))));
  return worst;
}

T reference(const T& x, const T& w, const Conv2dOptions& o) {
  cpu::onednn::set_enabled(false);
  T y = cpu::conv2d<float>(x, w, nullptr, o);
  cpu::onednn::set_enabled(true);
  return y;
}

Conv2dOptions same_padding() {
  Conv2dOptions o;
  o.padding = {1, 1};
  return o;
}

// One thread: the cache is per thread (as the plans are), so with the batch split over threads each would count.
class OneDnnWeights : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu::onednn::enabled()) GTEST_SKIP() << "Ember was built without oneDNN (or EMBER_ONEDNN=0)";
    cpu::set_num_threads(1);
  }
  void TearDown() override { cpu::set_num_threads(threads_before_); }
  int threads_before_ = cpu::num_threads();
};

// 32 -> 32 channels: oneDNN picks a blocked weight layout on any x86-64 it has kernels for, so the cache is used.
TEST_F(OneDnnWeights, ReorderedOncePerLiveBuffer) {
  const T x = random(Shape{2, 32, 6, 6}, 1), w = random(Shape{32, 32, 3, 3}, 2);
  const int64_t before = cpu::onednn::forward_weight_reorders();
  const T y1 = *cpu::onednn::conv2d(x, w, nullptr, same_padding());
  const int64_t after_first = cpu::onednn::forward_weight_reorders();
  ASSERT_EQ(after_first, before + 1) << "the first call reorders the weights";
  const T y2 = *cpu::onednn::conv2d(x, w, nullptr, same_padding());
  const T w_alias = w;  // a copy of the tensor shares its buffer: still a hit
  const T y3 = *cpu::onednn::conv2d(x, w_alias, nullptr, same_padding());
  EXPECT_EQ(cpu::onednn::forward_weight_reorders(), after_first) << "an unchanged buffer is reordered again";
  const T ref = reference(x, w, same_padding());
  for (const T* y : {&y1, &y2, &y3}) EXPECT_LT(worst_difference(*y, ref), 1e-4);
}

// Two live weights of one shape alternate (a ResNet stage): each gets its own cached copy.
TEST_F(OneDnnWeights, AlternatingWeightsOfOneShapeKeepTheirOwnCopies) {
  const T x = random(Shape{1, 32, 5, 5}, 3), a = random(Shape{32, 32, 3, 3}, 4), b = random(Shape{32, 32, 3, 3}, 5);
  const T ref_a = reference(x, a, same_padding()), ref_b = reference(x, b, same_padding());
  for (int round = 0; round < 3; ++round) {
    EXPECT_LT(worst_difference(*cpu::onednn::conv2d(x, a, nullptr, same_padding()), ref_a), 1e-4) << round;
    EXPECT_LT(worst_difference(*cpu::onednn::conv2d(x, b, nullptr, same_padding()), ref_b), 1e-4) << round;
  }
}

// A weight that dies and a new one at the same address (the allocator reuses freed blocks of a size class, as a
// training step's new parameters would): the new values must be used.
TEST_F(OneDnnWeights, NewBufferAtADeadBuffersAddressIsReorderedAgain) {
  const T x = random(Shape{2, 32, 4, 4}, 6);
  const void* first_address = nullptr;
  bool address_reused = false;
  for (uint32_t seed = 10; seed < 14; ++seed) {
    const T w = random(Shape{32, 32, 3, 3}, seed);
    if (first_address == nullptr) first_address = w.data();
    else address_reused = address_reused || w.data() == first_address;
    const int64_t before = cpu::onednn::forward_weight_reorders();
    const T y = *cpu::onednn::conv2d(x, w, nullptr, same_padding());
    EXPECT_EQ(cpu::onednn::forward_weight_reorders(), before + 1) << "seed " << seed;
    EXPECT_LT(worst_difference(y, reference(x, w, same_padding())), 1e-4) << "seed " << seed;
  }
  EXPECT_TRUE(address_reused) << "the allocator placed no new weight at a dead one's address: the case is untested";
}

}  // namespace
}  // namespace ember
