// Inverse trigonometric and hyperbolic ops, atan2, remainder (Float and Int) and isnan/isinf on every backend,
// against NumPy's values (tests/reference/trig_reference.hpp, from gen_trig_reference.py) at the domain edges:
// asin(>1) and acosh(<1) are NaN, atanh(+-1) = +-inf, remainder by negative divisors takes their sign, NaN and
// inf inputs. Values are compared element by element (relative error), because these inputs span 1e-7 .. 1e38 and
// one norm over all of them would hide the small ones. Dense ulp bounds: elementwise_approx_test.cpp.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/reference/trig_reference.hpp"
#include "tests/support/test_backends.hpp"
#include "tests/support/int_width.hpp"

namespace ember::test {
namespace elementwise_trig_cases {

// Shape, then every element within relative error tol (NaN / inf exactly, as `close` does).
template <class B, std::size_t D, class K>
::testing::AssertionResult each_matches(const Tensor<B, D, K>& t, const Shape& shape, const std::vector<double>& want,
                                        double tol) {
  if (!(t.shape() == shape))
    return ::testing::AssertionFailure() << "shape " << t.shape().to_string() << " != expected " << shape.to_string();
  const auto got = values(t);
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size();
  for (std::size_t i = 0; i < got.size(); ++i) {
    auto r = close({got[i]}, {want[i]}, tol);
    if (!r) return r << " (element " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

template <class B>
class ElementwiseTrig : public ::testing::Test {};
TYPED_TEST_SUITE(ElementwiseTrig, TestBackends, BackendNames);

TYPED_TEST(ElementwiseTrig, InverseTrigAndHyperbolicMatchNumpy) {
  using B = TypeParam;
  using T = Tensor<B, 1>;
  const int64_t n = static_cast<int64_t>(trig_ref::trig_n);
  const T x = make<B, 1>(V(trig_ref::trig_x), {n});
  struct Case {
    const char* name;
    std::function<T(const T&)> f;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {"asin", [](const T& t) { return t.asin(); }, V(trig_ref::asin_out)},
      {"acos", [](const T& t) { return t.acos(); }, V(trig_ref::acos_out)},
      {"atan", [](const T& t) { return t.atan(); }, V(trig_ref::atan_out)},
      {"sinh", [](const T& t) { return t.sinh(); }, V(trig_ref::sinh_out)},
      {"cosh", [](const T& t) { return t.cosh(); }, V(trig_ref::cosh_out)},
      {"asinh", [](const T& t) { return t.asinh(); }, V(trig_ref::asinh_out)},
      {"acosh", [](const T& t) { return t.acosh(); }, V(trig_ref::acosh_out)},
      {"atanh", [](const T& t) { return t.atanh(); }, V(trig_ref::atanh_out)},
  };
  for (const auto& c : cases) EXPECT_TRUE(each_matches(c.f(x), Shape{n}, c.want, Tol<B>::exact)) << c.name;
}

TYPED_TEST(ElementwiseTrig, Atan2BroadcastsEveryQuadrantAndSpecialValue) {
  using B = TypeParam;
  const auto y = make<B, 2>(V(trig_ref::atan2_y), {8, 1});
  const auto x = make<B, 2>(V(trig_ref::atan2_x), {1, 8});
  EXPECT_TRUE(each_matches(y.atan2(x), Shape{8, 8}, V(trig_ref::atan2_out), Tol<B>::exact));
}

TYPED_TEST(ElementwiseTrig, FloatRemainderTakesTheDivisorsSign) {
  using B = TypeParam;
  const auto a = make<B, 2>(V(trig_ref::rem_a), {1, 10});
  const auto b = make<B, 2>(V(trig_ref::rem_b), {8, 1});
  EXPECT_TRUE(each_matches(a.remainder(b), Shape{8, 10}, V(trig_ref::rem_out), Tol<B>::exact));
  EXPECT_TRUE(each_matches(a.remainder_scalar(2.5), Shape{1, 10}, V(trig_ref::rem_s_pos_out), Tol<B>::exact));
  EXPECT_TRUE(each_matches(a.remainder_scalar(-1.5), Shape{1, 10}, V(trig_ref::rem_s_neg_out), Tol<B>::exact));
}

TYPED_TEST(ElementwiseTrig, IntRemainderTakesTheDivisorsSignAndRefusesZero) {
  using B = TypeParam;
  SKIP_UNLESS_INT64(B);
  const auto a = Tensor<B, 1, Int>::from_values(VI(trig_ref::rem_ia), {11});
  const auto b = Tensor<B, 1, Int>::from_values(VI(trig_ref::rem_ib), {11});
  EXPECT_EQ(a.remainder(b).template to_vec<int64_t>(), VI(trig_ref::rem_i_out));
  EXPECT_EQ(a.remainder_scalar(-4.0).template to_vec<int64_t>(), VI(trig_ref::rem_i_s_neg_out));
  // Division by zero is the error Int division gives, for the tensor and the scalar form.
  EXPECT_THROW(a.remainder(b.mul_scalar(0.0)), ArgumentError);
  EXPECT_THROW(a.remainder_scalar(0.0), ArgumentError);
}

TYPED_TEST(ElementwiseTrig, IsNanIsInfGiveBool) {
  using B = TypeParam;
  const int64_t n = static_cast<int64_t>(trig_ref::trig_n);
  const auto x = make<B, 1>(V(trig_ref::trig_x), {n});
  EXPECT_TRUE(matches(x.isnan(), Shape{n}, V(trig_ref::isnan_out), 0.0));
  EXPECT_TRUE(matches(x.isinf(), Shape{n}, V(trig_ref::isinf_out), 0.0));
  // Computed NaN and inf (0/0, 1/0) are recognized too, not only stored ones.
  const auto z = make<B, 1>({0.0, 1.0, -1.0}, {3});
  const auto q = z.div(make<B, 1>({0.0, 0.0, 0.0}, {3}));
  EXPECT_TRUE(matches(q.isnan(), Shape{3}, {1, 0, 0}, 0.0));
  EXPECT_TRUE(matches(q.isinf(), Shape{3}, {0, 1, 1}, 0.0));
}

}  // namespace elementwise_trig_cases
}  // namespace ember::test
