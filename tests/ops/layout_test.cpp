// Layout ops on every backend and on Float, Int and Bool tensors: reshape, flatten, squeeze/unsqueeze, permute,
// swap_dims/transpose, expand, repeat, flip, slice, narrow, slice_assign, cat, stack, split, chunk. Small cases are
// written out by hand; larger ones are compared with naive index loops below.
#include <algorithm>
#include <numeric>

#include "tests/support/naive_index.hpp"
#include "tests/support/test_backends.hpp"

namespace layout_cases {

using namespace ember;
using namespace ember::test;
using S = checks::SliceArg;

template <class B>
class LayoutTest : public ::testing::Test {};
TYPED_TEST_SUITE(LayoutTest, TestBackends, BackendNames);

std::vector<double> iota(int64_t n, double from = 0) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

// Host data for kind K: distinct values for Float/Int (with negatives), a 0/1 pattern for Bool.
template <class K>
std::vector<double> kind_data(int64_t n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = std::is_same_v<K, Bool> ? double(i % 3 == 0) : double(i - n / 2);
  return v;
}
template <class B, class K, std::size_t D>
Tensor<B, D, K> tensor_of(const std::vector<double>& v, std::array<int64_t, D> s) {
  return Tensor<B, D, K>::from_values(v, s);
}

// Runs f.template operator()<K>() for K = Float, Int, Bool.
template <class F>
void for_each_kind(F&& f) {
  f.template operator()<Float>();
  f.template operator()<Int>();
  f.template operator()<Bool>();
}

// ---------------------------------------------------------------- naive references on row-major host vectors

// out[m] = x[map(m)] over every index m of shape `out`.
template <class F>
std::vector<double> gather_host(const std::vector<double>& x, const Shape& in, const Shape& out, F map) {
  std::vector<double> r(static_cast<std::size_t>(out.num_elements()));
  for (int64_t i = 0; i < out.num_elements(); ++i) r[i] = x[ravel(map(unravel(i, out)), in)];
  return r;
}
Shape permuted(const Shape& s, const std::vector<std::size_t>& axes) {
  Shape o;
  for (auto a : axes) o.dims.push_back(s[a]);
  return o;
}
std::vector<double> naive_permute(const std::vector<double>& x, const Shape& s, const std::vector<std::size_t>& axes) {
  return gather_host(x, s, permuted(s, axes), [&](const std::vector<int64_t>& m) {
    std::vector<int64_t> n(m.size());
    for (std::size_t k = 0; k < m.size(); ++k) n[axes[k]] = m[k];
    return n;
  });
}

// ---------------------------------------------------------------- reshape, flatten, squeeze, unsqueeze

TYPED_TEST(LayoutTest, Reshape) {
  using B = TypeParam;
  auto x = make<B, 2>(iota(6), {2, 3});
  EXPECT_TRUE(matches(x.reshape(std::array<int64_t, 2>{3, 2}), Shape{3, 2}, iota(6), 0.0));
  EXPECT_TRUE(matches(x.reshape(std::array<int64_t, 1>{-1}), Shape{6}, iota(6), 0.0));
  EXPECT_TRUE(matches(x.reshape(std::array<int64_t, 3>{1, -1, 2}), Shape{1, 3, 2}, iota(6), 0.0));
  EXPECT_TRUE(matches(x.reshape(std::array<int64_t, 2>{-1, 1}), Shape{6, 1}, iota(6), 0.0));
  auto z = Tensor<B, 2>::zeros({0, 3});
  EXPECT_EQ(z.reshape(std::array<int64_t, 3>{3, 0, 5}).shape(), (Shape{3, 0, 5}));
  EXPECT_EQ(z.reshape(std::array<int64_t, 2>{-1, 3}).shape(), (Shape{0, 3}));
  for_each_kind([&]<class K>() {
    auto t = tensor_of<B, K, 2>(kind_data<K>(12), {3, 4});
    EXPECT_TRUE(matches(t.reshape(std::array<int64_t, 3>{2, 2, 3}), Shape{2, 2, 3}, kind_data<K>(12), 0.0));
  });
  EXPECT_THROW(x.reshape(std::array<int64_t, 2>{4, -1}), ShapeError);   // 6 is not a multiple of 4
  EXPECT_THROW(x.reshape(std::array<int64_t, 2>{-1, -1}), ShapeError);  // two -1
  EXPECT_THROW(x.reshape(std::array<int64_t, 1>{7}), ShapeError);
  EXPECT_THROW(x.reshape(std::array<int64_t, 2>{-2, -3}), ShapeError);  // negative dims
  EXPECT_THROW(z.reshape(std::array<int64_t, 2>{-1, 0}), ShapeError);   // -1 is ambiguous
}

TYPED_TEST(LayoutTest, Flatten) {
  using B = TypeParam;
  auto x = make<B, 3>(iota(24), {2, 3, 4});
  EXPECT_TRUE(matches(x.template flatten<2>(1, 2), Shape{2, 12}, iota(24), 0.0));
  EXPECT_TRUE(matches(x.template flatten<2>(0, 1), Shape{6, 4}, iota(24), 0.0));
  EXPECT_TRUE(matches(x.template flatten<1>(0, -1), Shape{24}, iota(24), 0.0));
  EXPECT_TRUE(matches(x.template flatten<3>(1, 1), Shape{2, 3, 4}, iota(24), 0.0));
  EXPECT_TRUE(matches(make_int<B, 3>({1, 2, 3, 4}, {2, 1, 2}).template flatten<2>(-2, -1), Shape{2, 2}, {1, 2, 3, 4},
                      0.0));
  EXPECT_THROW(x.template flatten<2>(2, 1), ShapeError);  // start after end
  EXPECT_THROW(x.template flatten<1>(0, 1), ShapeError);  // gives rank 2, not 1
  EXPECT_THROW(x.template flatten<2>(0, 3), IndexError);
}

TYPED_TEST(LayoutTest, SqueezeUnsqueeze) {
  using B = TypeParam;
  for_each_kind([&]<class K>() {
    const auto v = kind_data<K>(3);
    auto row = tensor_of<B, K, 2>(v, {1, 3});
    auto col = tensor_of<B, K, 2>(v, {3, 1});
    EXPECT_TRUE(matches(row.template squeeze<1>(0), Shape{3}, v, 0.0));
    EXPECT_TRUE(matches(row.template squeeze<1>(-2), Shape{3}, v, 0.0));
    EXPECT_TRUE(matches(col.template squeeze<1>(-1), Shape{3}, v, 0.0));
    EXPECT_THROW(row.template squeeze<1>(1), ShapeError);
    EXPECT_THROW(row.template squeeze<1>(2), IndexError);
    auto x = tensor_of<B, K, 2>(kind_data<K>(6), {2, 3});
    EXPECT_EQ(x.template unsqueeze<3>(0).shape(), (Shape{1, 2, 3}));
    EXPECT_EQ(x.template unsqueeze<3>(1).shape(), (Shape{2, 1, 3}));
    EXPECT_EQ(x.template unsqueeze<3>(2).shape(), (Shape{2, 3, 1}));
    EXPECT_EQ(x.template unsqueeze<3>(-1).shape(), (Shape{2, 3, 1}));
    EXPECT_EQ(x.template unsqueeze<3>(-3).shape(), (Shape{1, 2, 3}));
    EXPECT_TRUE(matches(x.template unsqueeze<3>(1), Shape{2, 1, 3}, kind_data<K>(6), 0.0));
    EXPECT_THROW(x.template unsqueeze<3>(3), IndexError);
    EXPECT_THROW(x.template unsqueeze<3>(-4), IndexError);
  });
}

// ---------------------------------------------------------------- permute, swap_dims, transpose

TYPED_TEST(LayoutTest, PermuteSmallByHand) {
  using B = TypeParam;
  auto x = make<B, 2>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(matches(x.permute({1, 0}), Shape{3, 2}, {1, 4, 2, 5, 3, 6}, 0.0));
  EXPECT_TRUE(matches(x.permute({0, 1}), Shape{2, 3}, {1, 2, 3, 4, 5, 6}, 0.0));
  EXPECT_TRUE(matches(x.permute({-1, -2}), Shape{3, 2}, {1, 4, 2, 5, 3, 6}, 0.0));
  // [2, 2, 2] with axes (2, 0, 1): out[i][j][k] = x[j][k][i].
  auto y = make_int<B, 3>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  EXPECT_TRUE(matches(y.permute({2, 0, 1}), Shape{2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7}, 0.0));
  auto b = make_bool<B, 2>({true, false, false, false, true, true}, {2, 3});
  EXPECT_TRUE(matches(b.permute({1, 0}), Shape{3, 2}, {1, 0, 0, 1, 0, 1}, 0.0));
}

TYPED_TEST(LayoutTest, PermuteEveryAxisOrderRank3And4) {
  using B = TypeParam;
  for_each_kind([&]<class K>() {
    for (const Shape& s : {Shape{2, 3, 4}, Shape{3, 12, 10}, Shape{1, 9, 16}, Shape{9, 1, 11}}) {
      const auto v = kind_data<K>(s.num_elements());
      auto x = tensor_of<B, K, 3>(v, {s[0], s[1], s[2]});
      std::vector<std::size_t> axes{0, 1, 2};
      do {
        auto y = x.permute({int64_t(axes[0]), int64_t(axes[1]), int64_t(axes[2])});
        ASSERT_TRUE(matches(y, permuted(s, axes), naive_permute(v, s, axes), 0.0))
            << s.to_string() << " axes " << axes[0] << axes[1] << axes[2];
      } while (std::next_permutation(axes.begin(), axes.end()));
    }
    const Shape s{2, 3, 1, 4};
    const auto v = kind_data<K>(24);
    auto x = tensor_of<B, K, 4>(v, {2, 3, 1, 4});
    std::vector<std::size_t> axes{0, 1, 2, 3};
    do {
      auto y = x.permute({int64_t(axes[0]), int64_t(axes[1]), int64_t(axes[2]), int64_t(axes[3])});
      ASSERT_TRUE(matches(y, permuted(s, axes), naive_permute(v, s, axes), 0.0));
    } while (std::next_permutation(axes.begin(), axes.end()));
  });
}

TYPED_TEST(LayoutTest, LargeTransposeUsesTiledPathCorrectly) {
  using B = TypeParam;
  for (const Shape& s : {Shape{16, 9}, Shape{33, 70}, Shape{64, 64}}) {
    const auto v = iota(s.num_elements());
    auto x = make<B, 2>(v, {s[0], s[1]});
    EXPECT_TRUE(matches(x.transpose(), Shape{s[1], s[0]}, naive_permute(v, s, {1, 0}), 0.0)) << s.to_string();
  }
  const Shape s{2, 40, 3, 36};
  const auto v = iota(s.num_elements());
  auto x = make<B, 4>(v, {2, 40, 3, 36});
  EXPECT_TRUE(matches(x.permute({0, 3, 2, 1}), permuted(s, {0, 3, 2, 1}), naive_permute(v, s, {0, 3, 2, 1}), 0.0));
  EXPECT_TRUE(matches(x.permute({3, 1, 0, 2}), permuted(s, {3, 1, 0, 2}), naive_permute(v, s, {3, 1, 0, 2}), 0.0));
}

TYPED_TEST(LayoutTest, SwapDimsAndTranspose) {
  using B = TypeParam;
  auto x = make<B, 2>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(matches(x.transpose(), Shape{3, 2}, {1, 4, 2, 5, 3, 6}, 0.0));
  EXPECT_TRUE(matches(x.transpose().transpose(), Shape{2, 3}, {1, 2, 3, 4, 5, 6}, 0.0));
  EXPECT_TRUE(matches(x.swap_dims(0, 1), Shape{3, 2}, {1, 4, 2, 5, 3, 6}, 0.0));
  EXPECT_TRUE(matches(x.swap_dims(1, 1), Shape{2, 3}, {1, 2, 3, 4, 5, 6}, 0.0));
  const Shape s{2, 3, 4};
  for_each_kind([&]<class K>() {
    const auto v = kind_data<K>(24);
    auto t = tensor_of<B, K, 3>(v, {2, 3, 4});
    EXPECT_TRUE(matches(t.transpose(), Shape{2, 4, 3}, naive_permute(v, s, {0, 2, 1}), 0.0));
    EXPECT_TRUE(matches(t.swap_dims(0, 2), Shape{4, 3, 2}, naive_permute(v, s, {2, 1, 0}), 0.0));
    EXPECT_TRUE(matches(t.swap_dims(-1, 0), Shape{4, 3, 2}, naive_permute(v, s, {2, 1, 0}), 0.0));
    EXPECT_TRUE(matches(t.swap_dims(1, 0), Shape{3, 2, 4}, naive_permute(v, s, {1, 0, 2}), 0.0));
  });
  EXPECT_THROW(x.swap_dims(0, 2), IndexError);
}

// ---------------------------------------------------------------- expand, repeat

TYPED_TEST(LayoutTest, Expand) {
  using B = TypeParam;
  auto r = make<B, 1>({1, 2, 3}, {3});
  EXPECT_TRUE(matches(r.template expand<2>({2, 3}), Shape{2, 3}, {1, 2, 3, 1, 2, 3}, 0.0));
  EXPECT_TRUE(matches(r.template expand<3>({2, 1, 3}), Shape{2, 1, 3}, {1, 2, 3, 1, 2, 3}, 0.0));
  EXPECT_TRUE(matches(r.template expand<1>({-1}), Shape{3}, {1, 2, 3}, 0.0));
  auto c = make<B, 2>({1, 2}, {2, 1});
  EXPECT_TRUE(matches(c.template expand<2>({2, 3}), Shape{2, 3}, {1, 1, 1, 2, 2, 2}, 0.0));
  EXPECT_TRUE(matches(c.template expand<2>({-1, 4}), Shape{2, 4}, {1, 1, 1, 1, 2, 2, 2, 2}, 0.0));
  EXPECT_TRUE(matches(c.template expand<3>({2, -1, 2}), Shape{2, 2, 2}, {1, 1, 2, 2, 1, 1, 2, 2}, 0.0));
  EXPECT_EQ((make<B, 2>({1, 2, 3}, {1, 3}).template expand<2>({0, 3}).shape()), (Shape{0, 3}));  // 1 -> 0 is allowed
  for_each_kind([&]<class K>() {
    const Shape s{4, 1, 5}, to{3, 4, 6, 5};
    const auto v = kind_data<K>(20);
    auto x = tensor_of<B, K, 3>(v, {4, 1, 5});
    auto want = gather_host(v, s, to, [](const std::vector<int64_t>& m) { return std::vector<int64_t>{m[1], 0, m[3]}; });
    EXPECT_TRUE(matches(x.template expand<4>({3, -1, 6, -1}), to, want, 0.0));
  });
  EXPECT_THROW((make<B, 2>(iota(6), {2, 3}).template expand<2>({4, 3})), ShapeError);
  EXPECT_THROW(r.template expand<2>({-1, 3}), ShapeError);  // -1 for a new leading dim
  EXPECT_THROW(c.template expand<2>({2, -2}), ShapeError);  // negative size
  EXPECT_THROW(c.template expand<2>({-3, 1}), ShapeError);
}

TYPED_TEST(LayoutTest, RepeatLikeTorch) {
  using B = TypeParam;
  EXPECT_TRUE(matches(make<B, 1>({1, 2, 3}, {3}).repeat({2}), Shape{6}, {1, 2, 3, 1, 2, 3}, 0.0));
  auto x = make<B, 2>({1, 2, 3, 4}, {2, 2});
  // torch.tensor([[1, 2], [3, 4]]).repeat(2, 3)
  EXPECT_TRUE(matches(x.repeat({2, 3}), Shape{4, 6},
                      {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}, 0.0));
  EXPECT_TRUE(matches(x.repeat({1, 1}), Shape{2, 2}, {1, 2, 3, 4}, 0.0));
  EXPECT_TRUE(matches(x.repeat({1, 2}), Shape{2, 4}, {1, 2, 1, 2, 3, 4, 3, 4}, 0.0));
  EXPECT_TRUE(matches(x.repeat_dim(0, 3), Shape{6, 2}, {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}, 0.0));
  EXPECT_TRUE(matches(x.repeat_dim(-1, 2), Shape{2, 4}, {1, 2, 1, 2, 3, 4, 3, 4}, 0.0));
  EXPECT_EQ(x.repeat({0, 2}).shape(), (Shape{0, 4}));
  EXPECT_EQ(x.repeat_dim(1, 0).shape(), (Shape{2, 0}));
  for_each_kind([&]<class K>() {
    const Shape s{2, 1, 3}, to{4, 3, 3};
    const auto v = kind_data<K>(6);
    auto want = gather_host(v, s, to, [](const std::vector<int64_t>& m) {
      return std::vector<int64_t>{m[0] % 2, 0, m[2] % 3};
    });
    EXPECT_TRUE(matches(tensor_of<B, K, 3>(v, {2, 1, 3}).repeat({2, 3, 1}), to, want, 0.0));
  });
  EXPECT_THROW(x.repeat({-1, 1}), ArgumentError);
  EXPECT_THROW(x.repeat_dim(0, -2), ArgumentError);
  EXPECT_THROW(x.repeat_dim(2, 2), IndexError);
}

// ---------------------------------------------------------------- flip

TYPED_TEST(LayoutTest, Flip) {
  using B = TypeParam;
  auto x = make<B, 2>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(matches(x.flip({0}), Shape{2, 3}, {4, 5, 6, 1, 2, 3}, 0.0));
  EXPECT_TRUE(matches(x.flip({1}), Shape{2, 3}, {3, 2, 1, 6, 5, 4}, 0.0));
  EXPECT_TRUE(matches(x.flip({-1}), Shape{2, 3}, {3, 2, 1, 6, 5, 4}, 0.0));
  EXPECT_TRUE(matches(x.flip({0, 1}), Shape{2, 3}, {6, 5, 4, 3, 2, 1}, 0.0));
  EXPECT_TRUE(matches(x.flip({}), Shape{2, 3}, {1, 2, 3, 4, 5, 6}, 0.0));
  EXPECT_TRUE(matches(make<B, 2>({1, 2, 3}, {1, 3}).flip({0}), Shape{1, 3}, {1, 2, 3}, 0.0));
  EXPECT_EQ((Tensor<B, 2>::zeros({0, 3}).flip({0, 1}).shape()), (Shape{0, 3}));
  for_each_kind([&]<class K>() {
    const Shape s{3, 2, 4};
    const auto v = kind_data<K>(24);
    auto t = tensor_of<B, K, 3>(v, {3, 2, 4});
    auto want = gather_host(v, s, s, [](const std::vector<int64_t>& m) {
      return std::vector<int64_t>{2 - m[0], m[1], 3 - m[2]};
    });
    EXPECT_TRUE(matches(t.flip({0, 2}), s, want, 0.0));
    EXPECT_TRUE(matches(t.flip({2, -3}), s, want, 0.0));
  });
  EXPECT_THROW(x.flip({2}), IndexError);
}

// ---------------------------------------------------------------- slice, narrow, slice_assign

TYPED_TEST(LayoutTest, SlicePythonRanges) {
  using B = TypeParam;
  auto x = make<B, 2>(iota(12), {3, 4});  // [[0..3], [4..7], [8..11]]
  EXPECT_TRUE(matches(x.slice({S{1, 3}}), Shape{2, 4}, iota(8, 4), 0.0));  // fewer ranges than rank
  EXPECT_TRUE(matches(x.slice({S{0}, S{-2}}), Shape{3, 2}, {2, 3, 6, 7, 10, 11}, 0.0));
  EXPECT_TRUE(matches(x.slice({S{-3, -1}, S{1, 3}}), Shape{2, 2}, {1, 2, 5, 6}, 0.0));
  EXPECT_TRUE(matches(x.slice({S{0, 3}, S{0, 4}}), Shape{3, 4}, iota(12), 0.0));
  EXPECT_TRUE(matches(x.slice({S{2}, S{3}}), Shape{1, 1}, {11}, 0.0));
  // Out-of-range bounds clamp.
  EXPECT_TRUE(matches(x.slice({S{1, 100}}), Shape{2, 4}, iota(8, 4), 0.0));
  EXPECT_TRUE(matches(x.slice({S{-100, 1}, S{-100, -3}}), Shape{1, 1}, {0}, 0.0));
  // Empty results.
  EXPECT_EQ(x.slice({S{2, 1}}).shape(), (Shape{0, 4}));
  EXPECT_EQ(x.slice({S{5, 10}}).shape(), (Shape{0, 4}));
  EXPECT_EQ(x.slice({S{0}, S{4}}).shape(), (Shape{3, 0}));
  EXPECT_EQ(x.slice({S{-1, -2}}).shape(), (Shape{0, 4}));
  EXPECT_TRUE(values(x.slice({S{0}, S{2, 2}})).empty());
  for_each_kind([&]<class K>() {
    const Shape s{2, 3, 4};
    const auto v = kind_data<K>(24);
    auto t = tensor_of<B, K, 3>(v, {2, 3, 4});
    auto want = gather_host(v, s, Shape{1, 2, 3}, [](const std::vector<int64_t>& m) {
      return std::vector<int64_t>{m[0] + 1, m[1], m[2] + 1};
    });
    EXPECT_TRUE(matches(t.slice({S{1, 2}, S{0, 2}, S{1}}), Shape{1, 2, 3}, want, 0.0));
    EXPECT_TRUE(matches(t.slice({S{-1}, S{-3, -1}, S{-3, 100}}), Shape{1, 2, 3}, want, 0.0));
  });
  EXPECT_THROW(x.slice({S{0}, S{0}, S{0}}), IndexError);
}

TYPED_TEST(LayoutTest, Narrow) {
  using B = TypeParam;
  for_each_kind([&]<class K>() {
    const auto v = kind_data<K>(12);
    auto x = tensor_of<B, K, 2>(v, {3, 4});
    auto pick = [&](std::vector<int> idx) {
      std::vector<double> r;
      for (int i : idx) r.push_back(v[i]);
      return r;
    };
    EXPECT_TRUE(matches(x.narrow(1, 1, 2), Shape{3, 2}, pick({1, 2, 5, 6, 9, 10}), 0.0));
    EXPECT_TRUE(matches(x.narrow(0, -2, 2), Shape{2, 4}, pick({4, 5, 6, 7, 8, 9, 10, 11}), 0.0));
    EXPECT_TRUE(matches(x.narrow(-1, 3, 1), Shape{3, 1}, pick({3, 7, 11}), 0.0));
    EXPECT_EQ(x.narrow(0, 3, 0).shape(), (Shape{0, 4}));
    EXPECT_THROW(x.narrow(0, 2, 2), IndexError);
    EXPECT_THROW(x.narrow(1, 0, -1), IndexError);
    EXPECT_THROW(x.narrow(0, -4, 1), IndexError);
    EXPECT_THROW(x.narrow(2, 0, 1), IndexError);
  });
}

TYPED_TEST(LayoutTest, SliceAssign) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({3, 4});
  auto y = x.slice_assign({S{1, 3}, S{1, 3}}, make<B, 2>({1, 2, 3, 4}, {2, 2}));
  EXPECT_TRUE(matches(y, Shape{3, 4}, {0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0}, 0.0));
  EXPECT_TRUE(matches(x, Shape{3, 4}, std::vector<double>(12, 0.0), 0.0));  // the input is untouched
  EXPECT_TRUE(matches(x.slice_assign({S{-1}, S{-2}}, make<B, 2>({7, 8}, {1, 2})), Shape{3, 4},
                      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 8}, 0.0));
  EXPECT_TRUE(matches(x.slice_assign({S{0, 1}}, make<B, 2>({1, 2, 3, 4}, {1, 4})), Shape{3, 4},
                      {1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(x.slice_assign({S{0}, S{1, 100}}, make<B, 2>(iota(9, 1), {3, 3})), Shape{3, 4},
                      {0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9}, 0.0));
  // An empty slice assigns nothing.
  EXPECT_TRUE(matches(x.slice_assign({S{2, 1}}, Tensor<B, 2>::zeros({0, 4})), Shape{3, 4},
                      std::vector<double>(12, 0.0), 0.0));
  for_each_kind([&]<class K>() {
    const Shape s{2, 3, 4};
    const auto base = kind_data<K>(24);
    std::vector<double> vals(6);
    for (int i = 0; i < 6; ++i) vals[i] = std::is_same_v<K, Bool> ? double(i % 2) : 100.0 + i;
    auto t = tensor_of<B, K, 3>(base, {2, 3, 4});
    auto want = base;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) want[ravel({i, j, 2}, s)] = vals[i * 3 + j];
    auto out = t.slice_assign({S{0}, S{0}, S{2, 3}}, tensor_of<B, K, 3>(vals, {2, 3, 1}));
    EXPECT_TRUE(matches(out, s, want, 0.0));
    EXPECT_TRUE(matches(t, s, base, 0.0));
  });
}

// ---------------------------------------------------------------- cat, stack, split, chunk

TYPED_TEST(LayoutTest, Cat) {
  using B = TypeParam;
  using T2 = Tensor<B, 2>;
  auto a = make<B, 2>({1, 2, 3, 4}, {2, 2});
  auto b = make<B, 2>({5, 6}, {1, 2});
  EXPECT_TRUE(matches(T2::cat({a, b}, 0), Shape{3, 2}, {1, 2, 3, 4, 5, 6}, 0.0));
  EXPECT_TRUE(matches(T2::cat({b, a, b}, 0), Shape{4, 2}, {5, 6, 1, 2, 3, 4, 5, 6}, 0.0));
  auto c = make<B, 2>({9, 8}, {2, 1});
  EXPECT_TRUE(matches(T2::cat({a, c}, 1), Shape{2, 3}, {1, 2, 9, 3, 4, 8}, 0.0));
  EXPECT_TRUE(matches(T2::cat({c, a}, -1), Shape{2, 3}, {9, 1, 2, 8, 3, 4}, 0.0));
  EXPECT_TRUE(matches(T2::cat({a}, 0), Shape{2, 2}, {1, 2, 3, 4}, 0.0));
  // Zero-size inputs contribute nothing.
  EXPECT_TRUE(matches(T2::cat({T2::zeros({2, 0}), a, T2::zeros({2, 0})}, 1), Shape{2, 2}, {1, 2, 3, 4}, 0.0));
  EXPECT_TRUE(matches(T2::cat({T2::zeros({0, 2}), b}, 0), Shape{1, 2}, {5, 6}, 0.0));
  EXPECT_EQ(T2::cat({T2::zeros({0, 3}), T2::zeros({0, 3})}, 0).shape(), (Shape{0, 3}));
  EXPECT_EQ(T2::cat({T2::zeros({0, 3}), T2::zeros({0, 2})}, 1).shape(), (Shape{0, 5}));
  for_each_kind([&]<class K>() {
    using T3 = Tensor<B, 3, K>;
    const auto v1 = kind_data<K>(12), v2 = kind_data<K>(8);
    auto x1 = tensor_of<B, K, 3>(v1, {2, 3, 2});
    auto x2 = tensor_of<B, K, 3>(v2, {2, 2, 2});
    std::vector<double> want;  // per outer row: 3*2 of x1 then 2*2 of x2
    for (int o = 0; o < 2; ++o) {
      want.insert(want.end(), v1.begin() + o * 6, v1.begin() + o * 6 + 6);
      want.insert(want.end(), v2.begin() + o * 4, v2.begin() + o * 4 + 4);
    }
    EXPECT_TRUE(matches(T3::cat({x1, x2}, 1), Shape{2, 5, 2}, want, 0.0));
    std::vector<double> want0 = v1;
    want0.insert(want0.end(), v1.begin(), v1.end());
    EXPECT_TRUE(matches(T3::cat({x1, x1}, 0), Shape{4, 3, 2}, want0, 0.0));
  });
}

TYPED_TEST(LayoutTest, Stack) {
  using B = TypeParam;
  for_each_kind([&]<class K>() {
    using T1 = Tensor<B, 1, K>;
    const auto v = kind_data<K>(6);
    std::vector<T1> xs{tensor_of<B, K, 1>({v[0], v[1]}, {2}), tensor_of<B, K, 1>({v[2], v[3]}, {2}),
                       tensor_of<B, K, 1>({v[4], v[5]}, {2})};
    EXPECT_TRUE(matches(stack(xs, 0), Shape{3, 2}, v, 0.0));
    EXPECT_TRUE(matches(stack(xs, 1), Shape{2, 3}, {v[0], v[2], v[4], v[1], v[3], v[5]}, 0.0));
    EXPECT_TRUE(matches(stack(xs, -1), Shape{2, 3}, {v[0], v[2], v[4], v[1], v[3], v[5]}, 0.0));
    EXPECT_TRUE(matches(stack(std::vector<T1>{xs[1]}, 0), Shape{1, 2}, {v[2], v[3]}, 0.0));
  });
  auto a = make<B, 2>({1, 2, 3, 4}, {2, 2});
  auto b = make<B, 2>({5, 6, 7, 8}, {2, 2});
  EXPECT_TRUE(matches(stack(std::vector{a, b}, 1), Shape{2, 2, 2}, {1, 2, 5, 6, 3, 4, 7, 8}, 0.0));
  EXPECT_TRUE(matches(stack(std::vector{a, b}, 2), Shape{2, 2, 2}, {1, 5, 2, 6, 3, 7, 4, 8}, 0.0));
  EXPECT_THROW(stack(std::vector{a, make<B, 2>({1, 2}, {1, 2})}, 0), ShapeError);
  EXPECT_THROW(stack(std::vector<Tensor<B, 2>>{}, 0), ArgumentError);
}

TYPED_TEST(LayoutTest, SplitAndChunk) {
  using B = TypeParam;
  auto sizes = [](const auto& parts, std::size_t d) {
    std::vector<int64_t> r;
    for (auto& p : parts) r.push_back(p.shape()[d]);
    return r;
  };
  for_each_kind([&]<class K>() {
    const auto v = kind_data<K>(5);
    auto x = tensor_of<B, K, 1>(v, {5});
    auto parts = x.split(2, 0);
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_TRUE(matches(parts[0], Shape{2}, {v[0], v[1]}, 0.0));
    EXPECT_TRUE(matches(parts[1], Shape{2}, {v[2], v[3]}, 0.0));
    EXPECT_TRUE(matches(parts[2], Shape{1}, {v[4]}, 0.0));
    EXPECT_EQ(sizes(x.split(5, 0), 0), (std::vector<int64_t>{5}));
    EXPECT_EQ(sizes(x.split(10, 0), 0), (std::vector<int64_t>{5}));
    EXPECT_EQ(sizes(x.split(1, -1), 0), (std::vector<int64_t>{1, 1, 1, 1, 1}));
    // torch.chunk: pieces of ceil(n / chunks), so possibly fewer than `chunks`.
    EXPECT_EQ(sizes(x.chunk(2, 0), 0), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(sizes(x.chunk(3, 0), 0), (std::vector<int64_t>{2, 2, 1}));
    EXPECT_EQ(sizes(x.chunk(5, 0), 0), (std::vector<int64_t>{1, 1, 1, 1, 1}));
    EXPECT_EQ(sizes(x.chunk(10, 0), 0), (std::vector<int64_t>{1, 1, 1, 1, 1}));
    auto c = x.chunk(2, 0);
    EXPECT_TRUE(matches(c[1], Shape{2}, {v[3], v[4]}, 0.0));
    EXPECT_EQ(sizes(tensor_of<B, K, 1>(kind_data<K>(6), {6}).chunk(4, 0), 0), (std::vector<int64_t>{2, 2, 2}));
  });
  auto m = make<B, 2>(iota(10), {2, 5});
  auto cols = m.split(2, 1);
  ASSERT_EQ(cols.size(), 3u);
  EXPECT_TRUE(matches(cols[0], Shape{2, 2}, {0, 1, 5, 6}, 0.0));
  EXPECT_TRUE(matches(cols[1], Shape{2, 2}, {2, 3, 7, 8}, 0.0));
  EXPECT_TRUE(matches(cols[2], Shape{2, 1}, {4, 9}, 0.0));
  auto rows = m.chunk(2, 0);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(matches(rows[1], Shape{1, 5}, {5, 6, 7, 8, 9}, 0.0));
  // The pieces cat back to the original.
  EXPECT_TRUE(matches(Tensor<B, 2>::cat(cols, 1), Shape{2, 5}, iota(10), 0.0));
  EXPECT_THROW(m.split(0, 1), ArgumentError);
  EXPECT_THROW(m.split(-1, 1), ArgumentError);
  EXPECT_THROW(m.split(2, 2), IndexError);
  EXPECT_THROW(m.chunk(0, 0), ArgumentError);
  EXPECT_THROW(m.chunk(2, -3), IndexError);
}

}  // namespace layout_cases
