// Float elementwise ops on every backend: unary math, scalar forms, binary ops with NumPy broadcasting, operators,
// empty tensors and the NaN/Inf rules. Expected values come from tests/reference/math_reference.hpp (numpy/scipy)
// or are derived by hand in the test. Dense accuracy sweeps and large tensors: elementwise_approx_test.cpp; Int
// arithmetic: elementwise_int_test.cpp.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tests/reference/math_reference.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace elementwise_cases {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class B>
class ElementwiseFloat : public ::testing::Test {};
TYPED_TEST_SUITE(ElementwiseFloat, TestBackends, BackendNames);

// ---------------------------------------------------------------- unary ops vs the reference
TYPED_TEST(ElementwiseFloat, UnaryOpsMatchReference) {
  using B = TypeParam;
  using T = Tensor<B, 2>;
  static_assert(ref::unary_n == 32);
  const T x = make<B, 2>(V(ref::unary_x), {4, 8});
  struct Case {
    const char* name;
    std::function<T(const T&)> f;
    std::vector<double> want;
    double tol;
  };
  const double exact = Tol<B>::exact, loose = Tol<B>::loose;
  const std::vector<Case> cases = {
      {"neg", [](const T& t) { return t.neg(); }, V(ref::neg_out), exact},
      {"abs", [](const T& t) { return t.abs(); }, V(ref::abs_out), exact},
      {"exp", [](const T& t) { return t.exp(); }, V(ref::exp_out), loose},
      {"log", [](const T& t) { return t.log(); }, V(ref::log_out), loose},
      {"log1p", [](const T& t) { return t.log1p(); }, V(ref::log1p_out), loose},
      {"sqrt", [](const T& t) { return t.sqrt(); }, V(ref::sqrt_out), exact},
      {"sin", [](const T& t) { return t.sin(); }, V(ref::sin_out), loose},
      {"cos", [](const T& t) { return t.cos(); }, V(ref::cos_out), loose},
      {"tanh", [](const T& t) { return t.tanh(); }, V(ref::tanh_out), loose},
      {"sigmoid", [](const T& t) { return t.sigmoid(); }, V(ref::sigmoid_out), loose},
      {"erf", [](const T& t) { return t.erf(); }, V(ref::erf_out), loose},
      {"recip", [](const T& t) { return t.recip(); }, V(ref::recip_out), exact},
      {"sign", [](const T& t) { return t.sign(); }, V(ref::sign_out), 0.0},
      {"floor", [](const T& t) { return t.floor(); }, V(ref::floor_out), 0.0},
      {"ceil", [](const T& t) { return t.ceil(); }, V(ref::ceil_out), 0.0},
      {"round", [](const T& t) { return t.round(); }, V(ref::round_out), 0.0},
      {"relu", [](const T& t) { return t.relu(); }, V(ref::relu_out), 0.0},
      {"gelu", [](const T& t) { return t.gelu(); }, V(ref::gelu_out), loose},
      {"gelu_tanh", [](const T& t) { return t.gelu(true); }, V(ref::gelu_tanh_out), loose},
  };
  for (const auto& c : cases) EXPECT_TRUE(matches(c.f(x), Shape{4, 8}, c.want, c.tol)) << c.name;
}

// Round is half to even; floor/ceil/sign keep the sign of zero-valued results; hand-derived.
TYPED_TEST(ElementwiseFloat, RoundingHandDerived) {
  using B = TypeParam;
  const auto x = make<B, 1>({0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -3.7, 3.2}, {9});
  EXPECT_TRUE(matches(x.round(), Shape{9}, {0, 2, 2, -0.0, -2, -2, 0, -4, 3}, 0.0));
  EXPECT_TRUE(matches(x.floor(), Shape{9}, {0, 1, 2, -1, -2, -3, 0, -4, 3}, 0.0));
  EXPECT_TRUE(matches(x.ceil(), Shape{9}, {1, 2, 3, -0.0, -1, -2, 1, -3, 4}, 0.0));
  EXPECT_TRUE(matches(x.sign(), Shape{9}, {1, 1, 1, -1, -1, -1, 1, -1, 1}, 0.0));
  const auto r = values(make<B, 1>({-0.5, -0.0, 0.0}, {3}).round());
  EXPECT_TRUE(std::signbit(r[0]) && std::signbit(r[1]) && !std::signbit(r[2]));
}

// Unary ops keep the shape of rank-3 inputs (and run over every element, not just the first row).
TYPED_TEST(ElementwiseFloat, UnaryKeepsRank3Shape) {
  using B = TypeParam;
  const auto x = make<B, 3>(V(ref::unary_x), {2, 4, 4});
  EXPECT_TRUE(matches(x.exp(), Shape{2, 4, 4}, V(ref::exp_out), Tol<B>::loose));
  EXPECT_TRUE(matches(x.abs(), Shape{2, 4, 4}, V(ref::abs_out), 0.0));
}

// ---------------------------------------------------------------- scalar forms
TYPED_TEST(ElementwiseFloat, ScalarOpsMatchReference) {
  using B = TypeParam;
  const auto x = make<B, 2>(V(ref::scalar_x), {2, 4});
  const Shape s{2, 4};
  const double tol = Tol<B>::exact;
  EXPECT_TRUE(matches(x.add_scalar(2.5), s, V(ref::add_s_out), tol));
  EXPECT_TRUE(matches(x.sub_scalar(2.5), s, V(ref::sub_s_out), tol));
  EXPECT_TRUE(matches(x.mul_scalar(2.5), s, V(ref::mul_s_out), tol));
  EXPECT_TRUE(matches(x.div_scalar(2.5), s, V(ref::div_s_out), tol));
  EXPECT_TRUE(matches(x.rsub_scalar(2.5), s, V(ref::rsub_s_out), tol));
  EXPECT_TRUE(matches(x.rdiv_scalar(2.5), s, V(ref::rdiv_s_out), tol));
  EXPECT_TRUE(matches(x.clamp_min(-1.0), s, V(ref::clamp_min_s_out), 0.0));
  EXPECT_TRUE(matches(x.clamp_max(1.5), s, V(ref::clamp_max_s_out), 0.0));
  EXPECT_TRUE(matches(x.clamp(-1.0, 1.5), s, V(ref::clamp_s_out), 0.0));
}

// pow_scalar has fast paths for 2, 1, 0.5 and -1; each must agree with std::pow semantics (NaN for negative bases
// with fractional exponents, inf for 0^-1).
TYPED_TEST(ElementwiseFloat, PowScalarEveryExponentPath) {
  using B = TypeParam;
  const auto x = make<B, 2>(V(ref::scalar_x), {2, 4});
  const Shape s{2, 4};
  const double tol = Tol<B>::loose;
  EXPECT_TRUE(matches(x.pow_scalar(2.0), s, V(ref::pow_s2_out), tol));
  EXPECT_TRUE(matches(x.pow_scalar(3.0), s, V(ref::pow_s3_out), tol));
  EXPECT_TRUE(matches(x.pow_scalar(0.5), s, V(ref::pow_shalf_out), tol));
  EXPECT_TRUE(matches(x.pow_scalar(-1.0), s, V(ref::pow_sm1_out), tol));
  EXPECT_TRUE(matches(x.pow_scalar(1.0), s, V(ref::pow_s1_out), 0.0));
  EXPECT_TRUE(matches(x.pow_scalar(1.5), s, V(ref::pow_s1_5_out), tol));
  EXPECT_TRUE(matches(x.pow_scalar(0.0), s, V(ref::pow_s0_out), 0.0));
}

TYPED_TEST(ElementwiseFloat, ClampRejectsMinAboveMax) {
  using B = TypeParam;
  const auto x = make<B, 1>({1, 2, 3}, {3});
  EXPECT_THROW(x.clamp(2.0, 1.0), ArgumentError);
  EXPECT_TRUE(matches(x.clamp(2.0, 2.0), Shape{3}, {2, 2, 2}, 0.0));
}

// ---------------------------------------------------------------- binary ops with broadcasting
TYPED_TEST(ElementwiseFloat, BinaryOpsBroadcastMatchReference) {
  using B = TypeParam;
  using T2 = Tensor<B, 2>;
  using T3 = Tensor<B, 3>;
  const T2 a = make<B, 2>(V(ref::bin_a), {2, 3});
  const T2 b = make<B, 2>(V(ref::bin_b), {1, 3});
  const T2 c = make<B, 2>(V(ref::bin_c), {2, 1});
  const T3 d = make<B, 3>(V(ref::bin_d), {4, 1, 3});
  const T3 e = make<B, 3>(V(ref::bin_e), {1, 2, 1});
  struct Case {
    const char* name;
    std::function<T2(const T2&, const T2&)> f2;
    std::function<T3(const T3&, const T3&)> f3;
    std::vector<double> ab, cb, de;
  };
  const std::vector<Case> cases = {
      {"add", [](auto& x, auto& y) { return x.add(y); }, [](auto& x, auto& y) { return x.add(y); },
       V(ref::add_ab_out), V(ref::add_cb_out), V(ref::add_de_out)},
      {"sub", [](auto& x, auto& y) { return x.sub(y); }, [](auto& x, auto& y) { return x.sub(y); },
       V(ref::sub_ab_out), V(ref::sub_cb_out), V(ref::sub_de_out)},
      {"mul", [](auto& x, auto& y) { return x.mul(y); }, [](auto& x, auto& y) { return x.mul(y); },
       V(ref::mul_ab_out), V(ref::mul_cb_out), V(ref::mul_de_out)},
      {"div", [](auto& x, auto& y) { return x.div(y); }, [](auto& x, auto& y) { return x.div(y); },
       V(ref::div_ab_out), V(ref::div_cb_out), V(ref::div_de_out)},
      {"pow", [](auto& x, auto& y) { return x.pow(y); }, [](auto& x, auto& y) { return x.pow(y); },
       V(ref::pow_ab_out), V(ref::pow_cb_out), V(ref::pow_de_out)},
      {"maximum", [](auto& x, auto& y) { return x.maximum(y); }, [](auto& x, auto& y) { return x.maximum(y); },
       V(ref::max_ab_out), V(ref::max_cb_out), V(ref::max_de_out)},
      {"minimum", [](auto& x, auto& y) { return x.minimum(y); }, [](auto& x, auto& y) { return x.minimum(y); },
       V(ref::min_ab_out), V(ref::min_cb_out), V(ref::min_de_out)},
  };
  const double tol = Tol<B>::loose;
  for (const auto& k : cases) {
    EXPECT_TRUE(matches(k.f2(a, b), Shape{2, 3}, k.ab, tol)) << k.name << " [2,3] with [1,3]";
    EXPECT_TRUE(matches(k.f2(c, b), Shape{2, 3}, k.cb, tol)) << k.name << " [2,1] with [1,3]";
    EXPECT_TRUE(matches(k.f3(d, e), Shape{4, 2, 3}, k.de, tol)) << k.name << " [4,1,3] with [1,2,1]";
  }
}

// The broadcast operand may be on either side: [1,3] - [2,3] is the negation of [2,3] - [1,3].
TYPED_TEST(ElementwiseFloat, BroadcastEitherSide) {
  using B = TypeParam;
  const auto a = make<B, 2>(V(ref::bin_a), {2, 3});
  const auto b = make<B, 2>(V(ref::bin_b), {1, 3});
  std::vector<double> neg_sub = V(ref::sub_ab_out);
  for (auto& v : neg_sub) v = -v;
  EXPECT_TRUE(matches(b.sub(a), Shape{2, 3}, neg_sub, Tol<B>::exact));
  EXPECT_TRUE(matches(b.add(a), Shape{2, 3}, V(ref::add_ab_out), Tol<B>::exact));
  EXPECT_TRUE(matches(b.maximum(a), Shape{2, 3}, V(ref::max_ab_out), 0.0));
  // A [1,1] operand broadcasts over everything; hand-derived.
  const auto one = make<B, 2>({10.0}, {1, 1});
  EXPECT_TRUE(matches(a.mul(one), Shape{2, 3}, {15, -20, 30, 5, 40, -10}, 0.0));
  EXPECT_TRUE(matches(one.div(a), Shape{2, 3}, {10 / 1.5, -5, 10 / 3.0, 20, 2.5, -10}, Tol<B>::exact));
}

TYPED_TEST(ElementwiseFloat, IncompatibleShapesThrow) {
  using B = TypeParam;
  const auto a = make<B, 2>({1, 2, 3, 4, 5, 6}, {2, 3});
  const auto b = make<B, 2>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  EXPECT_THROW(a.add(b), ShapeError);
  EXPECT_THROW(a.maximum(b), ShapeError);
  try {
    a.mul(b);
    FAIL() << "mul of [2, 3] and [2, 4] did not throw";
  } catch (const ShapeError& err) {
    const std::string msg = err.what();
    EXPECT_NE(msg.find("mul"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 4]"), std::string::npos) << msg;
  }
}

// Every pattern of size-1 dims the strided kernels merge or split: rank-4 operand pairs against a loop here (add,
// sub, mul and maximum of exactly representable values are exact, so the comparison is exact).
TYPED_TEST(ElementwiseFloat, BroadcastPatternsAgainstLoop) {
  using B = TypeParam;
  using S = std::array<int64_t, 4>;
  const std::vector<std::pair<S, S>> pairs = {
      {{2, 3, 4, 5}, {2, 3, 4, 5}}, {{2, 3, 4, 5}, {1, 1, 1, 1}}, {{2, 1, 4, 1}, {1, 3, 1, 5}},
      {{1, 3, 1, 5}, {2, 1, 4, 1}}, {{2, 3, 4, 5}, {2, 1, 4, 1}}, {{2, 3, 1, 1}, {1, 1, 4, 5}},
      {{1, 1, 4, 5}, {2, 3, 1, 1}}, {{2, 3, 4, 1}, {1, 1, 1, 5}}, {{3, 1, 1, 7}, {1, 2, 6, 1}},
      {{1, 1, 1, 9}, {4, 1, 3, 1}}, {{5, 1, 1, 1}, {1, 1, 1, 1}}, {{2, 3, 4, 5}, {1, 3, 1, 5}},
  };
  for (const auto& [sa, sb] : pairs) {
    SCOPED_TRACE(Shape({sa.begin(), sa.end()}).to_string() + " with " + Shape({sb.begin(), sb.end()}).to_string());
    int64_t na = 1, nb = 1;
    S so;
    for (int d = 0; d < 4; ++d) {
      na *= sa[d];
      nb *= sb[d];
      so[d] = std::max(sa[d], sb[d]);
    }
    std::vector<double> av(na), bv(nb);
    for (int64_t i = 0; i < na; ++i) av[i] = static_cast<double>(i % 23) - 11.0;
    for (int64_t i = 0; i < nb; ++i) bv[i] = static_cast<double>((i * 5) % 17) * 0.5 - 4.0;
    const auto a = make<B, 4>(av, sa);
    const auto b = make<B, 4>(bv, sb);
    std::vector<double> add, sub, mul, mx;
    for (int64_t i0 = 0; i0 < so[0]; ++i0)
      for (int64_t i1 = 0; i1 < so[1]; ++i1)
        for (int64_t i2 = 0; i2 < so[2]; ++i2)
          for (int64_t i3 = 0; i3 < so[3]; ++i3) {
            auto at = [&](const std::vector<double>& v, const S& s) {
              const int64_t j0 = s[0] == 1 ? 0 : i0, j1 = s[1] == 1 ? 0 : i1, j2 = s[2] == 1 ? 0 : i2,
                            j3 = s[3] == 1 ? 0 : i3;
              return v[((j0 * s[1] + j1) * s[2] + j2) * s[3] + j3];
            };
            const double x = at(av, sa), y = at(bv, sb);
            add.push_back(x + y);
            sub.push_back(x - y);
            mul.push_back(x * y);
            mx.push_back(std::max(x, y));
          }
    const Shape out({so.begin(), so.end()});
    EXPECT_TRUE(matches(a.add(b), out, add, 0.0));
    EXPECT_TRUE(matches(a.sub(b), out, sub, 0.0));
    EXPECT_TRUE(matches(a.mul(b), out, mul, 0.0));
    EXPECT_TRUE(matches(a.maximum(b), out, mx, 0.0));
    EXPECT_TRUE(matches(b.maximum(a), out, mx, 0.0));
  }
}

// ---------------------------------------------------------------- operators
TYPED_TEST(ElementwiseFloat, OperatorsMatchNamedOps) {
  using B = TypeParam;
  const auto a = make<B, 2>({1.5, -2.0, 3.0, 0.5, 4.0, -1.0}, {2, 3});
  const auto b = make<B, 2>({2.0, -0.5, 3.0}, {1, 3});
  const Shape s{2, 3};
  const double tol = Tol<B>::exact;
  EXPECT_TRUE(matches(a + b, s, V(ref::add_ab_out), tol));
  EXPECT_TRUE(matches(a - b, s, V(ref::sub_ab_out), tol));
  EXPECT_TRUE(matches(a * b, s, V(ref::mul_ab_out), tol));
  EXPECT_TRUE(matches(a / b, s, V(ref::div_ab_out), tol));
  EXPECT_TRUE(matches(-a, s, {-1.5, 2.0, -3.0, -0.5, -4.0, 1.0}, 0.0));
  EXPECT_TRUE(matches(a + 2.0, s, {3.5, 0, 5, 2.5, 6, 1}, 0.0));
  EXPECT_TRUE(matches(2.0 + a, s, {3.5, 0, 5, 2.5, 6, 1}, 0.0));
  EXPECT_TRUE(matches(a - 2.0, s, {-0.5, -4, 1, -1.5, 2, -3}, 0.0));
  EXPECT_TRUE(matches(2.0 - a, s, {0.5, 4, -1, 1.5, -2, 3}, 0.0));
  EXPECT_TRUE(matches(a * 2.0, s, {3, -4, 6, 1, 8, -2}, 0.0));
  EXPECT_TRUE(matches(2.0 * a, s, {3, -4, 6, 1, 8, -2}, 0.0));
  EXPECT_TRUE(matches(a / 2.0, s, {0.75, -1, 1.5, 0.25, 2, -0.5}, 0.0));
  EXPECT_TRUE(matches(2.0 / a, s, {2 / 1.5, -1, 2 / 3.0, 4, 0.5, -2}, tol));
  // Chained expression: (a * 2 - b) / 4 + 1.
  std::vector<double> want;
  const std::vector<double> av{1.5, -2.0, 3.0, 0.5, 4.0, -1.0}, bv{2.0, -0.5, 3.0};
  for (int i = 0; i < 6; ++i) want.push_back((av[i] * 2 - bv[i % 3]) / 4 + 1);
  EXPECT_TRUE(matches((a * 2.0 - b) / 4.0 + 1.0, s, want, tol));
}

// ---------------------------------------------------------------- empty tensors
TYPED_TEST(ElementwiseFloat, EmptyTensorsKeepTheirShape) {
  using B = TypeParam;
  using T = Tensor<B, 2>;
  const T e = T::zeros({0, 3});
  const Shape s{0, 3};
  EXPECT_TRUE(matches(e.exp(), s, {}, 0.0));
  EXPECT_TRUE(matches(e.tanh(), s, {}, 0.0));
  EXPECT_TRUE(matches(e.gelu(), s, {}, 0.0));
  EXPECT_TRUE(matches(e.round(), s, {}, 0.0));
  EXPECT_TRUE(matches(e.neg(), s, {}, 0.0));
  EXPECT_TRUE(matches(e.add_scalar(1.0), s, {}, 0.0));
  EXPECT_TRUE(matches(e.pow_scalar(3.0), s, {}, 0.0));
  EXPECT_TRUE(matches(e.clamp(0.0, 1.0), s, {}, 0.0));
  EXPECT_TRUE(matches(e.add(e), s, {}, 0.0));
  EXPECT_TRUE(matches(e.mul(make<B, 2>({1, 2, 3}, {1, 3})), s, {}, 0.0));
  EXPECT_TRUE(matches(T::zeros({0, 1}).sub(make<B, 2>({1, 2, 3}, {1, 3})), s, {}, 0.0));
  EXPECT_TRUE(matches(e.maximum(T::ones({1, 1})), s, {}, 0.0));
  EXPECT_TRUE(matches(e / 2.0, s, {}, 0.0));
  EXPECT_TRUE(matches(T::zeros({3, 0}).sigmoid(), Shape{3, 0}, {}, 0.0));
}

// ---------------------------------------------------------------- NaN and Inf rules (IEEE / PyTorch)
TYPED_TEST(ElementwiseFloat, NanAndInfRules) {
  using B = TypeParam;
  const auto x = make<B, 1>({-kInf, kInf, kNaN, 0.0, -1.0}, {5});
  const Shape s{5};
  EXPECT_TRUE(matches(x.exp(), s, {0.0, kInf, kNaN, 1.0, std::exp(-1.0)}, Tol<B>::loose));
  EXPECT_TRUE(matches(x.log(), s, {kNaN, kInf, kNaN, -kInf, kNaN}, 0.0));
  EXPECT_TRUE(matches(x.log1p(), s, {kNaN, kInf, kNaN, 0.0, -kInf}, 0.0));
  EXPECT_TRUE(matches(x.sqrt(), s, {kNaN, kInf, kNaN, 0.0, kNaN}, 0.0));
  EXPECT_TRUE(matches(x.recip(), s, {-0.0, 0.0, kNaN, kInf, -1.0}, 0.0));
  EXPECT_TRUE(matches(x.abs(), s, {kInf, kInf, kNaN, 0.0, 1.0}, 0.0));
  EXPECT_TRUE(matches(x.neg(), s, {kInf, -kInf, kNaN, -0.0, 1.0}, 0.0));
  EXPECT_TRUE(matches(x.sign(), s, {-1.0, 1.0, kNaN, 0.0, -1.0}, 0.0));
  EXPECT_TRUE(matches(x.floor(), s, {-kInf, kInf, kNaN, 0.0, -1.0}, 0.0));
  EXPECT_TRUE(matches(x.ceil(), s, {-kInf, kInf, kNaN, 0.0, -1.0}, 0.0));
  EXPECT_TRUE(matches(x.round(), s, {-kInf, kInf, kNaN, 0.0, -1.0}, 0.0));
  EXPECT_TRUE(matches(x.relu(), s, {0.0, kInf, kNaN, 0.0, 0.0}, 0.0));
  // Saturating functions reach their limits (within a few ulp for the fast f32 forms) and propagate NaN.
  EXPECT_TRUE(matches(x.tanh(), s, {-1.0, 1.0, kNaN, 0.0, std::tanh(-1.0)}, Tol<B>::loose));
  EXPECT_TRUE(matches(x.sigmoid(), s, {0.0, 1.0, kNaN, 0.5, 1.0 / (1.0 + std::exp(1.0))}, Tol<B>::loose));
  EXPECT_TRUE(matches(x.erf(), s, {-1.0, 1.0, kNaN, 0.0, std::erf(-1.0)}, Tol<B>::loose));
  // ... and saturate to exactly +-1 (0 and 1 for sigmoid) at infinity and far out.
  const auto far = make<B, 1>({-kInf, kInf, -30.0, 30.0}, {4});
  EXPECT_EQ(values(far.tanh()), (std::vector<double>{-1.0, 1.0, -1.0, 1.0}));
  EXPECT_EQ(values(far.erf()), (std::vector<double>{-1.0, 1.0, -1.0, 1.0}));
  EXPECT_EQ(values(far.sigmoid())[0], 0.0);
  EXPECT_EQ(values(far.sigmoid())[1], 1.0);
  EXPECT_TRUE(std::isnan(values(x.gelu())[2]));
  EXPECT_TRUE(std::isnan(values(x.gelu(true))[2]));
  EXPECT_EQ(values(x.gelu())[1], kInf);
  EXPECT_EQ(values(x.gelu(true))[1], kInf);
  EXPECT_TRUE(std::isnan(values(x.sin())[1]));  // sin(inf) is NaN
  EXPECT_TRUE(std::isnan(values(x.cos())[0]));
}

TYPED_TEST(ElementwiseFloat, NanPropagatesThroughMaxMinClamp) {
  using B = TypeParam;
  const auto a = make<B, 1>({kNaN, 1.0, kNaN, -kInf, 2.0}, {5});
  const auto b = make<B, 1>({1.0, kNaN, kNaN, 0.0, kInf}, {5});
  const Shape s{5};
  EXPECT_TRUE(matches(a.maximum(b), s, {kNaN, kNaN, kNaN, 0.0, kInf}, 0.0));
  EXPECT_TRUE(matches(b.maximum(a), s, {kNaN, kNaN, kNaN, 0.0, kInf}, 0.0));
  EXPECT_TRUE(matches(a.minimum(b), s, {kNaN, kNaN, kNaN, -kInf, 2.0}, 0.0));
  EXPECT_TRUE(matches(b.minimum(a), s, {kNaN, kNaN, kNaN, -kInf, 2.0}, 0.0));
  EXPECT_TRUE(matches(a.clamp(-1.0, 1.5), s, {kNaN, 1.0, kNaN, -1.0, 1.5}, 0.0));
  EXPECT_TRUE(matches(a.clamp_min(0.0), s, {kNaN, 1.0, kNaN, 0.0, 2.0}, 0.0));
  EXPECT_TRUE(matches(a.clamp_max(0.0), s, {kNaN, 0.0, kNaN, -kInf, 0.0}, 0.0));
  EXPECT_TRUE(matches(a.relu(), s, {kNaN, 1.0, kNaN, 0.0, 2.0}, 0.0));
  // Broadcast operand holding NaN.
  const auto n = make<B, 2>({kNaN}, {1, 1});
  EXPECT_TRUE(matches(make<B, 2>({1, 2}, {1, 2}).maximum(n), Shape{1, 2}, {kNaN, kNaN}, 0.0));
}

TYPED_TEST(ElementwiseFloat, DivisionByZeroAndPowEdgeCases) {
  using B = TypeParam;
  const auto num = make<B, 1>({1.0, -1.0, 0.0, kInf}, {4});
  const auto zero = make<B, 1>({0.0, 0.0, 0.0, 0.0}, {4});
  EXPECT_TRUE(matches(num.div(zero), Shape{4}, {kInf, -kInf, kNaN, kInf}, 0.0));
  EXPECT_TRUE(matches(num / 0.0, Shape{4}, {kInf, -kInf, kNaN, kInf}, 0.0));
  EXPECT_TRUE(matches(num.rdiv_scalar(0.0), Shape{4}, {0.0, -0.0, kNaN, 0.0}, 0.0));
  // pow: x^0 = 1 even for NaN and inf; 1^y = 1 even for NaN; 0^-1 = inf; (-8)^(1/3) is NaN.
  const auto base = make<B, 1>({kNaN, kInf, 1.0, 0.0, -8.0, -2.0}, {6});
  const auto expo = make<B, 1>({0.0, 0.0, kNaN, -1.0, 1.0 / 3.0, 3.0}, {6});
  EXPECT_TRUE(matches(base.pow(expo), Shape{6}, {1.0, 1.0, 1.0, kInf, kNaN, -8.0}, Tol<B>::exact));
}

}  // namespace elementwise_cases
}  // namespace ember::test
