// sort / argsort / topk / cumsum / tril / triu / masked_select / one_hot on every backend (issue 13), against
// torch 1.13's results (tests/reference/sort_scan_reference.hpp, gen_sort_scan_reference.py): NaN sorts as the
// largest value, ties keep their order. Long lines (past the Vulkan shaders' shared-memory sort and one scan chunk)
// are compared with a std::stable_sort / running sum computed here in double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "tests/reference/sort_scan_reference.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace sort_scan_cases {

namespace sr = sort_ref;

template <class B, std::size_t D>
::testing::AssertionResult ints_are(const Tensor<B, D, Int>& t, const Shape& shape, const std::vector<int64_t>& want) {
  if (!(t.shape() == shape))
    return ::testing::AssertionFailure() << "shape " << t.shape().to_string() << " != " << shape.to_string();
  const auto got = t.template to_vec<int64_t>();
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", expected " << want[i];
  return ::testing::AssertionSuccess();
}

template <class B>
class SortScan : public ::testing::Test {};
TYPED_TEST_SUITE(SortScan, TestBackends, BackendNames);

TYPED_TEST(SortScan, SortMatchesTorchWithTiesNanAndInfinities) {
  using B = TypeParam;
  const auto x = make<B, 2>(V(sr::sort_x), {3, 5});
  struct Case {
    int64_t dim;
    bool descending;
    std::vector<double> values;
    std::vector<int64_t> indices;
  };
  const std::vector<Case> cases = {{1, false, V(sr::sort_d1_values), VI(sr::sort_d1_indices)},
                                   {-1, true, V(sr::sort_d1_desc_values), VI(sr::sort_d1_desc_indices)},
                                   {0, false, V(sr::sort_d0_values), VI(sr::sort_d0_indices)},
                                   {-2, true, V(sr::sort_d0_desc_values), VI(sr::sort_d0_desc_indices)}};
  for (const auto& c : cases) {
    SCOPED_TRACE(fmt::format("dim {} descending {}", c.dim, c.descending));
    const auto [values, indices] = x.sort(c.dim, c.descending, /*stable=*/true);
    EXPECT_TRUE(matches(values, Shape{3, 5}, c.values, 0.0));
    EXPECT_TRUE(ints_are(indices, Shape{3, 5}, c.indices));
    EXPECT_TRUE(ints_are(x.argsort(c.dim, c.descending), Shape{3, 5}, c.indices));
  }
  EXPECT_THROW(x.sort(2), IndexError);
}

TYPED_TEST(SortScan, TopkMatchesTorch) {
  using B = TypeParam;
  const auto x = make<B, 2>(V(sr::topk_x), {3, 6});
  auto check = [&](int64_t k, int64_t dim, bool largest, const Shape& s, const std::vector<double>& v,
                   const std::vector<int64_t>& i) {
    SCOPED_TRACE(fmt::format("k {} dim {} largest {}", k, dim, largest));
    const auto [values, indices] = x.topk(k, dim, largest);
    EXPECT_TRUE(matches(values, s, v, 0.0));
    EXPECT_TRUE(ints_are(indices, s, i));
  };
  check(2, 1, true, Shape{3, 2}, V(sr::topk_k2_d1_values), VI(sr::topk_k2_d1_indices));
  check(3, -1, false, Shape{3, 3}, V(sr::topk_k3_d1_smallest_values), VI(sr::topk_k3_d1_smallest_indices));
  check(2, 0, true, Shape{2, 6}, V(sr::topk_k2_d0_values), VI(sr::topk_k2_d0_indices));
  check(6, 1, false, Shape{3, 6}, V(sr::topk_k6_d1_smallest_values), VI(sr::topk_k6_d1_smallest_indices));
  EXPECT_EQ(x.topk(0, 1).first.shape(), (Shape{3, 0}));
  EXPECT_THROW(x.topk(7, 1), ArgumentError);
  EXPECT_THROW(x.topk(-1, 1), ArgumentError);
}

// Lines of 1500 (longer than the shared-memory sort) and of 3 with a large inner stride, with many ties.
TYPED_TEST(SortScan, LongAndStridedLinesMatchAStableSort) {
  using B = TypeParam;
  for (const auto& [rows, len] : std::vector<std::pair<int64_t, int64_t>>{{2, 1500}, {700, 3}}) {
    SCOPED_TRACE(fmt::format("[{}, {}]", rows, len));
    std::vector<double> v(static_cast<std::size_t>(rows * len));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7919) % 97) / 8.0 - 6.0;
    v[5] = std::nan("");
    // Sorting along dim 0 of the transpose walks each line with stride `rows`.
    const auto x = make<B, 2>(v, {rows, len});
    for (bool descending : {false, true}) {
      std::vector<int64_t> want(v.size());
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<int64_t> order(static_cast<std::size_t>(len));
        std::iota(order.begin(), order.end(), 0);
        auto key = [&](int64_t c) { return v[static_cast<std::size_t>(r * len + c)]; };
        auto less = [](double a, double b) { return !std::isnan(a) && (std::isnan(b) || a < b); };
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          return descending ? less(key(b), key(a)) : less(key(a), key(b));
        });
        std::copy(order.begin(), order.end(), want.begin() + r * len);
      }
      EXPECT_TRUE(ints_are(x.argsort(1, descending), Shape{rows, len}, want));
      EXPECT_TRUE(ints_are(x.transpose().argsort(0, descending).transpose(), Shape{rows, len}, want));
    }
  }
}

TYPED_TEST(SortScan, CumsumMatchesTorch) {
  using B = TypeParam;
  const auto x = make<B, 3>(V(sr::scan_x), {2, 3, 4});
  const double tol = Tol<B>::exact;
  EXPECT_TRUE(matches(x.cumsum(0), Shape{2, 3, 4}, V(sr::cumsum_d0), tol));
  EXPECT_TRUE(matches(x.cumsum(1), Shape{2, 3, 4}, V(sr::cumsum_d1), tol));
  EXPECT_TRUE(matches(x.cumsum(-1), Shape{2, 3, 4}, V(sr::cumsum_d2), tol));
  EXPECT_TRUE(matches(make<B, 1>({1.0, std::nan(""), 2.0, INFINITY}, {4}).cumsum(0), Shape{4},
                      V(sr::cumsum_nan), 0.0));
  EXPECT_THROW(x.cumsum(3), IndexError);
}

// 700 elements: past one 256-wide scan chunk of the Vulkan shader, so the carry between chunks is exercised.
TYPED_TEST(SortScan, LongCumsumMatchesARunningSum) {
  using B = TypeParam;
  const int64_t n = 700;
  std::vector<double> v(static_cast<std::size_t>(2 * n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 31) % 17) / 4.0 - 2.0;
  std::vector<double> want(v.size());
  for (int64_t r = 0; r < 2; ++r) {
    double acc = 0;
    for (int64_t c = 0; c < n; ++c) want[static_cast<std::size_t>(r * n + c)] = acc += v[static_cast<std::size_t>(r * n + c)];
  }
  const auto x = make<B, 2>(v, {2, n});
  EXPECT_TRUE(matches(x.cumsum(1), Shape{2, n}, want, Tol<B>::exact));
  EXPECT_TRUE(matches(x.transpose().cumsum(0).transpose(), Shape{2, n}, want, Tol<B>::exact));
}

TYPED_TEST(SortScan, TrilTriuMatchTorch) {
  using B = TypeParam;
  const auto x = make<B, 3>(V(sr::scan_x), {2, 3, 4});
  const Shape s{2, 3, 4};
  EXPECT_TRUE(matches(x.tril(), s, V(sr::tril_0), 0.0));
  EXPECT_TRUE(matches(x.triu(), s, V(sr::triu_0), 0.0));
  EXPECT_TRUE(matches(x.tril(-1), s, V(sr::tril_m1), 0.0));
  EXPECT_TRUE(matches(x.triu(-1), s, V(sr::triu_m1), 0.0));
  EXPECT_TRUE(matches(x.tril(2), s, V(sr::tril_2), 0.0));
  EXPECT_TRUE(matches(x.triu(2), s, V(sr::triu_2), 0.0));
  EXPECT_TRUE(matches(x.tril(-3), s, V(sr::tril_m3), 0.0));
  EXPECT_TRUE(matches(x.triu(-3), s, V(sr::triu_m3), 0.0));
  // Int tensors too (a causal mask is often built from ones).
  const auto ones = Tensor<B, 2, Int>::ones({2, 3});
  EXPECT_TRUE(ints_are(ones.tril(), Shape{2, 3}, {1, 0, 0, 1, 1, 0}));
  EXPECT_TRUE(ints_are(ones.triu(1), Shape{2, 3}, {0, 1, 1, 0, 0, 1}));
}

TYPED_TEST(SortScan, MaskedSelectMatchesTorch) {
  using B = TypeParam;
  const auto x = make<B, 3>(V(sr::scan_x), {2, 3, 4}).narrow(0, 0, 1).template squeeze<2>(0);
  auto to_bool = [](const std::vector<int64_t>& v) { return std::vector<bool>(v.begin(), v.end()); };
  const auto full = make_bool<B, 2>(to_bool(VI(sr::mask_full)), {3, 4});
  const auto row = make_bool<B, 2>(to_bool(VI(sr::mask_row)), {1, 4});
  EXPECT_TRUE(matches(x.masked_select(full), Shape{static_cast<int64_t>(std::size(sr::masked_full))},
                      V(sr::masked_full), 0.0));
  EXPECT_TRUE(matches(x.masked_select(row), Shape{static_cast<int64_t>(std::size(sr::masked_row))},
                      V(sr::masked_row), 0.0));
  EXPECT_EQ(x.masked_select(make_bool<B, 2>({false}, {1, 1})).shape(), (Shape{0}));
  EXPECT_THROW(x.masked_select(make_bool<B, 2>({true, false}, {1, 2})), ShapeError);
}

TYPED_TEST(SortScan, OneHotMatchesTorchAndRefusesOutOfRangeClasses) {
  using B = TypeParam;
  const auto c = make_int<B, 2>(VI(sr::classes), {2, 3});
  EXPECT_TRUE(ints_are(c.one_hot(), Shape{2, 3, 4}, VI(sr::one_hot_auto)));
  EXPECT_TRUE(ints_are(c.one_hot(6), Shape{2, 3, 6}, VI(sr::one_hot_6)));
  EXPECT_THROW(c.one_hot(3), ArgumentError);  // class 3 with 3 classes
  EXPECT_THROW((make_int<B, 1>({0, -1}, {2}).one_hot(4)), ArgumentError);
  const auto none = make_int<B, 1>({}, {0});
  EXPECT_THROW(none.one_hot(), ArgumentError);
  EXPECT_EQ(none.one_hot(3).shape(), (Shape{0, 3}));
}

}  // namespace sort_scan_cases
}  // namespace ember::test
