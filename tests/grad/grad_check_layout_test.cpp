// Finite-difference gradient checks (f64) for layout ops (reshape, flatten, squeeze, unsqueeze, permute,
// transpose, expand, repeat, flip, slice, narrow, slice_assign, cat, stack, split, chunk), indexing (gather,
// scatter_add, index_select, select_assign) and selection (where, mask_where, mask_fill).
#include <gtest/gtest.h>

#include "tests/grad/grad_check.hpp"

namespace ember::gradcheck {
namespace layout_grads {

// Each check applies a nonlinearity after the op under test in some cases, so the gradient reaching the op is
// not a constant and a mis-routed gradient shows up.
T<3> x234(uint64_t seed) { return uniform<3>({2, 3, 4}, -2, 2, seed); }

// ---------------------------------------------------------------- shape ops
TEST(GradCheckLayout, Reshape) {
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.reshape<2>({6, 4}); }, x234(1)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.reshape<2>({4, -1}).sin(); }, x234(2)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.reshape<1>({24}).mul(x.reshape<1>({24}).exp()); }, x234(3)));
  // Reshape of a non-contiguous view.
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.permute({2, 0, 1}).reshape<2>({8, 3}).tanh(); }, x234(4)));
}

TEST(GradCheckLayout, Flatten) {
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.flatten<2>(0, 1); }, x234(5)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.flatten<2>(1, 2).cos(); }, x234(6)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.flatten<1>(0, 2); }, x234(7)));
}

TEST(GradCheckLayout, SqueezeUnsqueeze) {
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.squeeze<2>(1).exp(); }, uniform<3>({3, 1, 4}, -2, 2, 8)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.squeeze<2>(-1); }, uniform<3>({3, 4, 1}, -2, 2, 9)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.unsqueeze<4>(0).sin(); }, x234(10)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.unsqueeze<4>(2).mul_scalar(2.0); }, x234(11)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.unsqueeze<4>(-1); }, x234(12)));
}

TEST(GradCheckLayout, PermuteTranspose) {
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.permute({2, 0, 1}); }, x234(13)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.permute({1, 2, 0}).sin(); }, x234(14)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.transpose().exp(); }, x234(15)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.swap_dims(0, 2).mul(x.swap_dims(0, 2)); }, x234(16)));
  // A permuted view feeding a broadcasting binary op.
  EXPECT_TRUE(check_grad([](const T<3>& a, const T<3>& b) { return a.permute({0, 2, 1}).add(b); }, x234(17),
                         uniform<3>({1, 4, 1}, -2, 2, 18)));
}

TEST(GradCheckLayout, Expand) {
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.expand<3>({2, 3, 4}); }, uniform<3>({2, 1, 4}, -2, 2, 19)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.expand<3>({-1, 3, 4}).sin(); }, uniform<3>({2, 1, 1}, -2, 2, 20)));
  // Rank-raising expand: new leading dims sum the gradient.
  EXPECT_TRUE(check_grad([](const T<2>& x) { return x.expand<4>({2, 2, 3, 4}).exp(); }, uniform<2>({1, 4}, -1, 1, 21)));
  EXPECT_TRUE(check_grad([](const T<2>& x) { return x.expand<3>({5, 3, 4}); }, uniform<2>({3, 4}, -1, 1, 22)));
}

TEST(GradCheckLayout, Repeat) {
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.repeat({2, 1, 3}); }, x234(23)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.repeat({1, 2, 1}).sin(); }, x234(24)));
  EXPECT_TRUE(check_grad([](const T<2>& x) { return x.repeat({3, 2}).exp(); }, uniform<2>({2, 3}, -1, 1, 25)));
  EXPECT_TRUE(check_grad([](const T<2>& x) { return x.repeat_dim(1, 3); }, uniform<2>({2, 3}, -1, 1, 26)));
}

TEST(GradCheckLayout, Flip) {
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.flip({0}); }, x234(27)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.flip({1, 2}).sin(); }, x234(28)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.flip({-1}).mul(x); }, x234(29)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.flip({0, 1, 2}).exp(); }, x234(30)));
}

// Device transfer and the Float -> Float cast are identities for the gradient.
TEST(GradCheckLayout, ToDeviceAndFloatCast) {
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.to_device(x.device()).sin(); }, x234(64)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.to_float().exp(); }, x234(65)));
}

// ---------------------------------------------------------------- slicing
TEST(GradCheckLayout, Slice) {
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.slice({{0, 1}}); }, x234(31)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.slice({{0, std::nullopt}, {1, 3}, {1, 4}}).exp(); }, x234(32)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.slice({{-1, std::nullopt}, {-2, std::nullopt}}).sin(); },
                         x234(33)));
  // Overlapping slices of the same tensor accumulate.
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.slice({{0, 2}, {0, 2}}).mul(x.slice({{0, 2}, {1, 3}})); },
                         x234(34)));
}

TEST(GradCheckLayout, Narrow) {
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.narrow(2, 1, 2); }, x234(35)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.narrow(1, -2, 2).exp(); }, x234(36)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.narrow(0, 1, 1).add(x.narrow(0, 0, 1)); }, x234(37)));
}

TEST(GradCheckLayout, SliceAssignBothInputs) {
  // The overwritten region of x gets no gradient; the values get the gradient of the region.
  EXPECT_TRUE(check_grad([](const T<3>& x, const T<3>& v) { return x.slice_assign({{0, 2}, {1, 3}, {0, 2}}, v); },
                         x234(38), uniform<3>({2, 2, 2}, -2, 2, 39)));
  EXPECT_TRUE(check_grad(
      [](const T<3>& x, const T<3>& v) { return x.slice_assign({{1, 2}, {-1, std::nullopt}}, v.exp()).sin(); },
      x234(40), uniform<3>({1, 1, 4}, -1, 1, 41)));
  // Values derived from x itself: gradient flows to x through both paths.
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.slice_assign({{0, 1}}, x.slice({{1, 2}}).mul(x.slice({{0, 1}}))); },
                         x234(42)));
}

// ---------------------------------------------------------------- joining and splitting
TEST(GradCheckLayout, Cat) {
  EXPECT_TRUE(check_grad([](const T<3>& a, const T<3>& b, const T<3>& c) { return T<3>::cat({a, b, c}, 1); },
                         uniform<3>({2, 1, 4}, -2, 2, 43), uniform<3>({2, 3, 4}, -2, 2, 44),
                         uniform<3>({2, 2, 4}, -2, 2, 45)));
  EXPECT_TRUE(check_grad([](const T<3>& a, const T<3>& b) { return T<3>::cat({a.exp(), b, a}, -1).sin(); },
                         uniform<3>({2, 3, 2}, -1, 1, 46), uniform<3>({2, 3, 3}, -1, 1, 47)));
  EXPECT_TRUE(check_grad([](const T<3>& a, const T<3>& b) { return T<3>::cat({a, b}, 0); },
                         uniform<3>({1, 3, 4}, -1, 1, 48), uniform<3>({2, 3, 4}, -1, 1, 49)));
  // A single input is returned as is.
  EXPECT_TRUE(check_grad([](const T<3>& a) { return T<3>::cat({a}, 1).exp(); }, x234(50)));
}

TEST(GradCheckLayout, Stack) {
  EXPECT_TRUE(check_grad([](const T<2>& a, const T<2>& b) { return stack<AD, 2, Float>({a, b}, 0); },
                         uniform<2>({3, 4}, -1, 1, 51), uniform<2>({3, 4}, -1, 1, 52)));
  EXPECT_TRUE(check_grad([](const T<2>& a, const T<2>& b) { return stack<AD, 2, Float>({a, b.exp(), a}, 2).sin(); },
                         uniform<2>({3, 4}, -1, 1, 53), uniform<2>({3, 4}, -1, 1, 54)));
  EXPECT_TRUE(check_grad([](const T<2>& a, const T<2>& b) { return stack<AD, 2, Float>({a, b}, -2); },
                         uniform<2>({3, 4}, -1, 1, 55), uniform<2>({3, 4}, -1, 1, 56)));
}

// Pieces of different sizes, each through a different function, flattened and joined back into one output.
T<1> join(const std::vector<T<3>>& pieces) {
  std::vector<T<1>> flat;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    auto p = pieces[i].flatten<1>(0, 2);
    flat.push_back(i % 2 ? p.exp() : p.mul_scalar(static_cast<double>(i + 1)));
  }
  return T<1>::cat(flat, 0);
}

TEST(GradCheckLayout, Split) {
  EXPECT_TRUE(check_grad([](const T<3>& x) { return join(x.split(3, 2)); }, uniform<3>({2, 3, 7}, -1, 1, 57)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return join(x.split(1, 0)); }, x234(58)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return join(x.split(2, 1)); }, x234(59)));
  // Only some pieces used: the rest of x gets a zero gradient.
  EXPECT_TRUE(check_grad([](const T<3>& x) { return x.split(2, 2)[1].sin(); }, x234(60)));
}

TEST(GradCheckLayout, Chunk) {
  EXPECT_TRUE(check_grad([](const T<3>& x) { return join(x.chunk(3, 2)); }, uniform<3>({2, 3, 7}, -1, 1, 61)));
  EXPECT_TRUE(check_grad([](const T<3>& x) { return join(x.chunk(2, 1)); }, x234(62)));
  EXPECT_TRUE(check_grad([](const T<3>& x) {
    auto c = x.chunk(2, 0);
    return c[0].mul(c[1]);
  }, x234(63)));
}

// ---------------------------------------------------------------- indexing
TEST(GradCheckIndexing, Gather) {
  // Repeated indices: the gradient of a gathered element accumulates.
  const auto idx1 = itensor<3>({0, 2, 2, 1, 1, 0, 0, 0, 2, 1, 2, 2, 0, 1, 2, 0}, {2, 2, 4});
  EXPECT_TRUE(check_grad([idx1](const T<3>& x) { return x.gather(1, idx1).exp(); }, x234(70)));
  const auto idx2 = itensor<3>({3, 3, 0, 1, 2, 2, 0, 0, 1, 3, 3, 3}, {2, 3, 2});
  EXPECT_TRUE(check_grad([idx2](const T<3>& x) { return x.gather(2, idx2); }, x234(71)));
  const auto idx0 = itensor<3>({1, 0, 1, 1, 0, 0, 1, 0}, {1, 2, 4});
  EXPECT_TRUE(check_grad([idx0](const T<3>& x) { return x.gather(0, idx0).sin(); }, x234(72)));
}

TEST(GradCheckIndexing, ScatterAddBothInputs) {
  const auto idx = itensor<3>({0, 2, 2, 1, 1, 0, 0, 0, 2, 1, 2, 2, 0, 1, 2, 0}, {2, 2, 4});
  EXPECT_TRUE(check_grad([idx](const T<3>& x, const T<3>& v) { return x.scatter_add(1, idx, v); }, x234(73),
                         uniform<3>({2, 2, 4}, -2, 2, 74)));
  EXPECT_TRUE(check_grad([idx](const T<3>& x, const T<3>& v) { return x.scatter_add(1, idx, v.exp()).sin(); },
                         x234(75), uniform<3>({2, 2, 4}, -1, 1, 76)));
  const auto idx2 = itensor<3>({3, 3, 0, 1, 2, 2, 0, 0, 1, 3, 3, 3}, {2, 3, 2});
  EXPECT_TRUE(check_grad([idx2](const T<3>& x, const T<3>& v) { return x.scatter_add(2, idx2, v).tanh(); }, x234(77),
                         uniform<3>({2, 3, 2}, -1, 1, 78)));
}

TEST(GradCheckIndexing, IndexSelect) {
  const auto idx = itensor<1>({2, 0, 2, 1, 2}, {5});
  EXPECT_TRUE(check_grad([idx](const T<3>& x) { return x.index_select(1, idx); }, x234(79)));
  EXPECT_TRUE(check_grad([idx](const T<3>& x) { return x.index_select(2, idx).exp(); }, x234(80)));
  const auto idx0 = itensor<1>({1, 1, 0}, {3});
  EXPECT_TRUE(check_grad([idx0](const T<3>& x) { return x.index_select(0, idx0).sin(); }, x234(81)));
}

TEST(GradCheckIndexing, SelectAssignBothInputs) {
  const auto idx = itensor<1>({2, 0, 2}, {3});
  EXPECT_TRUE(check_grad([idx](const T<3>& x, const T<3>& v) { return x.select_assign(1, idx, v); }, x234(82),
                         uniform<3>({2, 3, 4}, -2, 2, 83)));
  EXPECT_TRUE(check_grad([idx](const T<3>& x, const T<3>& v) { return x.select_assign(2, idx, v.exp()).sin(); },
                         x234(84), uniform<3>({2, 3, 3}, -1, 1, 85)));
  const auto idx0 = itensor<1>({1, 1}, {2});
  EXPECT_TRUE(check_grad([idx0](const T<3>& x, const T<3>& v) { return x.select_assign(0, idx0, v).tanh(); },
                         x234(86), uniform<3>({2, 3, 4}, -1, 1, 87)));
}

// ---------------------------------------------------------------- selection
TEST(GradCheckSelect, WhereBothBranches) {
  const auto m = btensor<3>({true, false, false, true, true, true, false, false, true, false, true, false,
                             false, false, true, true, false, true, true, false, false, true, false, true},
                            {2, 3, 4});
  EXPECT_TRUE(check_grad([m](const T<3>& a, const T<3>& b) { return where(m, a, b); }, x234(90), x234(91)));
  EXPECT_TRUE(check_grad([m](const T<3>& a, const T<3>& b) { return where(m, a.exp(), b.sin()).mul(a); }, x234(92),
                         x234(93)));
}

TEST(GradCheckSelect, WhereBroadcast) {
  // Branches broadcast against the mask and each other: gradients are summed back to the branch shapes.
  const auto m = btensor<3>({true, false, false, true, false, true, true, false, true, false, false, true}, {1, 3, 4});
  EXPECT_TRUE(check_grad([m](const T<3>& a, const T<3>& b) { return where(m, a, b); }, uniform<3>({2, 1, 4}, -2, 2, 94),
                         uniform<3>({2, 3, 1}, -2, 2, 95)));
  const auto m1 = btensor<3>({true, false, true}, {1, 3, 1});
  EXPECT_TRUE(check_grad([m1](const T<3>& a, const T<3>& b) { return where(m1, a, b).exp(); }, x234(96),
                         uniform<3>({1, 1, 4}, -2, 2, 97)));
}

TEST(GradCheckSelect, MaskWhereBothBranches) {
  const auto m = btensor<3>({true, false, false, true, true, true, false, false, true, false, true, false,
                             false, false, true, true, false, true, true, false, false, true, false, true},
                            {2, 3, 4});
  EXPECT_TRUE(check_grad([m](const T<3>& x, const T<3>& v) { return x.mask_where(m, v); }, x234(98), x234(99)));
  const auto mb = btensor<3>({true, false, true, false}, {1, 1, 4});
  EXPECT_TRUE(check_grad([mb](const T<3>& x, const T<3>& v) { return x.mask_where(mb, v).sin(); }, x234(100),
                         uniform<3>({2, 1, 4}, -2, 2, 101)));
}

TEST(GradCheckSelect, MaskFill) {
  const auto m = btensor<3>({true, false, false, true, true, true, false, false, true, false, true, false,
                             false, false, true, true, false, true, true, false, false, true, false, true},
                            {2, 3, 4});
  EXPECT_TRUE(check_grad([m](const T<3>& x) { return x.mask_fill(m, 3.5).exp(); }, x234(102)));
  const auto mb = btensor<3>({false, true, true}, {1, 3, 1});
  EXPECT_TRUE(check_grad([mb](const T<3>& x) { return x.mask_fill(mb, -1.0).mul(x); }, x234(103)));
}

// Typical composition: masked softmax attention-style scores.
TEST(GradCheckSelect, MaskedSoftmax) {
  const auto m = btensor<3>({false, false, true, true, false, false, false, true, false, false, false, false}, {1, 3, 4});
  EXPECT_TRUE(check_grad([m](const T<3>& x) { return x.mask_fill(m, -1e9).softmax(-1); }, x234(104)));
}

}  // namespace layout_grads
}  // namespace ember::gradcheck
