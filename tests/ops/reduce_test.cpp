// Reductions on every backend: sum/mean/prod/max/min over all elements ([1]) and over each dim (kept with size 1,
// negative dims too), argmax/argmin (first occurrence on ties, NaN is the extreme), max/min_dim_with_indices, var,
// softmax/log_softmax, on Float and Int; empty tensors and large tensors (1M elements, against a double reference
// computed here). Small cases use tests/reference/math_reference.hpp (numpy/scipy).
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tests/reference/math_reference.hpp"
#include "tests/support/test_backends.hpp"
#include "tests/support/int_width.hpp"

namespace ember::test {
namespace reduce_cases {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class B, std::size_t D>
::testing::AssertionResult int_matches(const Tensor<B, D, Int>& t, const Shape& shape,
                                       const std::vector<int64_t>& want) {
  if (!(t.shape() == shape))
    return ::testing::AssertionFailure() << "shape " << t.shape().to_string() << " != " << shape.to_string();
  const auto got = t.template to_vec<int64_t>();
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", expected " << want[i];
  return ::testing::AssertionSuccess();
}

// The [2, 3, 4] shape with dim d set to 1.
Shape kept(int d) {
  Shape s{2, 3, 4};
  s[static_cast<std::size_t>(d)] = 1;
  return s;
}

template <class B>
class Reduce : public ::testing::Test {};
TYPED_TEST_SUITE(Reduce, TestBackends, BackendNames);

// ---------------------------------------------------------------- Float, small, vs reference
TYPED_TEST(Reduce, FloatOverAllElements) {
  using B = TypeParam;
  const auto x = make<B, 3>(V(ref::red_x), {2, 3, 4});
  const double tol = Tol<B>::exact;
  EXPECT_TRUE(matches(x.sum(), Shape{1}, V(ref::red_sum_all), tol));
  EXPECT_TRUE(matches(x.mean(), Shape{1}, V(ref::red_mean_all), tol));
  EXPECT_TRUE(matches(x.prod(), Shape{1}, V(ref::red_prod_all), tol));
  EXPECT_TRUE(matches(x.max(), Shape{1}, V(ref::red_max_all), 0.0));
  EXPECT_TRUE(matches(x.min(), Shape{1}, V(ref::red_min_all), 0.0));
}

TYPED_TEST(Reduce, FloatOverEachDimIncludingNegative) {
  using B = TypeParam;
  using T = Tensor<B, 3>;
  const T x = make<B, 3>(V(ref::red_x), {2, 3, 4});
  const double tol = Tol<B>::exact;
  const std::vector<std::vector<double>> sum = {V(ref::red_sum_d0), V(ref::red_sum_d1), V(ref::red_sum_d2)};
  const std::vector<std::vector<double>> mean = {V(ref::red_mean_d0), V(ref::red_mean_d1), V(ref::red_mean_d2)};
  const std::vector<std::vector<double>> prod = {V(ref::red_prod_d0), V(ref::red_prod_d1), V(ref::red_prod_d2)};
  const std::vector<std::vector<double>> mx = {V(ref::red_max_d0), V(ref::red_max_d1), V(ref::red_max_d2)};
  const std::vector<std::vector<double>> mn = {V(ref::red_min_d0), V(ref::red_min_d1), V(ref::red_min_d2)};
  for (int d = 0; d < 3; ++d) {
    for (int64_t dd : {int64_t{d}, int64_t{d - 3}}) {
      SCOPED_TRACE("dim " + std::to_string(dd));
      EXPECT_TRUE(matches(x.sum_dim(dd), kept(d), sum[d], tol));
      EXPECT_TRUE(matches(x.mean_dim(dd), kept(d), mean[d], tol));
      EXPECT_TRUE(matches(x.prod_dim(dd), kept(d), prod[d], tol));
      EXPECT_TRUE(matches(x.max_dim(dd), kept(d), mx[d], 0.0));
      EXPECT_TRUE(matches(x.min_dim(dd), kept(d), mn[d], 0.0));
    }
  }
  EXPECT_THROW(x.sum_dim(3), IndexError);
  EXPECT_THROW(x.max_dim(-4), IndexError);
  EXPECT_THROW(x.argmax(3), IndexError);
}

TYPED_TEST(Reduce, VarWithBothCorrections) {
  using B = TypeParam;
  const auto x = make<B, 3>(V(ref::red_x), {2, 3, 4});
  const std::vector<std::vector<double>> v0 = {V(ref::red_var0_d0), V(ref::red_var0_d1), V(ref::red_var0_d2)};
  const std::vector<std::vector<double>> v1 = {V(ref::red_var1_d0), V(ref::red_var1_d1), V(ref::red_var1_d2)};
  for (int d = 0; d < 3; ++d) {
    SCOPED_TRACE("dim " + std::to_string(d));
    EXPECT_TRUE(matches(x.var(d, 0), kept(d), v0[d], Tol<B>::exact));
    EXPECT_TRUE(matches(x.var(d, 1), kept(d), v1[d], Tol<B>::exact));
    EXPECT_TRUE(matches(x.var(d), kept(d), v1[d], Tol<B>::exact));  // default: unbiased
    EXPECT_TRUE(matches(x.var(d - 3, 0), kept(d), v0[d], Tol<B>::exact));
  }
  // One sample: the biased variance is 0, the unbiased one 0/0 = NaN (like torch.var).
  const auto one = make<B, 2>({3.0, -1.0}, {2, 1});
  EXPECT_TRUE(matches(one.var(1, 0), Shape{2, 1}, {0.0, 0.0}, 0.0));
  EXPECT_TRUE(matches(one.var(1, 1), Shape{2, 1}, {kNaN, kNaN}, 0.0));
  // Hand-derived: [1, 2, 3, 4] has mean 2.5, squared deviations 5 in total.
  const auto r = make<B, 2>({1, 2, 3, 4}, {1, 4});
  EXPECT_TRUE(matches(r.var(1, 0), Shape{1, 1}, {1.25}, Tol<B>::exact));
  EXPECT_TRUE(matches(r.var(1, 1), Shape{1, 1}, {5.0 / 3.0}, Tol<B>::exact));
}

TYPED_TEST(Reduce, SoftmaxAndLogSoftmaxEveryDim) {
  using B = TypeParam;
  const auto x = make<B, 3>(V(ref::red_x), {2, 3, 4});
  const std::vector<std::vector<double>> sm = {V(ref::red_softmax_d0), V(ref::red_softmax_d1),
                                               V(ref::red_softmax_d2)};
  const std::vector<std::vector<double>> lsm = {V(ref::red_log_softmax_d0), V(ref::red_log_softmax_d1),
                                                V(ref::red_log_softmax_d2)};
  for (int d = 0; d < 3; ++d) {
    SCOPED_TRACE("dim " + std::to_string(d));
    const auto s = x.softmax(d);
    EXPECT_TRUE(matches(s, Shape{2, 3, 4}, sm[d], Tol<B>::loose));
    EXPECT_TRUE(matches(x.softmax(d - 3), Shape{2, 3, 4}, sm[d], Tol<B>::loose));
    EXPECT_TRUE(matches(x.log_softmax(d), Shape{2, 3, 4}, lsm[d], Tol<B>::loose));
    // Rows sum to 1.
    EXPECT_TRUE(matches(s.sum_dim(d), kept(d), std::vector<double>(kept(d).num_elements(), 1.0), Tol<B>::loose));
  }
}

TYPED_TEST(Reduce, SoftmaxStableForExtremeLogits) {
  using B = TypeParam;
  const auto x = make<B, 2>(V(ref::sm_x), {3, 4});
  const auto s = x.softmax(1);
  EXPECT_TRUE(matches(s, Shape{3, 4}, V(ref::sm_softmax), Tol<B>::loose));
  EXPECT_TRUE(matches(x.log_softmax(1), Shape{3, 4}, V(ref::sm_log_softmax), Tol<B>::loose));
  EXPECT_TRUE(matches(x.log_softmax(-1), Shape{3, 4}, V(ref::sm_log_softmax), Tol<B>::loose));
  EXPECT_TRUE(matches(s.sum_dim(1), Shape{3, 1}, {1, 1, 1}, Tol<B>::loose));
  // Hand-derived: equal huge logits split evenly; -inf logits get exactly 0 probability.
  const auto h = make<B, 2>({1e30, 1e30, -kInf, 5000.0}, {1, 4});
  EXPECT_TRUE(matches(h.softmax(1), Shape{1, 4}, {0.5, 0.5, 0.0, 0.0}, Tol<B>::exact));
  EXPECT_TRUE(matches(h.log_softmax(1), Shape{1, 4}, {-std::log(2.0), -std::log(2.0), -kInf, -1e30}, Tol<B>::loose));
  const auto h3 = make<B, 2>({1e30, 1e30, -kInf}, {1, 3});
  EXPECT_TRUE(matches(h3.log_softmax(1), Shape{1, 3}, {-std::log(2.0), -std::log(2.0), -kInf}, Tol<B>::loose));
}

// ---------------------------------------------------------------- argmax / argmin
TYPED_TEST(Reduce, ArgMaxArgMinEveryDim) {
  using B = TypeParam;
  const auto x = make<B, 3>(V(ref::red_x), {2, 3, 4});
  const std::vector<std::vector<int64_t>> amax = {VI(ref::red_argmax_d0), VI(ref::red_argmax_d1),
                                                  VI(ref::red_argmax_d2)};
  const std::vector<std::vector<int64_t>> amin = {VI(ref::red_argmin_d0), VI(ref::red_argmin_d1),
                                                  VI(ref::red_argmin_d2)};
  for (int d = 0; d < 3; ++d) {
    SCOPED_TRACE("dim " + std::to_string(d));
    EXPECT_TRUE(int_matches(x.argmax(d), kept(d), amax[d]));
    EXPECT_TRUE(int_matches(x.argmin(d), kept(d), amin[d]));
    EXPECT_TRUE(int_matches(x.argmax(d - 3), kept(d), amax[d]));
    EXPECT_TRUE(int_matches(x.argmin(d - 3), kept(d), amin[d]));
  }
}

TYPED_TEST(Reduce, ArgTiesTakeFirstAndNanIsTheExtreme) {
  using B = TypeParam;
  const auto t = make<B, 2>({2, 5, 5, 1, 1, 7, 7, 7, 7, 7}, {2, 5});
  EXPECT_TRUE(int_matches(t.argmax(1), Shape{2, 1}, {1, 0}));
  EXPECT_TRUE(int_matches(t.argmin(1), Shape{2, 1}, {3, 0}));
  const auto c = make<B, 2>({3, 3, 1, 1, 3, 1}, {3, 2});
  EXPECT_TRUE(int_matches(c.argmax(0), Shape{1, 2}, {0, 0}));
  EXPECT_TRUE(int_matches(c.argmin(0), Shape{1, 2}, {1, 1}));
  // NaN wins over everything, +inf included, for argmax and (like torch) argmin; the first NaN is taken.
  const auto n = make<B, 2>({1.0, kNaN, kInf, kNaN, -kInf, 0.0, 2.0, 1.0}, {2, 4});
  EXPECT_TRUE(int_matches(n.argmax(1), Shape{2, 1}, {1, 2}));
  EXPECT_TRUE(int_matches(n.argmin(1), Shape{2, 1}, {1, 0}));
  const auto n0 = make<B, 2>({1.0, kInf, 5.0, kNaN, kNaN, 0.0}, {3, 2});
  EXPECT_TRUE(int_matches(n0.argmax(0), Shape{1, 2}, {2, 1}));
  EXPECT_TRUE(int_matches(n0.argmin(0), Shape{1, 2}, {2, 1}));
  // max/min propagate NaN, over all elements and per dim.
  EXPECT_TRUE(std::isnan(n.max().item()));
  EXPECT_TRUE(std::isnan(n.min().item()));
  EXPECT_TRUE(matches(n.max_dim(1), Shape{2, 1}, {kNaN, 2.0}, 0.0));
  EXPECT_TRUE(matches(n.min_dim(1), Shape{2, 1}, {kNaN, -kInf}, 0.0));
  EXPECT_TRUE(matches(n0.max_dim(0), Shape{1, 2}, {kNaN, kNaN}, 0.0));
  EXPECT_TRUE(matches(n0.min_dim(0), Shape{1, 2}, {kNaN, kNaN}, 0.0));
  // A NaN late in a large tensor (parallel partial reductions) still wins.
  const int64_t big = 300000;
  std::vector<double> v(big);
  for (int64_t i = 0; i < big; ++i) v[i] = static_cast<double>(i % 1000);
  v[big - 5] = kNaN;
  const auto l = make<B, 2>(v, {1, big});
  EXPECT_TRUE(std::isnan(l.max().item()));
  EXPECT_TRUE(std::isnan(l.min().item()));
  EXPECT_TRUE(int_matches(l.argmax(1), Shape{1, 1}, {big - 5}));
  EXPECT_TRUE(int_matches(l.argmin(1), Shape{1, 1}, {big - 5}));
}

TYPED_TEST(Reduce, MaxMinDimWithIndices) {
  using B = TypeParam;
  const auto x = make<B, 3>(V(ref::red_x), {2, 3, 4});
  for (int d = 0; d < 3; ++d) {
    SCOPED_TRACE("dim " + std::to_string(d));
    const std::vector<std::vector<double>> mx = {V(ref::red_max_d0), V(ref::red_max_d1), V(ref::red_max_d2)};
    const std::vector<std::vector<double>> mn = {V(ref::red_min_d0), V(ref::red_min_d1), V(ref::red_min_d2)};
    const std::vector<std::vector<int64_t>> amax = {VI(ref::red_argmax_d0), VI(ref::red_argmax_d1),
                                                    VI(ref::red_argmax_d2)};
    const std::vector<std::vector<int64_t>> amin = {VI(ref::red_argmin_d0), VI(ref::red_argmin_d1),
                                                    VI(ref::red_argmin_d2)};
    const auto [v, i] = x.max_dim_with_indices(d);
    EXPECT_TRUE(matches(v, kept(d), mx[d], 0.0));
    EXPECT_TRUE(int_matches(i, kept(d), amax[d]));
    const auto [v2, i2] = x.min_dim_with_indices(d - 3);
    EXPECT_TRUE(matches(v2, kept(d), mn[d], 0.0));
    EXPECT_TRUE(int_matches(i2, kept(d), amin[d]));
  }
}

// Rank 4, every dim (outer/len/inner all > 1 for the middle ones), every op, against loops here. Values are
// multiples of 1/2 in [-2, 2] with many ties, so sums and products are exact in f32 whatever the order.
TYPED_TEST(Reduce, Rank4EveryDimAgainstLoop) {
  using B = TypeParam;
  const std::array<int64_t, 4> s{3, 4, 5, 6};
  std::vector<double> v(360);
  for (int64_t i = 0; i < 360; ++i) v[i] = static_cast<double>((i * 17) % 9) * 0.5 - 2.0;
  const auto x = make<B, 4>(v, s);
  for (int d = 0; d < 4; ++d) {
    SCOPED_TRACE("dim " + std::to_string(d));
    std::array<int64_t, 4> os = s;
    os[d] = 1;
    const int64_t n = os[0] * os[1] * os[2] * os[3];
    std::vector<double> sum(n, 0.0), prod(n, 1.0), mx(n, -kInf), mn(n, kInf);
    std::vector<int64_t> amax(n, 0), amin(n, 0);
    for (int64_t i0 = 0; i0 < s[0]; ++i0)
      for (int64_t i1 = 0; i1 < s[1]; ++i1)
        for (int64_t i2 = 0; i2 < s[2]; ++i2)
          for (int64_t i3 = 0; i3 < s[3]; ++i3) {
            const std::array<int64_t, 4> idx{i0, i1, i2, i3};
            std::array<int64_t, 4> o = idx;
            o[d] = 0;
            const int64_t oi = ((o[0] * os[1] + o[1]) * os[2] + o[2]) * os[3] + o[3];
            const double e = v[((i0 * s[1] + i1) * s[2] + i2) * s[3] + i3];
            sum[oi] += e;
            prod[oi] *= e;
            if (e > mx[oi]) mx[oi] = e, amax[oi] = idx[d];
            if (e < mn[oi]) mn[oi] = e, amin[oi] = idx[d];
          }
    std::vector<double> mean(sum);
    for (auto& m : mean) m /= static_cast<double>(s[d]);
    const Shape out({os.begin(), os.end()});
    EXPECT_TRUE(matches(x.sum_dim(d), out, sum, 0.0));
    EXPECT_TRUE(matches(x.mean_dim(d), out, mean, Tol<B>::exact));
    EXPECT_TRUE(matches(x.prod_dim(d), out, prod, 0.0));
    EXPECT_TRUE(matches(x.max_dim(d), out, mx, 0.0));
    EXPECT_TRUE(matches(x.min_dim(d - 4), out, mn, 0.0));
    EXPECT_TRUE(int_matches(x.argmax(d), out, amax));
    EXPECT_TRUE(int_matches(x.argmin(d - 4), out, amin));
    std::vector<int64_t> iv(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) iv[i] = static_cast<int64_t>(v[i] * 2);  // the same data as Int
    const auto xi = make_int<B, 4>(iv, s);
    std::vector<int64_t> isum(n);
    for (int64_t i = 0; i < n; ++i) isum[i] = static_cast<int64_t>(sum[i] * 2);
    EXPECT_TRUE(int_matches(xi.sum_dim(d), out, isum));
    EXPECT_TRUE(int_matches(xi.argmax(d), out, amax));
    // Softmax over a dim of size 1 is all ones; log_softmax all zeros.
    EXPECT_TRUE(matches(x.max_dim(d).softmax(d), out, std::vector<double>(n, 1.0), 0.0));
    EXPECT_TRUE(matches(x.max_dim(d).log_softmax(d), out, std::vector<double>(n, 0.0), 0.0));
  }
  EXPECT_TRUE(matches(x.sum(), Shape{1}, {[&] {
                        double t = 0;
                        for (double e : v) t += e;
                        return t;
                      }()},
                      0.0));
}

// ---------------------------------------------------------------- Int
TYPED_TEST(Reduce, IntReductionsMatchReference) {
  using B = TypeParam;
  const auto x = make_int<B, 3>(VI(ref::red_i), {2, 3, 4});
  EXPECT_TRUE(int_matches(x.sum(), Shape{1}, VI(ref::red_i_sum_all)));
  EXPECT_TRUE(int_matches(x.mean(), Shape{1}, VI(ref::red_i_mean_all)));
  EXPECT_TRUE(int_matches(x.prod(), Shape{1}, VI(ref::red_i_prod_all)));
  EXPECT_TRUE(int_matches(x.max(), Shape{1}, VI(ref::red_i_max_all)));
  EXPECT_TRUE(int_matches(x.min(), Shape{1}, VI(ref::red_i_min_all)));
  const std::vector<std::vector<int64_t>> sum = {VI(ref::red_i_sum_d0), VI(ref::red_i_sum_d1), VI(ref::red_i_sum_d2)};
  const std::vector<std::vector<int64_t>> mean = {VI(ref::red_i_mean_d0), VI(ref::red_i_mean_d1),
                                                  VI(ref::red_i_mean_d2)};
  const std::vector<std::vector<int64_t>> prod = {VI(ref::red_i_prod_d0), VI(ref::red_i_prod_d1),
                                                  VI(ref::red_i_prod_d2)};
  const std::vector<std::vector<int64_t>> mx = {VI(ref::red_i_max_d0), VI(ref::red_i_max_d1), VI(ref::red_i_max_d2)};
  const std::vector<std::vector<int64_t>> mn = {VI(ref::red_i_min_d0), VI(ref::red_i_min_d1), VI(ref::red_i_min_d2)};
  const std::vector<std::vector<int64_t>> amax = {VI(ref::red_i_argmax_d0), VI(ref::red_i_argmax_d1),
                                                  VI(ref::red_i_argmax_d2)};
  const std::vector<std::vector<int64_t>> amin = {VI(ref::red_i_argmin_d0), VI(ref::red_i_argmin_d1),
                                                  VI(ref::red_i_argmin_d2)};
  for (int d = 0; d < 3; ++d) {
    for (int64_t dd : {int64_t{d}, int64_t{d - 3}}) {
      SCOPED_TRACE("dim " + std::to_string(dd));
      EXPECT_TRUE(int_matches(x.sum_dim(dd), kept(d), sum[d]));
      EXPECT_TRUE(int_matches(x.mean_dim(dd), kept(d), mean[d]));
      EXPECT_TRUE(int_matches(x.prod_dim(dd), kept(d), prod[d]));
      EXPECT_TRUE(int_matches(x.max_dim(dd), kept(d), mx[d]));
      EXPECT_TRUE(int_matches(x.min_dim(dd), kept(d), mn[d]));
      EXPECT_TRUE(int_matches(x.argmax(dd), kept(d), amax[d]));
      EXPECT_TRUE(int_matches(x.argmin(dd), kept(d), amin[d]));
    }
  }
}

TYPED_TEST(Reduce, IntMeanTruncatesTowardZero) {
  using B = TypeParam;
  SKIP_UNLESS_INT64(B);
  // Row means -5/3, 2, -1/3, -1 and column means -7/4, 3/4, 1/4: truncated toward zero, not floored.
  const auto x = make_int<B, 2>({-7, 2, 0, 7, -2, 1, -1, 0, 0, -6, 3, 0}, {4, 3});
  EXPECT_TRUE(int_matches(x.mean_dim(1), Shape{4, 1}, {-1, 2, 0, -1}));
  EXPECT_TRUE(int_matches(x.mean_dim(0), Shape{1, 3}, {-1, 0, 0}));  // the strided (inner) reduction path
  EXPECT_TRUE(int_matches(make_int<B, 1>({-7, 2}, {2}).mean(), Shape{1}, {-2}));
  EXPECT_TRUE(int_matches(make_int<B, 1>({7, -2}, {2}).mean(), Shape{1}, {2}));
  // Int sums are exact beyond 2^53.
  const int64_t big = (int64_t{1} << 60) + 1;
  EXPECT_TRUE(int_matches(make_int<B, 1>({big, big, 3}, {3}).sum(), Shape{1}, {2 * big + 3}));
}

// ---------------------------------------------------------------- empty tensors
TYPED_TEST(Reduce, EmptyTensors) {
  using B = TypeParam;
  using T = Tensor<B, 2>;
  const T e = T::zeros({0, 3});
  EXPECT_TRUE(matches(e.sum(), Shape{1}, {0.0}, 0.0));
  EXPECT_TRUE(matches(e.mean(), Shape{1}, {kNaN}, 0.0));
  EXPECT_TRUE(matches(e.prod(), Shape{1}, {1.0}, 0.0));
  EXPECT_TRUE(matches(e.sum_dim(0), Shape{1, 3}, {0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(e.mean_dim(0), Shape{1, 3}, {kNaN, kNaN, kNaN}, 0.0));
  EXPECT_TRUE(matches(e.prod_dim(0), Shape{1, 3}, {1, 1, 1}, 0.0));
  EXPECT_TRUE(matches(e.sum_dim(1), Shape{0, 1}, {}, 0.0));
  EXPECT_TRUE(matches(e.max_dim(1), Shape{0, 1}, {}, 0.0));  // reducing a non-empty dim of an empty tensor
  const T e2 = T::zeros({3, 0});
  EXPECT_TRUE(matches(e2.sum_dim(1), Shape{3, 1}, {0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(e2.mean_dim(-1), Shape{3, 1}, {kNaN, kNaN, kNaN}, 0.0));
  // max/min/argmax over an empty dim (or tensor) have no answer.
  EXPECT_THROW(e.max(), ShapeError);
  EXPECT_THROW(e.min(), ShapeError);
  EXPECT_THROW(e.max_dim(0), ShapeError);
  EXPECT_THROW(e2.min_dim(1), ShapeError);
  EXPECT_THROW(e.argmax(0), ShapeError);
  EXPECT_THROW(e2.argmin(-1), ShapeError);
  try {
    e2.max_dim(1);
    FAIL() << "max_dim over an empty dim did not throw";
  } catch (const ShapeError& err) {
    EXPECT_NE(std::string(err.what()).find("max_dim"), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find("[3, 0]"), std::string::npos) << err.what();
  }
  // Int.
  const auto ei = Tensor<B, 2, Int>::zeros({0, 2});
  EXPECT_TRUE(int_matches(ei.sum(), Shape{1}, {0}));
  EXPECT_TRUE(int_matches(ei.sum_dim(0), Shape{1, 2}, {0, 0}));
  EXPECT_THROW(ei.max(), ShapeError);
}

// ---------------------------------------------------------------- large tensors vs double
TYPED_TEST(Reduce, LargeFloatReductionsAgainstDouble) {
  using B = TypeParam;
  const int64_t r = 1000, c = 1000;
  std::vector<double> v(r * c);
  for (int64_t i = 0; i < r * c; ++i) v[i] = 0.5 + 0.45 * std::sin(0.001 * static_cast<double>(i) * (1 + i % 3));
  const auto x = make<B, 2>(v, {r, c});
  const auto xs = values(x);  // as stored (rounded to the element type)
  double total = 0.0, mx = -kInf, mn = kInf;
  std::vector<double> rows(r, 0.0), cols(c, 0.0), rmax(r, -kInf), cmin(c, kInf);
  std::vector<int64_t> rarg(r, 0), carg(c, 0);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) {
      const double e = xs[i * c + j];
      total += e;
      rows[i] += e;
      cols[j] += e;
      mx = std::max(mx, e);
      mn = std::min(mn, e);
      if (e > rmax[i]) rmax[i] = e, rarg[i] = j;
      if (e < cmin[j]) cmin[j] = e, carg[j] = i;
    }
  const double tol = Tol<B>::exact * 10;  // 1M-element sums in f32 accumulate a little rounding
  EXPECT_TRUE(matches(x.sum(), Shape{1}, {total}, tol));
  EXPECT_TRUE(matches(x.mean(), Shape{1}, {total / (r * c)}, tol));
  EXPECT_TRUE(matches(x.max(), Shape{1}, {mx}, 0.0));
  EXPECT_TRUE(matches(x.min(), Shape{1}, {mn}, 0.0));
  EXPECT_TRUE(matches(x.sum_dim(1), Shape{r, 1}, rows, tol));  // contiguous rows
  EXPECT_TRUE(matches(x.sum_dim(0), Shape{1, c}, cols, tol));  // strided columns
  std::vector<double> rmean(rows), cmean(cols);
  for (auto& m : rmean) m /= c;
  for (auto& m : cmean) m /= r;
  EXPECT_TRUE(matches(x.mean_dim(-1), Shape{r, 1}, rmean, tol));
  EXPECT_TRUE(matches(x.mean_dim(-2), Shape{1, c}, cmean, tol));
  EXPECT_TRUE(matches(x.max_dim(1), Shape{r, 1}, rmax, 0.0));
  EXPECT_TRUE(matches(x.min_dim(0), Shape{1, c}, cmin, 0.0));
  EXPECT_TRUE(int_matches(x.argmax(1), Shape{r, 1}, rarg));
  EXPECT_TRUE(int_matches(x.argmin(0), Shape{1, c}, carg));
  // Inner reduction of a rank-3 view [100, 1000, 10] over the middle dim, and softmax rows summing to 1.
  const auto y = make<B, 3>(v, {100, 1000, 10});
  std::vector<double> mid(100 * 10, 0.0);
  for (int64_t o = 0; o < 100; ++o)
    for (int64_t k = 0; k < 1000; ++k)
      for (int64_t j = 0; j < 10; ++j) mid[o * 10 + j] += xs[(o * 1000 + k) * 10 + j];
  EXPECT_TRUE(matches(y.sum_dim(1), Shape{100, 1, 10}, mid, tol));
  EXPECT_TRUE(matches(x.softmax(1).sum_dim(1), Shape{r, 1}, std::vector<double>(r, 1.0), Tol<B>::loose));
  // Products over a short dim of a long tensor (values near 1 so nothing overflows).
  const auto p = make<B, 2>(v, {250000, 4});
  std::vector<double> prods(250000, 1.0);
  for (int64_t i = 0; i < 250000; ++i)
    for (int64_t j = 0; j < 4; ++j) prods[i] *= xs[i * 4 + j];
  EXPECT_TRUE(matches(p.prod_dim(1), Shape{250000, 1}, prods, Tol<B>::exact));
}

TYPED_TEST(Reduce, LargeIntReductionsExact) {
  using B = TypeParam;
  const int64_t r = 1000, c = 1000;
  std::vector<int64_t> v(r * c);
  for (int64_t i = 0; i < r * c; ++i) v[i] = (i * 7919) % 100003 - 50000;
  const auto x = make_int<B, 2>(v, {r, c});
  int64_t total = 0;
  std::vector<int64_t> rows(r, 0), cols(c, 0), cmax(c, std::numeric_limits<int64_t>::min());
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) {
      total += v[i * c + j];
      rows[i] += v[i * c + j];
      cols[j] += v[i * c + j];
      cmax[j] = std::max(cmax[j], v[i * c + j]);
    }
  EXPECT_TRUE(int_matches(x.sum(), Shape{1}, {total}));
  EXPECT_TRUE(int_matches(x.mean(), Shape{1}, {total / (r * c)}));
  EXPECT_TRUE(int_matches(x.sum_dim(1), Shape{r, 1}, rows));
  EXPECT_TRUE(int_matches(x.sum_dim(0), Shape{1, c}, cols));
  EXPECT_TRUE(int_matches(x.max_dim(0), Shape{1, c}, cmax));
  std::vector<int64_t> rmean(rows);
  for (auto& m : rmean) m /= c;
  EXPECT_TRUE(int_matches(x.mean_dim(1), Shape{r, 1}, rmean));
}

}  // namespace reduce_cases
}  // namespace ember::test
