// Int (int64) elementwise arithmetic on every backend: tensor and scalar forms, broadcasting, division truncating
// toward zero, integer powers, and integer division by zero raising ember::ArgumentError (also from worker threads).
// All expected values are hand-derived.
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/test_backends.hpp"
#include "tests/support/int_width.hpp"

namespace ember::test {
namespace elementwise_int_cases {

template <class B, std::size_t D>
std::vector<int64_t> ints(const Tensor<B, D, Int>& t) {
  return t.template to_vec<int64_t>();
}

// Shape and exact values of an Int tensor.
template <class B, std::size_t D>
::testing::AssertionResult int_matches(const Tensor<B, D, Int>& t, const Shape& shape,
                                       const std::vector<int64_t>& want) {
  if (!(t.shape() == shape))
    return ::testing::AssertionFailure() << "shape " << t.shape().to_string() << " != " << shape.to_string();
  const auto got = ints(t);
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", expected " << want[i];
  return ::testing::AssertionSuccess();
}

template <class B>
class ElementwiseInt : public ::testing::Test {};
TYPED_TEST_SUITE(ElementwiseInt, TestBackends, BackendNames);

TYPED_TEST(ElementwiseInt, AddSubMulWithBroadcasting) {
  using B = TypeParam;
  const auto a = make_int<B, 2>({1, -2, 3, 4, 5, -6}, {2, 3});
  const auto row = make_int<B, 2>({10, 20, 30}, {1, 3});
  const auto col = make_int<B, 2>({-1, 2}, {2, 1});
  EXPECT_TRUE(int_matches(a.add(row), Shape{2, 3}, {11, 18, 33, 14, 25, 24}));
  EXPECT_TRUE(int_matches(row.sub(a), Shape{2, 3}, {9, 22, 27, 6, 15, 36}));
  EXPECT_TRUE(int_matches(a.mul(col), Shape{2, 3}, {-1, 2, -3, 8, 10, -12}));
  EXPECT_TRUE(int_matches(col.mul(row), Shape{2, 3}, {-10, -20, -30, 20, 40, 60}));
  EXPECT_TRUE(int_matches(a.maximum(row.sub(make_int<B, 2>({9, 22, 0}, {1, 3}))), Shape{2, 3}, {1, -2, 30, 4, 5, 30}));
  EXPECT_TRUE(int_matches(a.minimum(col), Shape{2, 3}, {-1, -2, -1, 2, 2, -6}));
  // Rank 3: [2,1,2] with [1,3,1] -> [2,3,2].
  const auto d = make_int<B, 3>({1, 2, 3, 4}, {2, 1, 2});
  const auto e = make_int<B, 3>({0, 10, 100}, {1, 3, 1});
  EXPECT_TRUE(int_matches(d.add(e), Shape{2, 3, 2}, {1, 2, 11, 12, 101, 102, 3, 4, 13, 14, 103, 104}));
}

TYPED_TEST(ElementwiseInt, DivisionTruncatesTowardZero) {
  using B = TypeParam;
  const auto a = make_int<B, 1>({7, -7, 7, -7, 0, -1, 1, 6, -6}, {9});
  const auto b = make_int<B, 1>({2, 2, -2, -2, 5, 3, -3, 3, 3}, {9});
  EXPECT_TRUE(int_matches(a.div(b), Shape{9}, {3, -3, -3, 3, 0, 0, 0, 2, -2}));
  EXPECT_TRUE(int_matches(a / b, Shape{9}, {3, -3, -3, 3, 0, 0, 0, 2, -2}));
  EXPECT_TRUE(int_matches(a.div_scalar(2.0), Shape{9}, {3, -3, 3, -3, 0, 0, 0, 3, -3}));
  EXPECT_TRUE(int_matches(a.div_scalar(-4.0), Shape{9}, {-1, 1, -1, 1, 0, 0, 0, -1, 1}));
  EXPECT_TRUE(int_matches(b.rdiv_scalar(7.0), Shape{9}, {3, 3, -3, -3, 1, 2, -2, 2, 2}));
  EXPECT_TRUE(int_matches(7.0 / b, Shape{9}, {3, 3, -3, -3, 1, 2, -2, 2, 2}));
  // Broadcast divisor.
  const auto m = make_int<B, 2>({9, -9, 10, -10}, {2, 2});
  EXPECT_TRUE(int_matches(m.div(make_int<B, 2>({4, -4}, {1, 2})), Shape{2, 2}, {2, 2, 2, 2}));
}

TYPED_TEST(ElementwiseInt, DivisionByZeroThrows) {
  using B = TypeParam;
  const auto a = make_int<B, 1>({1, 2, 3}, {3});
  EXPECT_THROW(a.div((make_int<B, 1>({1, 0, 1}, {3}))), ArgumentError);
  EXPECT_THROW(a.div_scalar(0.0), ArgumentError);
  EXPECT_THROW(a / 0.0, ArgumentError);
  EXPECT_THROW((make_int<B, 1>({1, 0, 2}, {3}).rdiv_scalar(5.0)), ArgumentError);
  EXPECT_THROW(a.div((make_int<B, 1>({0}, {1}))), ArgumentError);  // broadcast zero
  EXPECT_THROW((make_int<B, 2>({0, 0}, {1, 2}).div(make_int<B, 2>({0, 1}, {2, 1}))), ArgumentError);  // 0 / 0
  // Large: the zero sits in the second half, so a worker thread finds it; the error must still reach the caller.
  const int64_t n = 300000;
  std::vector<int64_t> num(n, 5), den(n, 1);
  den[n - 7] = 0;
  const auto big_num = make_int<B, 1>(num, {n});
  EXPECT_THROW((big_num.div(make_int<B, 1>(den, {n}))), ArgumentError);
  std::vector<int64_t> with_zero(n, 3);
  with_zero[n / 2 + 11] = 0;
  EXPECT_THROW((make_int<B, 1>(with_zero, {n}).rdiv_scalar(1.0)), ArgumentError);
  // The pool is still usable afterwards.
  EXPECT_EQ(big_num.div(make_int<B, 1>(std::vector<int64_t>(n, 2), {n})).sum().item(), 2.0 * n);
  try {
    a.div(make_int<B, 1>({0, 0, 0}, {3}));
    FAIL() << "no throw";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("div"), std::string::npos) << e.what();
  }
}

TYPED_TEST(ElementwiseInt, IntegerPowers) {
  using B = TypeParam;
  SKIP_UNLESS_INT64(B);
  const auto base = make_int<B, 1>({2, -3, 5, 0, 1, -1, -1, 2, 0, 7}, {10});
  const auto expo = make_int<B, 1>({10, 3, 0, 0, -5, -3, -2, -1, 3, 1}, {10});
  // Negative exponents truncate toward zero like the division they stand for: 1, +-1, and 0 otherwise.
  EXPECT_TRUE(int_matches(base.pow(expo), Shape{10}, {1024, -27, 1, 1, 1, -1, 1, 0, 0, 7}));
  EXPECT_TRUE(int_matches(base.pow_scalar(2.0), Shape{10}, {4, 9, 25, 0, 1, 1, 1, 4, 0, 49}));
  EXPECT_TRUE(int_matches(base.pow_scalar(3.0), Shape{10}, {8, -27, 125, 0, 1, -1, -1, 8, 0, 343}));
  EXPECT_TRUE(int_matches(base.pow_scalar(0.0), Shape{10}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_TRUE(int_matches(make_int<B, 1>({3}, {1}).pow_scalar(39.0), Shape{1}, {4052555153018976267LL}));
  // Broadcast exponent row.
  const auto b2 = make_int<B, 2>({2, 3}, {2, 1});
  EXPECT_TRUE(int_matches(b2.pow(make_int<B, 2>({0, 1, 2, 3}, {1, 4})), Shape{2, 4}, {1, 2, 4, 8, 1, 3, 9, 27}));
}

TYPED_TEST(ElementwiseInt, NegAbsSign) {
  using B = TypeParam;
  SKIP_UNLESS_INT64(B);
  const auto a = make_int<B, 2>({-5, 0, 7, -1, 1, 123456789012LL}, {2, 3});
  EXPECT_TRUE(int_matches(a.neg(), Shape{2, 3}, {5, 0, -7, 1, -1, -123456789012LL}));
  EXPECT_TRUE(int_matches(-a, Shape{2, 3}, {5, 0, -7, 1, -1, -123456789012LL}));
  EXPECT_TRUE(int_matches(a.abs(), Shape{2, 3}, {5, 0, 7, 1, 1, 123456789012LL}));
  EXPECT_TRUE(int_matches(a.sign(), Shape{2, 3}, {-1, 0, 1, -1, 1, 1}));
}

TYPED_TEST(ElementwiseInt, ScalarFormsAndOperators) {
  using B = TypeParam;
  const auto a = make_int<B, 1>({-4, -1, 0, 3, 8}, {5});
  const Shape s{5};
  EXPECT_TRUE(int_matches(a.add_scalar(3.0), s, {-1, 2, 3, 6, 11}));
  EXPECT_TRUE(int_matches(a + 3.0, s, {-1, 2, 3, 6, 11}));
  EXPECT_TRUE(int_matches(3.0 + a, s, {-1, 2, 3, 6, 11}));
  EXPECT_TRUE(int_matches(a.sub_scalar(3.0), s, {-7, -4, -3, 0, 5}));
  EXPECT_TRUE(int_matches(a - 3.0, s, {-7, -4, -3, 0, 5}));
  EXPECT_TRUE(int_matches(a.rsub_scalar(10.0), s, {14, 11, 10, 7, 2}));
  EXPECT_TRUE(int_matches(10.0 - a, s, {14, 11, 10, 7, 2}));
  EXPECT_TRUE(int_matches(a.mul_scalar(-2.0), s, {8, 2, 0, -6, -16}));
  EXPECT_TRUE(int_matches(a * -2.0, s, {8, 2, 0, -6, -16}));
  EXPECT_TRUE(int_matches(-2.0 * a, s, {8, 2, 0, -6, -16}));
  EXPECT_TRUE(int_matches(a.div_scalar(3.0), s, {-1, 0, 0, 1, 2}));
  EXPECT_TRUE(int_matches(a / 3.0, s, {-1, 0, 0, 1, 2}));
  EXPECT_TRUE(int_matches(a.clamp_min(-2.0), s, {-2, -1, 0, 3, 8}));
  EXPECT_TRUE(int_matches(a.clamp_max(2.0), s, {-4, -1, 0, 2, 2}));
  EXPECT_TRUE(int_matches(a.clamp(-2.0, 2.0), s, {-2, -1, 0, 2, 2}));
  EXPECT_THROW(a.clamp(3.0, 2.0), ArgumentError);
  const auto b = make_int<B, 1>({1, 2, 3, 4, 5}, {5});
  EXPECT_TRUE(int_matches(a + b, s, {-3, 1, 3, 7, 13}));
  EXPECT_TRUE(int_matches(a - b, s, {-5, -3, -3, -1, 3}));
  EXPECT_TRUE(int_matches(a * b, s, {-4, -2, 0, 12, 40}));
  EXPECT_TRUE(int_matches(a / b, s, {-4, 0, 0, 0, 1}));
}

// int64 arithmetic is exact beyond 2^53 (nothing goes through double).
TYPED_TEST(ElementwiseInt, ExactBeyondDoublePrecision) {
  using B = TypeParam;
  SKIP_UNLESS_INT64(B);
  const int64_t big = (int64_t{1} << 62) + 3;
  const auto a = make_int<B, 1>({big, -big}, {2});
  EXPECT_TRUE(int_matches(a.add(make_int<B, 1>({1, -1}, {2})), Shape{2}, {big + 1, -big - 1}));
  EXPECT_TRUE(int_matches(a.add_scalar(1.0), Shape{2}, {big + 1, -big + 1}));
  EXPECT_TRUE(int_matches(a.div_scalar(3.0), Shape{2}, {big / 3, -big / 3}));
  EXPECT_TRUE(int_matches(a.sub(a), Shape{2}, {0, 0}));
}

TYPED_TEST(ElementwiseInt, EmptyAndLargeTensors) {
  using B = TypeParam;
  const auto e = Tensor<B, 2, Int>::zeros({0, 3});
  EXPECT_TRUE(int_matches(e.add(make_int<B, 2>({1, 2, 3}, {1, 3})), Shape{0, 3}, {}));
  EXPECT_TRUE(int_matches(e.div(make_int<B, 2>({1, 2, 3}, {1, 3})), Shape{0, 3}, {}));
  EXPECT_TRUE(int_matches(e.neg(), Shape{0, 3}, {}));
  EXPECT_TRUE(int_matches(e.mul_scalar(2.0), Shape{0, 3}, {}));
  // 300k elements, multithreaded: exact against the same arithmetic here.
  const int64_t rows = 1000, cols = 300;
  std::vector<int64_t> av(rows * cols), bv(cols);
  for (int64_t i = 0; i < rows * cols; ++i) av[i] = (i * 7919) % 20011 - 10005;
  for (int64_t j = 0; j < cols; ++j) bv[j] = (j % 13) - 6 == 0 ? 7 : (j % 13) - 6;
  const auto a = make_int<B, 2>(av, {rows, cols});
  const auto b = make_int<B, 2>(bv, {1, cols});
  const auto sum = ints(a.add(b)), prod = ints(a.mul(b)), quot = ints(a.div(b)), neg = ints(a.neg());
  const auto sq = ints(a.pow_scalar(2.0)), sh = ints(a.add_scalar(-17.0));
  int bad = 0;
  for (int64_t i = 0; i < rows * cols && bad < 3; ++i) {
    const int64_t x = av[i], y = bv[i % cols];
    if (sum[i] != x + y || prod[i] != x * y || quot[i] != x / y || neg[i] != -x || sq[i] != x * x ||
        sh[i] != x - 17) {
      ++bad;
      ADD_FAILURE() << "element " << i << " (x = " << x << ", y = " << y << ")";
    }
  }
}

// INT64_MIN / -1 traps (SIGFPE) on x86 if done naively; PyTorch returns INT64_MIN (two's-complement wrap), as do
// neg and abs of INT64_MIN.
TYPED_TEST(ElementwiseInt, MostNegativeValueWrapsInsteadOfTrapping) {
  using B = TypeParam;
  SKIP_UNLESS_INT64(B);
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const auto a = Tensor<B, 1, Int>::from_values(std::vector<int64_t>{lo, 7}, {2});
  const auto minus_one = Tensor<B, 1, Int>::from_values(std::vector<int64_t>{-1, -1}, {2});
  const std::vector<int64_t> want{lo, -7};
  EXPECT_EQ(a.div(minus_one).template to_vec<int64_t>(), want);
  EXPECT_EQ(a.div_scalar(-1).template to_vec<int64_t>(), want);
  EXPECT_EQ(a.neg().template to_vec<int64_t>(), want);
  EXPECT_EQ(a.abs().template to_vec<int64_t>(), (std::vector<int64_t>{lo, 7}));
}

}  // namespace elementwise_int_cases
}  // namespace ember::test
