// Comparisons (Float, Int, Bool), Bool logic and its reductions, where/mask_where/mask_fill with broadcasting, and
// casts between the kinds, on every backend. Expected values are hand-derived (or computed here for large inputs).
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tests/support/test_backends.hpp"
#include "tests/support/int_width.hpp"

namespace ember::test {
namespace compare_logic_cases {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class B>
class CompareLogic : public ::testing::Test {};
TYPED_TEST_SUITE(CompareLogic, TestBackends, BackendNames);

// ---------------------------------------------------------------- comparisons
TYPED_TEST(CompareLogic, FloatCompareWithBroadcasting) {
  using B = TypeParam;
  const auto a = make<B, 2>({1.0, 2.0, 3.0, kNaN, -kInf, 2.0}, {2, 3});
  const auto b = make<B, 2>({2.0, 2.0, kNaN}, {1, 3});
  const Shape s{2, 3};
  EXPECT_TRUE(matches(a.eq(b), s, {0, 1, 0, 0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(a.ne(b), s, {1, 0, 1, 1, 1, 1}, 0.0));
  EXPECT_TRUE(matches(a.lt(b), s, {1, 0, 0, 0, 1, 0}, 0.0));
  EXPECT_TRUE(matches(a.le(b), s, {1, 1, 0, 0, 1, 0}, 0.0));
  EXPECT_TRUE(matches(a.gt(b), s, {0, 0, 0, 0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(a.ge(b), s, {0, 1, 0, 0, 0, 0}, 0.0));
  // Broadcast operand on the left, and [2,1] with [1,3].
  EXPECT_TRUE(matches(b.lt(a), s, {0, 0, 0, 0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(b.ge(a), s, {1, 1, 0, 0, 1, 0}, 0.0));
  const auto col = make<B, 2>({1.5, 3.0}, {2, 1});
  const auto row = make<B, 2>({1.0, 2.0, 3.0}, {1, 3});
  EXPECT_TRUE(matches(col.gt(row), s, {1, 0, 0, 1, 1, 0}, 0.0));
  EXPECT_TRUE(matches(col.le(row), s, {0, 1, 1, 0, 0, 1}, 0.0));
  // Rank 3: [2,1,2] with [1,2,1].
  const auto c = make<B, 3>({0.0, 1.0, 2.0, 3.0}, {2, 1, 2});
  const auto d = make<B, 3>({1.0, 2.0}, {1, 2, 1});
  EXPECT_TRUE(matches(c.ge(d), Shape{2, 2, 2}, {0, 1, 0, 0, 1, 1, 1, 1}, 0.0));
  EXPECT_TRUE(matches(c.eq(d), Shape{2, 2, 2}, {0, 1, 0, 0, 0, 0, 1, 0}, 0.0));
}

TYPED_TEST(CompareLogic, FloatCompareScalar) {
  using B = TypeParam;
  const auto a = make<B, 2>({-1.0, 0.5, 2.0, kNaN, kInf, 0.5}, {3, 2});
  const Shape s{3, 2};
  EXPECT_TRUE(matches(a.eq(0.5), s, {0, 1, 0, 0, 0, 1}, 0.0));
  EXPECT_TRUE(matches(a.ne(0.5), s, {1, 0, 1, 1, 1, 0}, 0.0));
  EXPECT_TRUE(matches(a.lt(0.5), s, {1, 0, 0, 0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(a.le(0.5), s, {1, 1, 0, 0, 0, 1}, 0.0));
  EXPECT_TRUE(matches(a.gt(0.5), s, {0, 0, 1, 0, 1, 0}, 0.0));
  EXPECT_TRUE(matches(a.ge(0.5), s, {0, 1, 1, 0, 1, 1}, 0.0));
  EXPECT_TRUE(matches(a.eq(kNaN), s, {0, 0, 0, 0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(a.ne(kNaN), s, {1, 1, 1, 1, 1, 1}, 0.0));
  EXPECT_TRUE(matches(a.eq(kInf), s, {0, 0, 0, 0, 1, 0}, 0.0));
  // NaN never equals itself.
  EXPECT_TRUE(matches(a.eq(a), s, {1, 1, 1, 0, 1, 1}, 0.0));
}

TYPED_TEST(CompareLogic, IntCompareTensorAndScalar) {
  using B = TypeParam;
  const auto a = make_int<B, 2>({1, 2, 3, -4, 5, 6}, {2, 3});
  const auto b = make_int<B, 2>({1, 5, 0}, {1, 3});
  const Shape s{2, 3};
  EXPECT_TRUE(matches(a.eq(b), s, {1, 0, 0, 0, 1, 0}, 0.0));
  EXPECT_TRUE(matches(a.ne(b), s, {0, 1, 1, 1, 0, 1}, 0.0));
  EXPECT_TRUE(matches(a.lt(b), s, {0, 1, 0, 1, 0, 0}, 0.0));
  EXPECT_TRUE(matches(a.le(b), s, {1, 1, 0, 1, 1, 0}, 0.0));
  EXPECT_TRUE(matches(a.gt(b), s, {0, 0, 1, 0, 0, 1}, 0.0));
  EXPECT_TRUE(matches(a.ge(b), s, {1, 0, 1, 0, 1, 1}, 0.0));
  EXPECT_TRUE(matches(a.eq(3.0), s, {0, 0, 1, 0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(a.ne(3.0), s, {1, 1, 0, 1, 1, 1}, 0.0));
  EXPECT_TRUE(matches(a.lt(2.0), s, {1, 0, 0, 1, 0, 0}, 0.0));
  EXPECT_TRUE(matches(a.le(2.0), s, {1, 1, 0, 1, 0, 0}, 0.0));
  // A fractional scalar compares as a number, not truncated to an integer: 2 < 2.5, 3 > 2.5, nothing equals 2.5.
  EXPECT_TRUE(matches(a.gt(2.5), s, {0, 0, 1, 0, 1, 1}, 0.0));
  EXPECT_TRUE(matches(a.ge(2.5), s, {0, 0, 1, 0, 1, 1}, 0.0));
  EXPECT_TRUE(matches(a.lt(-3.5), s, {0, 0, 0, 1, 0, 0}, 0.0));
  EXPECT_TRUE(matches(a.eq(2.5), s, {0, 0, 0, 0, 0, 0}, 0.0));
  // Column broadcast.
  const auto col = make_int<B, 2>({2, 5}, {2, 1});
  EXPECT_TRUE(matches(a.ge(col), s, {0, 1, 1, 0, 1, 1}, 0.0));
}

TYPED_TEST(CompareLogic, BoolEqNeWithBroadcasting) {
  using B = TypeParam;
  const auto a = make_bool<B, 2>({true, false, true, false}, {2, 2});
  const auto b = make_bool<B, 2>({true, true}, {1, 2});
  EXPECT_TRUE(matches(a.eq(b), Shape{2, 2}, {1, 0, 1, 0}, 0.0));
  EXPECT_TRUE(matches(a.ne(b), Shape{2, 2}, {0, 1, 0, 1}, 0.0));
  EXPECT_TRUE(matches(a.eq(a), Shape{2, 2}, {1, 1, 1, 1}, 0.0));
}

TYPED_TEST(CompareLogic, CompareShapeMismatchThrows) {
  using B = TypeParam;
  const auto a = make<B, 2>({1, 2, 3, 4, 5, 6}, {2, 3});
  const auto b = make<B, 2>({1, 2}, {2, 1});
  EXPECT_NO_THROW(a.eq(b));
  const auto c = make<B, 2>({1, 2, 3, 4}, {1, 4});
  EXPECT_THROW(a.lt(c), ShapeError);
  EXPECT_THROW(a.to_int().ge(c.to_int()), ShapeError);
  EXPECT_THROW(a.gt(0.0).logical_and(c.gt(0.0)), ShapeError);
}

// 300k elements with a broadcast row: every comparison exact against the same comparison here.
TYPED_TEST(CompareLogic, LargeCompareAgainstLoop) {
  using B = TypeParam;
  const int64_t r = 1000, c = 300;
  std::vector<double> av(r * c), bv(c);
  for (int64_t i = 0; i < r * c; ++i) av[i] = static_cast<double>((i * 37) % 101) - 50.0;
  for (int64_t j = 0; j < c; ++j) bv[j] = static_cast<double>(j % 41) - 20.0;
  const auto a = make<B, 2>(av, {r, c});
  const auto b = make<B, 2>(bv, {1, c});
  const auto lt = values(a.lt(b)), eq = values(a.eq(b)), ge = values(a.to_int().ge(b.to_int()));
  const auto gts = values(a.gt(3.0));
  int bad = 0;
  for (int64_t i = 0; i < r * c && bad < 3; ++i) {
    const double x = av[i], y = bv[i % c];
    if (lt[i] != (x < y) || eq[i] != (x == y) || ge[i] != (x >= y) || gts[i] != (x > 3.0)) {
      ++bad;
      ADD_FAILURE() << "element " << i;
    }
  }
}

// ---------------------------------------------------------------- Bool logic
TYPED_TEST(CompareLogic, LogicalOpsWithBroadcasting) {
  using B = TypeParam;
  const auto a = make_bool<B, 2>({true, true, false, false}, {2, 2});
  const auto b = make_bool<B, 2>({true, false, true, false}, {2, 2});
  const Shape s{2, 2};
  EXPECT_TRUE(matches(a.logical_and(b), s, {1, 0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(a.logical_or(b), s, {1, 1, 1, 0}, 0.0));
  EXPECT_TRUE(matches(a.logical_xor(b), s, {0, 1, 1, 0}, 0.0));
  EXPECT_TRUE(matches(a.logical_not(), s, {0, 0, 1, 1}, 0.0));
  EXPECT_TRUE(matches(a.logical_not().logical_not(), s, {1, 1, 0, 0}, 0.0));
  const auto row = make_bool<B, 2>({true, false}, {1, 2});
  const auto col = make_bool<B, 2>({false, true}, {2, 1});
  EXPECT_TRUE(matches(a.logical_and(row), s, {1, 0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(row.logical_or(col), s, {1, 0, 1, 1}, 0.0));
  EXPECT_TRUE(matches(col.logical_xor(row), s, {1, 0, 0, 1}, 0.0));
  // Bools made by comparisons combine like any other.
  const auto x = make<B, 1>({-2, -1, 0, 1, 2}, {5});
  EXPECT_TRUE(matches(x.gt(-1.5).logical_and(x.lt(1.5)), Shape{5}, {0, 1, 1, 1, 0}, 0.0));
}

TYPED_TEST(CompareLogic, AnyAllCount) {
  using B = TypeParam;
  const auto m = make_bool<B, 2>({true, false, false, true, false, false}, {2, 3});
  EXPECT_TRUE(matches(m.any(), Shape{1}, {1}, 0.0));
  EXPECT_TRUE(matches(m.all(), Shape{1}, {0}, 0.0));
  EXPECT_TRUE(matches(m.count(), Shape{1}, {2}, 0.0));
  EXPECT_TRUE(matches(m.any_dim(0), Shape{1, 3}, {1, 0, 0}, 0.0));
  EXPECT_TRUE(matches(m.all_dim(0), Shape{1, 3}, {1, 0, 0}, 0.0));
  EXPECT_TRUE(matches(m.any_dim(1), Shape{2, 1}, {1, 1}, 0.0));
  EXPECT_TRUE(matches(m.any_dim(-1), Shape{2, 1}, {1, 1}, 0.0));
  EXPECT_TRUE(matches(m.all_dim(-1), Shape{2, 1}, {0, 0}, 0.0));
  EXPECT_TRUE(matches(m.all_dim(-2), Shape{1, 3}, {1, 0, 0}, 0.0));
  const auto t = make_bool<B, 2>({true, true, true, false, true, true}, {3, 2});
  EXPECT_TRUE(matches(t.all_dim(0), Shape{1, 2}, {1, 0}, 0.0));
  EXPECT_TRUE(matches(t.all_dim(1), Shape{3, 1}, {1, 0, 1}, 0.0));
  EXPECT_TRUE(matches(t.logical_not().any_dim(1), Shape{3, 1}, {0, 1, 0}, 0.0));
  EXPECT_TRUE(matches(t.all(), Shape{1}, {0}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 2, Bool>::ones({2, 2}).all(), Shape{1}, {1}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 2, Bool>::zeros({2, 2}).any(), Shape{1}, {0}, 0.0));
  // Empty: any is false, all is true (vacuously), count is 0.
  const auto e = Tensor<B, 2, Bool>::zeros({0, 3});
  EXPECT_TRUE(matches(e.any(), Shape{1}, {0}, 0.0));
  EXPECT_TRUE(matches(e.all(), Shape{1}, {1}, 0.0));
  EXPECT_TRUE(matches(e.count(), Shape{1}, {0}, 0.0));
  EXPECT_TRUE(matches(e.any_dim(0), Shape{1, 3}, {0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(e.all_dim(0), Shape{1, 3}, {1, 1, 1}, 0.0));
  EXPECT_THROW(m.any_dim(2), IndexError);
  // Large count (multithreaded sum).
  const int64_t n = 400000;
  std::vector<bool> big(n);
  int64_t trues = 0;
  for (int64_t i = 0; i < n; ++i) trues += (big[i] = (i % 3 == 0 || i % 7 == 0));
  EXPECT_EQ((make_bool<B, 1>(big, {n}).count().item()), static_cast<double>(trues));
}

// ---------------------------------------------------------------- where, mask_where, mask_fill
TYPED_TEST(CompareLogic, WhereBroadcastsAllThree) {
  using B = TypeParam;
  const auto cond = make_bool<B, 2>({true, false}, {2, 1});
  const auto a = make<B, 2>({1, 2, 3}, {1, 3});
  const auto b = make<B, 2>({10, 20, 30, 40, 50, 60}, {2, 3});
  EXPECT_TRUE(matches(where(cond, a, b), Shape{2, 3}, {1, 2, 3, 40, 50, 60}, 0.0));
  // cond [1,3], a [2,1], b [1,1] -> [2,3].
  const auto c2 = make_bool<B, 2>({false, true, false}, {1, 3});
  const auto a2 = make<B, 2>({7, 8}, {2, 1});
  const auto b2 = make<B, 2>({kNaN}, {1, 1});
  EXPECT_TRUE(matches(where(c2, a2, b2), Shape{2, 3}, {kNaN, 7, kNaN, kNaN, 8, kNaN}, 0.0));
  // Same-shape fast path, Int and Bool kinds.
  const auto c3 = make_bool<B, 1>({true, false, true, false}, {4});
  EXPECT_TRUE(matches(where(c3, make<B, 1>({1, 2, 3, 4}, {4}), make<B, 1>({5, 6, 7, 8}, {4})), Shape{4}, {1, 6, 3, 8}, 0.0));
  EXPECT_TRUE(matches(where(c3, make_int<B, 1>({1, 2, 3, 4}, {4}), make_int<B, 1>({-1}, {1})), Shape{4}, {1, -1, 3, -1}, 0.0));
  EXPECT_TRUE(matches(where(c3, make_bool<B, 1>({false}, {1}), make_bool<B, 1>({true}, {1})), Shape{4}, {0, 1, 0, 1}, 0.0));
  EXPECT_THROW(where(make_bool<B, 2>({true, false, true}, {1, 3}), b, make<B, 2>({1, 2}, {1, 2})), ShapeError);
}

TYPED_TEST(CompareLogic, MaskWhereAndMaskFill) {
  using B = TypeParam;
  const auto x = make<B, 2>({1, 2, 3, 4, 5, 6}, {2, 3});
  const auto m = make_bool<B, 2>({true, false, false, false, true, true}, {2, 3});
  const auto v = make<B, 2>({-1, -2, -3}, {1, 3});
  EXPECT_TRUE(matches(x.mask_where(m, v), Shape{2, 3}, {-1, 2, 3, 4, -2, -3}, 0.0));
  EXPECT_TRUE(matches(x.mask_where(m, make<B, 2>({0}, {1, 1})), Shape{2, 3}, {0, 2, 3, 4, 0, 0}, 0.0));
  const auto mrow = make_bool<B, 2>({false, true, false}, {1, 3});
  EXPECT_TRUE(matches(x.mask_where(mrow, x.neg()), Shape{2, 3}, {1, -2, 3, 4, -5, 6}, 0.0));
  // mask_fill: same shape, broadcast row, broadcast column; non-finite fill values.
  EXPECT_TRUE(matches(x.mask_fill(m, 0.5), Shape{2, 3}, {0.5, 2, 3, 4, 0.5, 0.5}, 0.0));
  EXPECT_TRUE(matches(x.mask_fill(mrow, -kInf), Shape{2, 3}, {1, -kInf, 3, 4, -kInf, 6}, 0.0));
  const auto mcol = make_bool<B, 2>({false, true}, {2, 1});
  EXPECT_TRUE(matches(x.mask_fill(mcol, kNaN), Shape{2, 3}, {1, 2, 3, kNaN, kNaN, kNaN}, 0.0));
  EXPECT_TRUE(matches(x.mask_fill(x.gt(3.0), 0.0), Shape{2, 3}, {1, 2, 3, 0, 0, 0}, 0.0));
  // Int and Bool kinds.
  const auto xi = make_int<B, 2>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(matches(xi.mask_fill(mrow, -7.0), Shape{2, 3}, {1, -7, 3, 4, -7, 6}, 0.0));
  EXPECT_TRUE(matches(xi.mask_where(mcol, make_int<B, 2>({9}, {1, 1})), Shape{2, 3}, {1, 2, 3, 9, 9, 9}, 0.0));
  const auto xb = make_bool<B, 2>({true, true, true, false, false, false}, {2, 3});
  EXPECT_TRUE(matches(xb.mask_fill(mrow, 0.0), Shape{2, 3}, {1, 0, 1, 0, 0, 0}, 0.0));
  // The mask must broadcast to the tensor, not the other way round.
  const auto small = make<B, 2>({1, 2, 3}, {1, 3});
  EXPECT_THROW(small.mask_fill(m, 0.0), ShapeError);
  EXPECT_THROW(x.mask_fill(make_bool<B, 2>({true, false}, {1, 2}), 0.0), ShapeError);
}

// where / mask_fill / lt over every pattern of size-1 dims in rank 3, against a loop here.
TYPED_TEST(CompareLogic, BroadcastPatternsAgainstLoop) {
  using B = TypeParam;
  using S = std::array<int64_t, 3>;
  auto numel = [](const S& s) { return s[0] * s[1] * s[2]; };
  auto at = [](const std::vector<double>& v, const S& s, int64_t i, int64_t j, int64_t k) {
    return v[((s[0] == 1 ? 0 : i) * s[1] + (s[1] == 1 ? 0 : j)) * s[2] + (s[2] == 1 ? 0 : k)];
  };
  auto fill = [](int64_t n, int64_t mod, double off) {
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7) % mod) + off;
    return v;
  };
  const S full{2, 3, 4};
  const std::vector<S> shapes = {{2, 3, 4}, {1, 1, 1}, {2, 1, 4}, {1, 3, 1}, {1, 1, 4}, {2, 3, 1}, {2, 1, 1}, {1, 3, 4}};
  for (const S& sc : shapes)
    for (const S& sa : shapes) {
      // b fills whatever neither cond nor a covers, so the output is always [2, 3, 4].
      S sb;
      for (int d = 0; d < 3; ++d) sb[d] = (sc[d] == 1 && sa[d] == 1) ? full[d] : 1;
      SCOPED_TRACE("cond " + Shape({sc.begin(), sc.end()}).to_string() + ", a " + Shape({sa.begin(), sa.end()}).to_string());
      const auto cv = fill(numel(sc), 3, -1.0), av = fill(numel(sa), 11, 0.0), bv = fill(numel(sb), 5, 100.0);
      std::vector<bool> cb(cv.size());
      for (std::size_t i = 0; i < cv.size(); ++i) cb[i] = cv[i] > 0.0;
      const auto cond = make_bool<B, 3>(cb, sc);
      const auto a = make<B, 3>(av, sa);
      const auto b = make<B, 3>(bv, sb);
      std::vector<double> w, mf, lt;
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j)
          for (int64_t k = 0; k < 4; ++k) {
            const bool c = at(cv, sc, i, j, k) > 0.0;
            w.push_back(c ? at(av, sa, i, j, k) : at(bv, sb, i, j, k));
          }
      EXPECT_TRUE(matches(where(cond, a, b), Shape{2, 3, 4}, w, 0.0));
      // a < b - 100 over the broadcast of their two shapes.
      const S so{std::max(sa[0], sb[0]), std::max(sa[1], sb[1]), std::max(sa[2], sb[2])};
      for (int64_t i = 0; i < so[0]; ++i)
        for (int64_t j = 0; j < so[1]; ++j)
          for (int64_t k = 0; k < so[2]; ++k)
            lt.push_back(at(av, sa, i, j, k) < at(bv, sb, i, j, k) - 100.0 ? 1.0 : 0.0);
      EXPECT_TRUE(matches(a.lt(b.sub_scalar(100.0)), Shape({so.begin(), so.end()}), lt, 0.0));
      // mask_fill of a full tensor with a broadcast mask.
      const auto xv = fill(24, 13, -6.0);
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j)
          for (int64_t k = 0; k < 4; ++k) mf.push_back(at(cv, sc, i, j, k) > 0.0 ? -0.5 : at(xv, full, i, j, k));
      EXPECT_TRUE(matches(make<B, 3>(xv, full).mask_fill(cond, -0.5), Shape{2, 3, 4}, mf, 0.0));
    }
}

// ---------------------------------------------------------------- casts
TYPED_TEST(CompareLogic, CastsBetweenAllKinds) {
  using B = TypeParam;
  SKIP_UNLESS_INT64(B);
  const auto f = make<B, 1>({-2.7, -0.5, -0.0, 0.5, 2.7, 1e10, 0.0, kInf}, {8});
  EXPECT_TRUE(matches(f.to_bool(), Shape{8}, {1, 1, 0, 1, 1, 1, 0, 1}, 0.0));
  EXPECT_TRUE(matches(make<B, 1>({kNaN, 1e-30, -1e-30}, {3}).to_bool(), Shape{3}, {1, 1, 1}, 0.0));
  // Float -> Int truncates toward zero.
  const auto fi = make<B, 1>({-2.7, -0.5, -0.0, 0.5, 2.7, 1e10, -3.0, 99.99}, {8}).to_int();
  ASSERT_TRUE(fi.shape() == Shape{8});
  EXPECT_EQ(fi.template to_vec<int64_t>(), (std::vector<int64_t>{-2, 0, 0, 0, 2, 10000000000LL, -3, 99}));
  // Int -> Float (exact up to 2^24 in f32), Int -> Bool.
  const auto i = make_int<B, 1>({-3, 0, 5, 1 << 20}, {4});
  EXPECT_TRUE(matches(i.to_float(), Shape{4}, {-3, 0, 5, 1 << 20}, 0.0));
  EXPECT_TRUE(matches(i.to_bool(), Shape{4}, {1, 0, 1, 1}, 0.0));
  // Bool -> Int and Float give 0 and 1.
  const auto b = make_bool<B, 2>({true, false, false, true}, {2, 2});
  EXPECT_EQ(b.to_int().template to_vec<int64_t>(), (std::vector<int64_t>{1, 0, 0, 1}));
  EXPECT_TRUE(matches(b.to_float(), Shape{2, 2}, {1, 0, 0, 1}, 0.0));
  EXPECT_TRUE(matches(b.to_float().mul_scalar(2.5), Shape{2, 2}, {2.5, 0, 0, 2.5}, 0.0));
  // Same-kind casts are identities; round trips.
  EXPECT_TRUE(matches(f.to_float(), Shape{8}, {-2.7, -0.5, -0.0, 0.5, 2.7, 1e10, 0.0, kInf}, Tol<B>::exact));
  EXPECT_EQ(i.to_int().template to_vec<int64_t>(), (std::vector<int64_t>{-3, 0, 5, 1 << 20}));
  EXPECT_TRUE(matches(b.to_bool(), Shape{2, 2}, {1, 0, 0, 1}, 0.0));
  EXPECT_TRUE(matches(b.to_int().to_bool(), Shape{2, 2}, {1, 0, 0, 1}, 0.0));
  EXPECT_TRUE(matches(i.to_float().to_int().to_float(), Shape{4}, {-3, 0, 5, 1 << 20}, 0.0));
  EXPECT_TRUE(matches(b.to_float().to_bool(), Shape{2, 2}, {1, 0, 0, 1}, 0.0));
  // Empty and large tensors.
  EXPECT_TRUE(matches(Tensor<B, 2>::zeros({0, 4}).to_int(), Shape{0, 4}, {}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 2, Int>::zeros({3, 0}).to_bool(), Shape{3, 0}, {}, 0.0));
  const int64_t n = 300000;
  std::vector<double> big(n);
  for (int64_t k = 0; k < n; ++k) big[k] = (static_cast<double>(k % 2001) - 1000.0) / 8.0;
  const auto bt = make<B, 1>(big, {n});
  const auto ints = bt.to_int().template to_vec<int64_t>();
  const auto bools = values(bt.to_bool());
  int bad = 0;
  for (int64_t k = 0; k < n && bad < 3; ++k)
    if (ints[k] != static_cast<int64_t>(std::trunc(big[k])) || bools[k] != (big[k] != 0.0 ? 1.0 : 0.0)) {
      ++bad;
      ADD_FAILURE() << "element " << k << " = " << big[k] << ": int " << ints[k] << ", bool " << bools[k];
    }
}

}  // namespace compare_logic_cases
}  // namespace ember::test
