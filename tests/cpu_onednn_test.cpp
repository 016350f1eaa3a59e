// The CPU backend's oneDNN convolutions (backends/cpu/onednn.hpp) against its own im2col + GEMM kernels, forward
// and backward, over strides, padding, dilation, groups, with and without bias, batch 1, a conv1d-shaped (H = 1)
// problem and the first-layer shape, whose backward is im2col + GEMM per batch slice (conv2d_backward_im2col).
// Skipped in a build without oneDNN.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/ember.hpp"

namespace ember {
namespace {

using T = cpu::CpuTensor<float>;

T random(Shape s, uint64_t seed) {
  std::mt19937 gen(static_cast<uint32_t>(seed));
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
  Conv2dOptions o;
  bool bias;
};

Conv2dOptions opts(std::array<int64_t, 2> s, std::array<int64_t, 2> p, std::array<int64_t, 2> d, int64_t g) {
  Conv2dOptions o;
  o.stride = s;
  o.padding = p;
  o.dilation = d;
  o.groups = g;
  return o;
}

class OneDnnConv : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!cpu::onednn::enabled()) GTEST_SKIP() << "Ember was built without oneDNN (or EMBER_ONEDNN=0)";
  }
  void TearDown() override { cpu::onednn::set_enabled(true); }
};

TEST_P(OneDnnConv, MatchesIm2colForwardAndBackward) {
  const Case c = GetParam();
  const T x = random(c.x, 1), w = random(c.w, 2);
  const T b = random(Shape{c.w[0]}, 3);
  const T* bp = c.bias ? &b : nullptr;
  const auto y_dnn = cpu::onednn::conv2d(x, w, bp, c.o);
  ASSERT_TRUE(y_dnn.has_value()) << "oneDNN declined a problem it supports";
  const T grad = random(y_dnn->shape, 4);
  const auto g_dnn = cpu::onednn::conv2d_backward(x, w, grad, c.bias, c.o);
  // The backend entry point takes the oneDNN path while it is on; compare against the same call with it off.
  const T y_entry = cpu::conv2d(x, w, bp, c.o);
  cpu::onednn::set_enabled(false);
  EXPECT_FALSE(cpu::onednn::conv2d(x, w, bp, c.o).has_value());
  const T y_ref = cpu::conv2d(x, w, bp, c.o);
  const auto g_ref = cpu::conv2d_backward(x, w, grad, c.bias, c.o);
  expect_near(*y_dnn, y_ref, "output");
  expect_near(y_entry, y_ref, "output through cpu::conv2d");
  const int64_t cg = c.w[1];
  if (cg < 8 && c.o.groups != 1) {
    EXPECT_FALSE(g_dnn.has_value()) << "few input channels per group, grouped: conv.cpp's im2col + GEMM";
    return;
  }
  // cg < 8 with one group: conv2d_backward_im2col, im2col + GEMM per batch slice.
  ASSERT_TRUE(g_dnn.has_value());
  expect_near(g_dnn->input, g_ref.input, "grad input");
  expect_near(g_dnn->weight, g_ref.weight, "grad weight");
  ASSERT_EQ(g_dnn->bias.has_value(), c.bias);
  if (c.bias) expect_near(*g_dnn->bias, *g_ref.bias, "grad bias");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, OneDnnConv,
    ::testing::Values(Case{{2, 8, 9, 9}, {16, 8, 3, 3}, opts({1, 1}, {1, 1}, {1, 1}, 1), true},
                      Case{{2, 8, 9, 9}, {16, 8, 3, 3}, opts({1, 1}, {1, 1}, {1, 1}, 1), false},
                      Case{{3, 16, 11, 7}, {8, 16, 3, 2}, opts({2, 1}, {1, 0}, {1, 1}, 1), true},
                      Case{{1, 16, 10, 10}, {16, 16, 3, 3}, opts({1, 1}, {2, 2}, {2, 2}, 1), true},
                      Case{{2, 16, 8, 8}, {32, 8, 3, 3}, opts({1, 1}, {1, 1}, {1, 1}, 2), true},
                      Case{{2, 16, 8, 8}, {16, 1, 3, 3}, opts({1, 1}, {1, 1}, {1, 1}, 16), false},
                      Case{{4, 12, 1, 20}, {6, 12, 1, 5}, opts({1, 2}, {0, 2}, {1, 1}, 1), true},  // conv1d
                      Case{{2, 3, 12, 12}, {8, 3, 3, 3}, opts({1, 1}, {1, 1}, {1, 1}, 1), true},
                      // Winograd's (winograd_pays): 3x3 stride 1, >= 16 in / 32 out channels, >= 256 pixels;
                      // odd sizes leave partial 4x4 tiles, "valid" padding a smaller output.
                      Case{{4, 16, 8, 8}, {32, 16, 3, 3}, opts({1, 1}, {1, 1}, {1, 1}, 1), true},
                      Case{{3, 24, 11, 13}, {40, 24, 3, 3}, opts({1, 1}, {1, 1}, {1, 1}, 1), false},
                      Case{{2, 32, 18, 18}, {32, 32, 3, 3}, opts({1, 1}, {0, 0}, {1, 1}, 1), true}));

bool same_bits(const T& a, const T& b) {
  return a.shape == b.shape && std::equal(a.data(), a.data() + a.numel(), b.data());
}

// A first layer's backward (3 input channels) split over the batch (conv2d_backward_im2col) on 1, 2 and 3 threads
// matches conv.cpp's whole-batch im2col + GEMM within rounding, and every run gives the same bits (the partials of
// grad_w / grad_b are added in batch order, whichever thread finished first). Two regimes: a small slice runs
// whole (on one thread conv.cpp's very steps: the same bits), a large one grad_x per image and grad_w / grad_b by
// oneDNN's backward-weights kernel.
void check_first_layer_backward(Shape xs, int64_t cout, bool one_thread_bits) {
  const int threads_before = cpu::num_threads();
  const Conv2dOptions o = opts({1, 1}, {1, 1}, {1, 1}, 1);
  const T x = random(xs, 7), w = random(Shape{cout, 3, 3, 3}, 8);
  const T grad = random(Shape{xs[0], cout, xs[2], xs[3]}, 9);
  cpu::set_num_threads(1);
  cpu::onednn::set_enabled(false);
  const auto ref = cpu::conv2d_backward(x, w, grad, true, o);  // conv.cpp, whole batch, one thread
  cpu::onednn::set_enabled(true);
  for (int threads : {1, 2, 3}) {
    cpu::set_num_threads(threads);
    const auto a = cpu::onednn::conv2d_backward(x, w, grad, true, o);
    const auto b = cpu::onednn::conv2d_backward(x, w, grad, true, o);
    ASSERT_TRUE(a.has_value() && b.has_value()) << threads << " threads";
    if (threads == 1 && one_thread_bits) {
      EXPECT_TRUE(same_bits(a->input, ref.input)) << "1 thread: grad input";
      EXPECT_TRUE(same_bits(a->weight, ref.weight)) << "1 thread: grad weight";
      EXPECT_TRUE(same_bits(*a->bias, *ref.bias)) << "1 thread: grad bias";
    }
    expect_near(a->input, ref.input, "grad input");
    expect_near(a->weight, ref.weight, "grad weight");
    expect_near(*a->bias, *ref.bias, "grad bias");
    EXPECT_TRUE(same_bits(a->input, b->input) && same_bits(a->weight, b->weight) && same_bits(*a->bias, *b->bias))
        << threads << " threads: rerun";
  }
  cpu::set_num_threads(threads_before);
}

TEST(OneDnnConvFirstLayer, SmallSlicesRunWhole) {
  if (!cpu::onednn::enabled()) GTEST_SKIP() << "Ember was built without oneDNN";
  check_first_layer_backward(Shape{5, 3, 12, 12}, 8, true);  // columns: 5 x 27 x 144 floats, 78 KiB
}

TEST(OneDnnConvFirstLayer, LargeSlicesRunPerImage) {
  if (!cpu::onednn::enabled()) GTEST_SKIP() << "Ember was built without oneDNN";
  // Columns of 7 x 27 x 1600 floats (1.2 MiB): per image on 1 and 2 threads; 3 threads slice 3 + 2 + 2 (506 KiB:
  // whole).
  check_first_layer_backward(Shape{7, 3, 40, 40}, 16, false);
}

// Winograd F(4x4, 3x3) where it pays (onednn.hpp): chosen for a problem it covers, the same results as the direct
// kernels within rounding (its transforms round differently: ~1e-6 of the largest value), forward and both
// backward passes, on one thread and in batch slices over two; and off, every plan is direct.
TEST(OneDnnConvWinograd, ChosenWhereItPaysAndAgreesWithDirect) {
  if (!cpu::onednn::enabled() || !cpu::onednn::winograd())
    GTEST_SKIP() << "Ember was built without oneDNN (or EMBER_CONV_WINOGRAD=0)";
  const int threads_before = cpu::num_threads();
  const Conv2dOptions o = opts({1, 1}, {1, 1}, {1, 1}, 1);
  const T x = random(Shape{6, 32, 12, 12}, 11), w = random(Shape{48, 32, 3, 3}, 12), b = random(Shape{48}, 13);
  const T grad = random(Shape{6, 48, 12, 12}, 14);
  cpu::onednn::set_winograd(false);
  const int64_t plans_direct = cpu::onednn::winograd_plans();
  const auto y_direct = cpu::onednn::conv2d(x, w, &b, o);
  const auto g_direct = cpu::onednn::conv2d_backward(x, w, grad, true, o);
  EXPECT_EQ(cpu::onednn::winograd_plans(), plans_direct) << "Winograd off: every plan direct";
  cpu::onednn::set_winograd(true);
  for (int threads : {1, 2}) {
    cpu::set_num_threads(threads);
    const int64_t before = cpu::onednn::winograd_plans();
    const auto y = cpu::onednn::conv2d(x, w, &b, o);
    const auto g = cpu::onednn::conv2d_backward(x, w, grad, true, o);
    ASSERT_TRUE(y && g && y_direct && g_direct);
    EXPECT_GE(cpu::onednn::winograd_plans(), before + 1) << threads << " threads: a Winograd plan";
    expect_near(*y, *y_direct, "output");
    expect_near(g->input, g_direct->input, "grad input");
    expect_near(g->weight, g_direct->weight, "grad weight");
    expect_near(*g->bias, *g_direct->bias, "grad bias");
    EXPECT_FALSE(same_bits(*y, *y_direct)) << "the Winograd kernels ran (their rounding differs from direct)";
  }
  // Too few output channels for it to pay (3 -> 32 and 16 -> 16 run faster direct): no Winograd plan.
  const int64_t before = cpu::onednn::winograd_plans();
  ASSERT_TRUE(cpu::onednn::conv2d(random(Shape{6, 16, 12, 12}, 15), random(Shape{16, 16, 3, 3}, 16), nullptr, o));
  EXPECT_EQ(cpu::onednn::winograd_plans(), before);
  cpu::set_num_threads(threads_before);
}

// Plans are cached per problem: alternating problems must each keep their own (a wrong key would reuse one
// problem's primitives for another's shapes).
TEST(OneDnnConvCache, AlternatingProblemsKeepTheirOwnPlans) {
  if (!cpu::onednn::enabled()) GTEST_SKIP() << "Ember was built without oneDNN";
  const Conv2dOptions same = opts({1, 1}, {1, 1}, {1, 1}, 1), strided = opts({2, 2}, {1, 1}, {1, 1}, 1);
  const T x = random(Shape{2, 8, 10, 10}, 5), w = random(Shape{8, 8, 3, 3}, 6);
  std::vector<T> first, second;
  for (int round = 0; round < 2; ++round) {
    auto& out = round == 0 ? first : second;
    out.push_back(*cpu::onednn::conv2d(x, w, nullptr, same));
    out.push_back(*cpu::onednn::conv2d(x, w, nullptr, strided));
  }
  EXPECT_EQ(first[0].shape, (Shape{2, 8, 10, 10}));
  EXPECT_EQ(first[1].shape, (Shape{2, 8, 5, 5}));
  for (int i = 0; i < 2; ++i) expect_near(second[i], first[i], "repeated call");
}

// Threads split the batch into slices (uneven here: 5 images over 3 and 4 threads). The backward runs its two
// passes side by side, grad input over (threads + 1) / 2 slices and grad weight / bias over threads / 2 (4 threads:
// two slices, whose sums are added at the end): every result must match the single-threaded im2col reference, and
// a rerun must give the same bits.
TEST(OneDnnConvThreads, BatchSlicesSumToTheWholeBatchGradients) {
  if (!cpu::onednn::enabled()) GTEST_SKIP() << "Ember was built without oneDNN";
  const int before = cpu::num_threads();
  const Conv2dOptions o = opts({1, 1}, {1, 1}, {1, 1}, 1);
  const T x = random(Shape{5, 8, 6, 6}, 7), w = random(Shape{12, 8, 3, 3}, 8), b = random(Shape{12}, 9);
  const T grad = random(Shape{5, 12, 6, 6}, 10);
  cpu::set_num_threads(1);
  cpu::onednn::set_enabled(false);
  const T y_ref = cpu::conv2d(x, w, &b, o);
  const auto g_ref = cpu::conv2d_backward(x, w, grad, true, o);
  cpu::onednn::set_enabled(true);
  for (int threads : {3, 4}) {
    cpu::set_num_threads(threads);
    const auto y = cpu::onednn::conv2d(x, w, &b, o);
    const auto g = cpu::onednn::conv2d_backward(x, w, grad, true, o);
    const auto again = cpu::onednn::conv2d_backward(x, w, grad, true, o);
    ASSERT_TRUE(y.has_value() && g.has_value() && again.has_value()) << threads << " threads";
    expect_near(*y, y_ref, "output");
    expect_near(g->input, g_ref.input, "grad input");
    expect_near(g->weight, g_ref.weight, "grad weight");
    expect_near(*g->bias, *g_ref.bias, "grad bias");
    EXPECT_TRUE(same_bits(g->input, again->input) && same_bits(g->weight, again->weight) &&
                same_bits(*g->bias, *again->bias))
        << threads << " threads: rerun";
  }
  cpu::set_num_threads(before);
}

// On two threads the backward's passes run side by side, each over the whole batch on one thread (a slice of each
// on each thread paid every fixed cost twice: 1.5x scaling of a Winograd 64->128 @8 fwd+bwd): the grads are the
// one-thread grads to the bit, Winograd's and direct kernels' alike, and so is a batch of one image.
TEST(OneDnnConvThreads, TwoThreadsRunEachBackwardPassOverTheWholeBatch) {
  if (!cpu::onednn::enabled()) GTEST_SKIP() << "Ember was built without oneDNN";
  const int before = cpu::num_threads();
  const Conv2dOptions o = opts({1, 1}, {1, 1}, {1, 1}, 1);
  for (const auto& [xs, cout] : {std::pair{Shape{6, 32, 12, 12}, int64_t{48}}, std::pair{Shape{5, 8, 6, 6}, int64_t{12}},
                                 std::pair{Shape{1, 16, 9, 9}, int64_t{16}}}) {
    const T x = random(xs, 21), w = random(Shape{cout, xs[1], 3, 3}, 22);
    const T grad = random(Shape{xs[0], cout, xs[2], xs[3]}, 23);
    cpu::set_num_threads(1);
    const auto one = cpu::onednn::conv2d_backward(x, w, grad, true, o);
    cpu::set_num_threads(2);
    const auto two = cpu::onednn::conv2d_backward(x, w, grad, true, o);
    ASSERT_TRUE(one.has_value() && two.has_value()) << xs[0] << " images";
    EXPECT_TRUE(same_bits(one->input, two->input)) << xs[0] << "x" << xs[1] << " -> " << cout << ": grad input";
    EXPECT_TRUE(same_bits(one->weight, two->weight)) << xs[0] << "x" << xs[1] << " -> " << cout << ": grad weight";
    EXPECT_TRUE(same_bits(*one->bias, *two->bias)) << xs[0] << "x" << xs[1] << " -> " << cout << ": grad bias";
  }
  cpu::set_num_threads(before);
}

// Where Winograd's weight transform outweighs its input's (Cout >= N x tiles), a forward on two threads runs the
// two halves of the output channels over the whole batch, each half on one thread, writing its channel range of
// the NCHW output: the one-thread values within rounding, with the bias and the ReLU post-op, and a convolution
// reading that output next (which must not take a blocked copy of a channel range for the whole tensor) too.
// Where the input is the larger transform (many images), batch slices as before.
TEST(OneDnnConvThreads, ForwardSplitsTheOutputChannelsWhereTheWeightsAreTheLargerTransform) {
  if (!cpu::onednn::enabled() || !cpu::onednn::winograd())
    GTEST_SKIP() << "Ember was built without oneDNN (or EMBER_CONV_WINOGRAD=0)";
  const int before = cpu::num_threads();
  const Conv2dOptions o = opts({1, 1}, {1, 1}, {1, 1}, 1);
  // 4 images of 8 x 8: 4 x 4 tiles of 4 x 4 pixels; 64 >= 16 output channels, two 32-channel halves.
  const T x = random(Shape{4, 16, 8, 8}, 31), w = random(Shape{64, 16, 3, 3}, 32), b = random(Shape{64}, 33);
  const T w2 = random(Shape{64, 64, 3, 3}, 34);
  auto run = [&](int threads) {
    cpu::set_num_threads(threads);
    std::vector<T> out;
    out.push_back(*cpu::onednn::conv2d(x, w, &b, o));
    out.push_back(*cpu::onednn::conv2d(x, w, &b, o, cpu::onednn::PostOp::Relu));
    out.push_back(*cpu::onednn::conv2d(out[1], w2, nullptr, o));
    return out;
  };
  const std::vector<T> one = run(1);
  const int64_t parts_before = cpu::onednn::forward_channel_parts();
  const std::vector<T> two = run(2);
  EXPECT_EQ(cpu::onednn::forward_channel_parts(), parts_before + 3) << "every forward in two channel halves";
  expect_near(two[0], one[0], "output with bias");
  expect_near(two[1], one[1], "output with ReLU");
  expect_near(two[2], one[2], "the next convolution's output");
  for (float v : std::vector<float>(two[1].data(), two[1].data() + two[1].numel())) ASSERT_GE(v, 0.0f);
  // 32 images: 64 < 32 x 4, the input is the larger transform: batch slices.
  const T many = random(Shape{32, 16, 8, 8}, 35);
  cpu::set_num_threads(2);
  const int64_t parts_many = cpu::onednn::forward_channel_parts();
  const auto y_many = cpu::onednn::conv2d(many, w, &b, o);
  EXPECT_EQ(cpu::onednn::forward_channel_parts(), parts_many) << "batch slices";
  cpu::set_num_threads(1);
  expect_near(*y_many, *cpu::onednn::conv2d(many, w, &b, o), "batch slices' output");
  cpu::set_num_threads(before);
}

}  // namespace
}  // namespace ember
