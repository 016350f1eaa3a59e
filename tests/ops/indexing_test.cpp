// Indexing ops on every backend, Float and Int: gather, scatter_add, index_select, select_assign (index_add).
// Small cases by hand; larger ones (ranks 3, every dim, duplicates, the parallel paths) against naive loops.
// Index values out of range or negative raise IndexError naming the op.
#include <string>

#include "tests/support/naive_index.hpp"
#include "tests/support/test_backends.hpp"

namespace indexing_cases {

using namespace ember;
using namespace ember::test;

template <class B>
class IndexingTest : public ::testing::Test {};
TYPED_TEST_SUITE(IndexingTest, TestBackends, BackendNames);

template <class F>
void for_float_and_int(F&& f) {
  f.template operator()<Float>();
  f.template operator()<Int>();
}

template <class B, class K, std::size_t D>
Tensor<B, D, K> tensor_of(const std::vector<double>& v, std::array<int64_t, D> s) {
  return Tensor<B, D, K>::from_values(v, s);
}

std::array<int64_t, 3> arr3(const Shape& s) { return {s[0], s[1], s[2]}; }

// Deterministic data: distinct values with negatives (exact in every element type).
std::vector<double> data(int64_t n, int64_t salt = 0) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = double((i * 37 + salt * 11) % 29 - 14);
  return v;
}
// Index values in [0, size), with repeats.
std::vector<int64_t> index_data(int64_t n, int64_t size, int64_t salt = 0) {
  std::vector<int64_t> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = (i * 7 + salt * 3 + 1) % size;
  return v;
}

// Naive references over row-major host vectors.
std::vector<double> naive_gather(const std::vector<double>& x, const Shape& xs, std::size_t d,
                                 const std::vector<int64_t>& idx, const Shape& is) {
  std::vector<double> out(idx.size());
  for (std::size_t i = 0; i < idx.size(); ++i) {
    auto m = unravel(static_cast<int64_t>(i), is);
    m[d] = idx[i];
    out[i] = x[ravel(m, xs)];
  }
  return out;
}
std::vector<double> naive_scatter_add(std::vector<double> x, const Shape& xs, std::size_t d,
                                      const std::vector<int64_t>& idx, const Shape& is, const std::vector<double>& v) {
  for (std::size_t i = 0; i < idx.size(); ++i) {
    auto m = unravel(static_cast<int64_t>(i), is);
    m[d] = idx[i];
    x[ravel(m, xs)] += v[i];
  }
  return x;
}
std::vector<double> naive_index_select(const std::vector<double>& x, const Shape& xs, std::size_t d,
                                       const std::vector<int64_t>& idx) {
  Shape os = xs;
  os[d] = static_cast<int64_t>(idx.size());
  std::vector<double> out(static_cast<std::size_t>(os.num_elements()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto m = unravel(static_cast<int64_t>(i), os);
    m[d] = idx[m[d]];
    out[i] = x[ravel(m, xs)];
  }
  return out;
}
std::vector<double> naive_index_add(std::vector<double> x, const Shape& xs, std::size_t d,
                                    const std::vector<int64_t>& idx, const std::vector<double>& v) {
  Shape vs = xs;
  vs[d] = static_cast<int64_t>(idx.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto m = unravel(static_cast<int64_t>(i), vs);
    m[d] = idx[m[d]];
    x[ravel(m, xs)] += v[i];
  }
  return x;
}

// Runs f, which must throw IndexError whose message holds every string in `parts`.
template <class F>
::testing::AssertionResult index_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
  } catch (const IndexError& e) {
    const std::string m = e.what();
    for (auto& p : parts)
      if (m.find(p) == std::string::npos) return ::testing::AssertionFailure() << "'" << m << "' lacks '" << p << "'";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "wrong exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "no exception";
}

// ---------------------------------------------------------------- gather

TYPED_TEST(IndexingTest, GatherByHand) {
  using B = TypeParam;
  for_float_and_int([&]<class K>() {
    auto x = tensor_of<B, K, 2>({1, 2, 3, 4, 5, 6}, {2, 3});
    EXPECT_TRUE(matches(x.gather(1, make_int<B, 2>({2, 0, 1, 1}, {2, 2})), Shape{2, 2}, {3, 1, 5, 5}, 0.0));
    EXPECT_TRUE(matches(x.gather(0, make_int<B, 2>({1, 0, 1}, {1, 3})), Shape{1, 3}, {4, 2, 6}, 0.0));
    EXPECT_TRUE(matches(x.gather(-1, make_int<B, 2>({0, 2}, {2, 1})), Shape{2, 1}, {1, 6}, 0.0));
    // Longer than x along dim 0 (repeats), as torch.gather allows.
    EXPECT_TRUE(matches(x.gather(0, make_int<B, 2>({1, 1, 0, 0, 0, 1, 1, 0, 1}, {3, 3})), Shape{3, 3},
                        {4, 5, 3, 1, 2, 6, 4, 2, 6}, 0.0));
    // Smaller than x in the other dim: out[i][j] = x[i][idx[i][j]] for i < 2 of 3 rows.
    auto y = tensor_of<B, K, 2>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
    EXPECT_TRUE(matches(y.gather(1, make_int<B, 2>({3, 0, 1, 1}, {2, 2})), Shape{2, 2}, {3, 0, 5, 5}, 0.0));
    EXPECT_EQ(x.gather(1, Tensor<B, 2, Int>::zeros({2, 0})).shape(), (Shape{2, 0}));
  });
}

TYPED_TEST(IndexingTest, GatherRank3EveryDimAgainstLoop) {
  using B = TypeParam;
  for_float_and_int([&]<class K>() {
    const Shape xs{3, 4, 5};
    const auto xv = data(xs.num_elements());
    auto x = tensor_of<B, K, 3>(xv, arr3(xs));
    const Shape idx_shapes[] = {{6, 3, 4}, {2, 6, 5}, {3, 2, 7}};
    for (std::size_t d = 0; d < 3; ++d) {
      const Shape is = idx_shapes[d];
      const auto iv = index_data(is.num_elements(), xs[d], static_cast<int64_t>(d));
      auto out = x.gather(static_cast<int64_t>(d), Tensor<B, 3, Int>::from_values(iv, arr3(is)));
      EXPECT_TRUE(matches(out, is, naive_gather(xv, xs, d, iv, is), 0.0)) << "dim " << d;
    }
  });
}

// ---------------------------------------------------------------- scatter_add

TYPED_TEST(IndexingTest, ScatterAddByHandDuplicatesAccumulate) {
  using B = TypeParam;
  for_float_and_int([&]<class K>() {
    using T2 = Tensor<B, 2, K>;
    auto v = tensor_of<B, K, 2>({1, 2, 3, 4, 5, 6}, {2, 3});
    EXPECT_TRUE(matches(T2::zeros({2, 3}).scatter_add(1, make_int<B, 2>({0, 0, 2, 1, 1, 1}, {2, 3}), v), Shape{2, 3},
                        {3, 0, 3, 0, 15, 0}, 0.0));
    auto ones = T2::ones({2, 3});
    EXPECT_TRUE(matches(ones.scatter_add(0, make_int<B, 2>({1, 0, 1, 1, 1, 0}, {2, 3}), v), Shape{2, 3},
                        {1, 3, 7, 6, 6, 4}, 0.0));
    EXPECT_TRUE(matches(ones, Shape{2, 3}, {1, 1, 1, 1, 1, 1}, 0.0));  // the input is untouched
    // Index smaller than x: only rows 0 and 1 are touched.
    EXPECT_TRUE(matches(T2::zeros({3, 4}).scatter_add(-1, make_int<B, 2>({3, 3, 0, 1}, {2, 2}),
                                                      tensor_of<B, K, 2>({1, 2, 3, 4}, {2, 2})),
                        Shape{3, 4}, {0, 0, 0, 3, 3, 4, 0, 0, 0, 0, 0, 0}, 0.0));
    // Many duplicates into four slots.
    std::vector<int64_t> idx(1000);
    for (int i = 0; i < 1000; ++i) idx[i] = i % 4;
    EXPECT_TRUE(matches(T2::zeros({1, 4}).scatter_add(1, make_int<B, 2>(idx, {1, 1000}), T2::ones({1, 1000})),
                        Shape{1, 4}, {250, 250, 250, 250}, 0.0));
    // Empty indices: a copy.
    EXPECT_TRUE(matches(ones.scatter_add(1, Tensor<B, 2, Int>::zeros({2, 0}), T2::zeros({2, 0})), Shape{2, 3},
                        {1, 1, 1, 1, 1, 1}, 0.0));
  });
}

TYPED_TEST(IndexingTest, ScatterAddRank3AndParallelAgainstLoop) {
  using B = TypeParam;
  for_float_and_int([&]<class K>() {
    const Shape xs{3, 4, 5};
    const auto xv = data(xs.num_elements(), 1);
    auto x = tensor_of<B, K, 3>(xv, arr3(xs));
    const Shape idx_shapes[] = {{7, 3, 4}, {2, 9, 5}, {3, 2, 8}};
    for (std::size_t d = 0; d < 3; ++d) {
      const Shape is = idx_shapes[d];
      const auto iv = index_data(is.num_elements(), xs[d], static_cast<int64_t>(d));
      const auto vv = data(is.num_elements(), 2);
      auto out = x.scatter_add(static_cast<int64_t>(d), Tensor<B, 3, Int>::from_values(iv, arr3(is)),
                               tensor_of<B, K, 3>(vv, arr3(is)));
      EXPECT_TRUE(matches(out, xs, naive_scatter_add(xv, xs, d, iv, is, vv), 0.0)) << "dim " << d;
    }
    // 300 x 1000 updates: split across threads by outer rows.
    const Shape bs{300, 1000};
    const auto bx = data(bs.num_elements(), 3);
    const auto bi = index_data(bs.num_elements(), 1000, 5);
    const auto bv = data(bs.num_elements(), 4);
    auto big = Tensor<B, 2, K>::from_values(bx, {300, 1000})
                   .scatter_add(1, Tensor<B, 2, Int>::from_values(bi, {300, 1000}),
                                Tensor<B, 2, K>::from_values(bv, {300, 1000}));
    EXPECT_TRUE(matches(big, bs, naive_scatter_add(bx, bs, 1, bi, bs, bv), 0.0));
  });
}

// ---------------------------------------------------------------- index_select

TYPED_TEST(IndexingTest, IndexSelect) {
  using B = TypeParam;
  for_float_and_int([&]<class K>() {
    auto x = tensor_of<B, K, 2>({1, 2, 3, 4, 5, 6}, {3, 2});
    EXPECT_TRUE(matches(x.index_select(0, make_int<B, 1>({2, 0, 2}, {3})), Shape{3, 2}, {5, 6, 1, 2, 5, 6}, 0.0));
    EXPECT_TRUE(matches(x.index_select(1, make_int<B, 1>({1, 1, 0}, {3})), Shape{3, 3}, {2, 2, 1, 4, 4, 3, 6, 6, 5},
                        0.0));
    EXPECT_TRUE(matches(x.index_select(-2, make_int<B, 1>({1}, {1})), Shape{1, 2}, {3, 4}, 0.0));
    EXPECT_EQ(x.index_select(0, Tensor<B, 1, Int>::zeros({0})).shape(), (Shape{0, 2}));
    const Shape xs{3, 4, 5};
    const auto xv = data(60);
    auto t = tensor_of<B, K, 3>(xv, arr3(xs));
    for (std::size_t d = 0; d < 3; ++d) {
      const auto iv = index_data(7, xs[d], static_cast<int64_t>(d));
      Shape os = xs;
      os[d] = 7;
      EXPECT_TRUE(matches(t.index_select(static_cast<int64_t>(d), make_int<B, 1>(iv, {7})), os,
                          naive_index_select(xv, xs, d, iv), 0.0))
          << "dim " << d;
    }
  });
  auto b = make_bool<B, 2>({true, false, false, false, true, true}, {2, 3});
  EXPECT_TRUE(matches(b.index_select(1, make_int<B, 1>({2, 0}, {2})), Shape{2, 2}, {0, 1, 1, 0}, 0.0));
  EXPECT_TRUE(matches(b.index_select(0, make_int<B, 1>({1, 1, 0}, {3})), Shape{3, 3}, {0, 1, 1, 0, 1, 1, 1, 0, 0},
                      0.0));
}

// ---------------------------------------------------------------- select_assign (index_add)

TYPED_TEST(IndexingTest, SelectAssignAddsWithDuplicates) {
  using B = TypeParam;
  for_float_and_int([&]<class K>() {
    using T2 = Tensor<B, 2, K>;
    auto ones = T2::ones({3, 2});
    auto v = tensor_of<B, K, 2>({1, 2, 3, 4, 5, 6}, {3, 2});
    EXPECT_TRUE(matches(ones.select_assign(0, make_int<B, 1>({0, 2, 0}, {3}), v), Shape{3, 2}, {7, 9, 1, 1, 4, 5},
                        0.0));
    EXPECT_TRUE(matches(ones, Shape{3, 2}, {1, 1, 1, 1, 1, 1}, 0.0));
    EXPECT_TRUE(matches(T2::zeros({2, 3}).select_assign(1, make_int<B, 1>({2, 2}, {2}),
                                                        tensor_of<B, K, 2>({1, 2, 3, 4}, {2, 2})),
                        Shape{2, 3}, {0, 0, 3, 0, 0, 7}, 0.0));
    EXPECT_TRUE(matches(ones.select_assign(-1, make_int<B, 1>({1}, {1}), tensor_of<B, K, 2>({5, 6, 7}, {3, 1})),
                        Shape{3, 2}, {1, 6, 1, 7, 1, 8}, 0.0));
    EXPECT_TRUE(matches(ones.select_assign(0, Tensor<B, 1, Int>::zeros({0}), T2::zeros({0, 2})), Shape{3, 2},
                        {1, 1, 1, 1, 1, 1}, 0.0));
    const Shape xs{3, 4, 5};
    const auto xv = data(60, 1);
    auto t = tensor_of<B, K, 3>(xv, arr3(xs));
    for (std::size_t d = 0; d < 3; ++d) {
      const auto iv = index_data(6, xs[d], static_cast<int64_t>(d));
      Shape vs = xs;
      vs[d] = 6;
      const auto vv = data(vs.num_elements(), 2);
      auto out = t.select_assign(static_cast<int64_t>(d), make_int<B, 1>(iv, {6}), tensor_of<B, K, 3>(vv, arr3(vs)));
      EXPECT_TRUE(matches(out, xs, naive_index_add(xv, xs, d, iv, vv), 0.0)) << "dim " << d;
    }
  });
}

TYPED_TEST(IndexingTest, SelectAssignLargeRowsAndColumns) {
  using B = TypeParam;
  // dim 0 of [4, 10000]: one outer slice with long rows (columns split across threads), repeated indices.
  const Shape xs{4, 10000};
  const auto xv = data(xs.num_elements());
  const std::vector<int64_t> iv{0, 3, 0, 1, 0};
  const auto vv = data(5 * 10000, 1);
  auto out = make<B, 2>(xv, {4, 10000}).select_assign(0, make_int<B, 1>(iv, {5}), make<B, 2>(vv, {5, 10000}));
  EXPECT_TRUE(matches(out, xs, naive_index_add(xv, xs, 0, iv, vv), 0.0));
  // dim 1 of [500, 300]: many outer slices.
  const Shape ys{500, 300};
  const auto yv = data(ys.num_elements(), 2);
  const auto jv = index_data(400, 300);
  const auto wv = data(500 * 400, 3);
  auto out2 = make_int<B, 2>(std::vector<int64_t>(yv.begin(), yv.end()), {500, 300})
                  .select_assign(1, make_int<B, 1>(jv, {400}),
                                 make_int<B, 2>(std::vector<int64_t>(wv.begin(), wv.end()), {500, 400}));
  EXPECT_TRUE(matches(out2, ys, naive_index_add(yv, ys, 1, jv, wv), 0.0));
}

// ---------------------------------------------------------------- index values out of range

TYPED_TEST(IndexingTest, OutOfRangeAndNegativeIndicesThrowIndexError) {
  using B = TypeParam;
  for_float_and_int([&]<class K>() {
    auto x = tensor_of<B, K, 2>({1, 2, 3, 4, 5, 6}, {2, 3});
    auto v22 = tensor_of<B, K, 2>({1, 1, 1, 1}, {2, 2});
    EXPECT_TRUE(index_error([&] { x.gather(1, make_int<B, 2>({0, 3, 1, 1}, {2, 2})); }, {"gather", "3"}));
    EXPECT_TRUE(index_error([&] { x.gather(1, make_int<B, 2>({0, -1, 1, 1}, {2, 2})); }, {"gather", "-1"}));
    EXPECT_TRUE(index_error([&] { x.gather(0, make_int<B, 2>({2, 0}, {1, 2})); }, {"gather", "2"}));
    EXPECT_TRUE(index_error([&] { x.scatter_add(1, make_int<B, 2>({0, 1, 5, 1}, {2, 2}), v22); },
                            {"scatter_add", "5"}));
    EXPECT_TRUE(index_error([&] { x.scatter_add(0, make_int<B, 2>({0, 1, -2, 1}, {2, 2}), v22); },
                            {"scatter_add", "-2"}));
    EXPECT_TRUE(index_error([&] { x.index_select(1, make_int<B, 1>({0, 3}, {2})); }, {"index_select", "3"}));
    EXPECT_TRUE(index_error([&] { x.index_select(0, make_int<B, 1>({-1}, {1})); }, {"index_select", "-1"}));
    EXPECT_TRUE(index_error([&] { x.select_assign(0, make_int<B, 1>({0, 2}, {2}), tensor_of<B, K, 2>(std::vector<double>(6, 1.0), {2, 3})); },
                            {"select_assign", "2"}));
    EXPECT_TRUE(index_error([&] { x.select_assign(1, make_int<B, 1>({-3}, {1}), tensor_of<B, K, 2>({1, 1}, {2, 1})); },
                            {"select_assign", "-3"}));
    // Dims out of range.
    EXPECT_TRUE(index_error([&] { x.gather(2, make_int<B, 2>({0, 0}, {1, 2})); }, {"gather", "2"}));
    EXPECT_TRUE(index_error([&] { x.index_select(-3, make_int<B, 1>({0}, {1})); }, {"index_select", "-3"}));
    // Nothing was modified by the failed calls.
    EXPECT_TRUE(matches(x, Shape{2, 3}, {1, 2, 3, 4, 5, 6}, 0.0));
  });
  // An error raised on the large parallel path is still an IndexError.
  std::vector<int64_t> idx(300000, 1);
  idx[299999] = 1000;  // dim 1 has size 1000
  auto big = Tensor<B, 2>::zeros({300, 1000});
  EXPECT_TRUE(index_error([&] { big.gather(1, make_int<B, 2>(idx, {300, 1000})); }, {"gather", "1000"}));
  EXPECT_TRUE(index_error([&] { big.scatter_add(1, make_int<B, 2>(idx, {300, 1000}), big); }, {"scatter_add", "1000"}));
}

}  // namespace indexing_cases
