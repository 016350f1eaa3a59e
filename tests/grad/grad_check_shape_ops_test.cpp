// Finite-difference gradient checks (f64) of the composed shape ops: pad (three modes), step slices, baddbmm,
// einsum, logsumexp, std, interpolate. They are compositions of differentiable primitives; these checks catch a
// composition that routes a gradient wrongly (a missing copy in reflect padding, a detached weight, ...).
#include <gtest/gtest.h>

#include "tests/grad/grad_check.hpp"

namespace ember::gradcheck {
namespace shape_ops_grads {

TEST(GradCheckShapeOps, Pad) {
  const auto x = uniform<3>({2, 3, 4}, -2, 2, 1);
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.pad({1, 2, 0, 1}, PadMode::Constant, 0.5).sin(); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.pad({-1, 2}).exp(); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.pad({2, 3, 1, 2}, PadMode::Reflect).sin(); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.pad({3, 1, 2, 2}, PadMode::Replicate).sin(); }, x));
}

TEST(GradCheckShapeOps, StepSlice) {
  const auto x = uniform<3>({5, 3, 7}, -2, 2, 2);
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.slice_step({{0, std::nullopt, 2}, {1}, {1, 7, 3}}).exp(); }, x));
}

TEST(GradCheckShapeOps, Baddbmm) {
  EXPECT_TRUE(check_grad([](const T<3>& i, const T<3>& a, const T<3>& b) { return i.baddbmm(a, b, 0.5, 1.5).sin(); },
                         uniform<3>({1, 3, 4}, -1, 1, 3), uniform<3>({2, 3, 5}, -1, 1, 4),
                         uniform<3>({2, 5, 4}, -1, 1, 5)));
}

TEST(GradCheckShapeOps, Einsum) {
  EXPECT_TRUE(check_grad([](const T<4>& q, const T<4>& k) { return einsum<4>("bhqd,bhkd->bhqk", q, k).sin(); },
                         uniform<4>({1, 2, 3, 4}, -1, 1, 6), uniform<4>({1, 2, 5, 4}, -1, 1, 7)));
  EXPECT_TRUE(check_grad([](const T<2>& m) { return einsum<1>("ii->i", m).exp(); }, uniform<2>({3, 3}, -1, 1, 8)));
  EXPECT_TRUE(check_grad([](const T<3>& a, const T<2>& w) { return einsum<3>("...ij,...jk->...ik", a, w).sin(); },
                         uniform<3>({2, 3, 4}, -1, 1, 9), uniform<2>({4, 5}, -1, 1, 10)));
  EXPECT_TRUE(check_grad(
      [](const T<2>& x1, const T<3>& w, const T<2>& x2) { return einsum<2>("bn,anm,bm->ba", x1, w, x2); },
      uniform<2>({2, 3}, -1, 1, 11), uniform<3>({4, 3, 5}, -1, 1, 12), uniform<2>({2, 5}, -1, 1, 13)));
}

TEST(GradCheckShapeOps, LogsumexpStd) {
  const auto x = uniform<3>({2, 3, 4}, -3, 3, 14);
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.logsumexp(1).sin(); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.logsumexp({0, 2}); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.std({0, 2}).exp(); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& t) { return t.std(1, 0); }, x));
}

TEST(GradCheckShapeOps, Interpolate) {
  const auto x = uniform<4>({1, 2, 3, 4}, -2, 2, 15);
  using M = InterpolateMode;
  for (bool ac : {false, true})
    EXPECT_TRUE(check_grad(
        [ac](const T<4>& t) { return interpolate(t, {std::array<int64_t, 2>{5, 6}, std::nullopt, M::Bilinear, ac}); },
        x));
  EXPECT_TRUE(check_grad(
      [](const T<4>& t) { return interpolate(t, {std::nullopt, std::array<double, 2>{1.7, 2.0}, M::Nearest, false}); },
      x));
}

}  // namespace shape_ops_grads
}  // namespace ember::gradcheck
