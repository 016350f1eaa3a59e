// The composed shape ops (engine/tensor/shape_ops.hpp, einsum.hpp) on every backend against torch 1.13
// (tests/reference/gen_shape_ops_reference.py): pad in its three modes, step slices, baddbmm, einsum's attention
// and layer patterns, logsumexp, std, interpolate; and the errors of malformed arguments.
#include <vector>

#include "tests/reference/shape_ops_reference.hpp"
#include "tests/support/test_backends.hpp"

namespace shape_ops_cases {

using namespace ember;
using namespace ember::test;
namespace ref = ember::shape_ops_ref;

template <class B>
class ShapeOpsTest : public ::testing::Test {};
TYPED_TEST_SUITE(ShapeOpsTest, TestBackends, BackendNames);

template <class B, std::size_t D, std::size_t N>
Tensor<B, D> make(const double (&v)[N], const std::array<int64_t, D>& s) {
  return Tensor<B, D>::from_values(std::vector<double>(v, v + N), s);
}

// Golden values were computed in f64 from the same f32-exact inputs: f32 backends differ by rounding only.
template <class B>
double tol() {
  return gemm_tol<B>(Tol<B>::f64 ? 1e-12 : 1e-5);
}

template <class B, std::size_t D, std::size_t N, std::size_t R>
::testing::AssertionResult matches(const Tensor<B, D>& got, const double (&want)[N], const std::array<int64_t, R>& s) {
  std::vector<int64_t> ws(s.begin(), s.end());
  if (ws.empty()) ws.push_back(1);  // a scalar result is shape [1] in the typed API
  if (!(got.shape() == Shape(ws)))
    return ::testing::AssertionFailure() << "shape " << got.shape().to_string() << " != " << Shape(ws).to_string();
  return close(got.template to_vec<double>(), std::vector<double>(want, want + N), tol<B>());
}

TYPED_TEST(ShapeOpsTest, PadModes) {
  using B = TypeParam;
  const auto x = make<B>(ref::pad_x4, ref::pad_x4_shape);
  EXPECT_TRUE(matches(x.pad({1, 2, 0, 1}, PadMode::Constant, 0.5), ref::pad_constant, ref::pad_constant_shape));
  EXPECT_TRUE(matches(x.pad({2, 1, 1, 2}, PadMode::Reflect), ref::pad_reflect, ref::pad_reflect_shape));
  EXPECT_TRUE(matches(x.pad({1, 3, 2, 0}, PadMode::Replicate), ref::pad_replicate, ref::pad_replicate_shape));
  const auto x3 = make<B>(ref::pad_x3, ref::pad_x3_shape);
  EXPECT_TRUE(matches(x3.pad({-1, 2, 1, -2}), ref::pad_constant_crop, ref::pad_constant_crop_shape));
  EXPECT_TRUE(matches(x3.pad({3, 1}, PadMode::Reflect), ref::pad_reflect1d, ref::pad_reflect1d_shape));
  const auto x5 = make<B>(ref::pad_x5, ref::pad_x5_shape);
  EXPECT_TRUE(
      matches(x5.pad({1, 1, 1, 0, 0, 2}, PadMode::Replicate), ref::pad_replicate3d, ref::pad_replicate3d_shape));
}

// Int and Bool tensors pad like Float ones (the same primitives, kind-generic).
TYPED_TEST(ShapeOpsTest, PadIntAndBool) {
  using B = TypeParam;
  const auto xi = Tensor<B, 2, Int>::from_values(std::vector<int64_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(xi.pad({1, 0}, PadMode::Constant, 7).template to_vec<int64_t>(),
            (std::vector<int64_t>{7, 1, 2, 3, 7, 4, 5, 6}));
  EXPECT_EQ(xi.pad({2, 1}, PadMode::Reflect).template to_vec<int64_t>(),
            (std::vector<int64_t>{3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}));
  const auto xb = Tensor<B, 2, Bool>::from_values(std::vector<bool>{true, false}, {1, 2});
  EXPECT_EQ(xb.pad({0, 2}, PadMode::Replicate).template to_vec<bool>(), (std::vector<bool>{true, false, false, false}));
}

TYPED_TEST(ShapeOpsTest, PadErrors) {
  using B = TypeParam;
  const auto x = make<B>(ref::pad_x3, ref::pad_x3_shape);  // [2, 3, 5]
  EXPECT_THROW(x.pad({1, 2, 3}), ArgumentError);                      // odd length
  EXPECT_THROW(x.pad({1, 1, 1, 1, 1, 1, 1, 1}), ArgumentError);       // more pairs than dims
  EXPECT_THROW(x.pad({5, 0}, PadMode::Reflect), ArgumentError);       // not smaller than the dim
  EXPECT_THROW(x.pad({-1, 0}, PadMode::Replicate), ArgumentError);    // negative
  EXPECT_THROW(x.pad({1, 1, 1, 1, 1, 1}, PadMode::Reflect), ShapeError);  // 3 dims need rank 4
  EXPECT_THROW(x.pad({-3, -3}), ArgumentError);                      // a negative dim
}

TYPED_TEST(ShapeOpsTest, StepSlices) {
  using B = TypeParam;
  const auto x = make<B>(ref::step_x, ref::step_x_shape);
  EXPECT_TRUE(matches(x.slice_step({{0, std::nullopt, 2}, {1, 7, 3}}), ref::step_a, ref::step_a_shape));
  const auto y = make<B>(ref::step_y, ref::step_y_shape);
  EXPECT_TRUE(matches(y.slice_step({{1}, {-2, std::nullopt, 3}, {1, 5, 2}}), ref::step_b, ref::step_b_shape));
  EXPECT_TRUE(matches(y.slice_step({{-3, 9, 2}}), ref::step_c, ref::step_c_shape));
  EXPECT_EQ(y.slice_step({{0}, {0}, {4, 0, 2}}).shape(), (Shape{4, 3, 0}));  // start past end: empty
  EXPECT_THROW(y.slice_step({{0, std::nullopt, 0}}), ArgumentError);
  EXPECT_THROW(y.slice_step({{0, std::nullopt, -1}}), ArgumentError);
  const auto xi = Tensor<B, 1, Int>::arange(0, 10);
  EXPECT_EQ(xi.slice_step({{1, 8, 3}}).template to_vec<int64_t>(), (std::vector<int64_t>{1, 4, 7}));
}

TYPED_TEST(ShapeOpsTest, Baddbmm) {
  using B = TypeParam;
  const auto in = make<B>(ref::bmm_in, ref::bmm_in_shape).template unsqueeze<3>(0);
  const auto b1 = make<B>(ref::bmm_b1, ref::bmm_b1_shape), b2 = make<B>(ref::bmm_b2, ref::bmm_b2_shape);
  EXPECT_TRUE(matches(baddbmm(in, b1, b2, 0.5, 1.5), ref::bmm_out, ref::bmm_out_shape));
  // beta = 0 ignores the input, NaN included (torch).
  const auto nan = Tensor<B, 3>::full({1, 3, 4}, std::nan(""));
  const auto prod = b1.matmul(b2).mul_scalar(2.0).template to_vec<double>();
  EXPECT_TRUE(close(baddbmm(nan, b1, b2, 0.0, 2.0).template to_vec<double>(), prod, tol<B>()));
  EXPECT_THROW(baddbmm(in, b1, b1), ShapeError);
  EXPECT_THROW(baddbmm(Tensor<B, 3>::zeros({2, 2, 4}), b1, b2), ShapeError);
}

TYPED_TEST(ShapeOpsTest, EinsumPatterns) {
  using B = TypeParam;
  const auto a = make<B>(ref::es_bij, ref::es_bij_shape), b = make<B>(ref::es_bjk, ref::es_bjk_shape);
  EXPECT_TRUE(matches(einsum<3>("bij,bjk->bik", a, b), ref::es_bmm, ref::es_bmm_shape));
  const auto q = make<B>(ref::es_q, ref::es_q_shape), k = make<B>(ref::es_k, ref::es_k_shape);
  EXPECT_TRUE(matches(einsum<4>("bhqd,bhkd->bhqk", q, k), ref::es_qk, ref::es_qk_shape));
  const auto m = make<B>(ref::es_m, ref::es_m_shape);
  EXPECT_TRUE(matches(einsum<1>("ii->i", m), ref::es_diag, ref::es_diag_shape));
  EXPECT_TRUE(matches(einsum<1>("ii", m), ref::es_trace, ref::es_trace_shape));
  const auto a0 = a.slice({{0, 1}}).template squeeze<2>(0), a1 = a.slice({{1, 2}}).template squeeze<2>(0);
  EXPECT_TRUE(matches(einsum<2>("ij->ji", a0), ref::es_transpose, ref::es_transpose_shape));
  const auto u = make<B>(ref::es_u, ref::es_u_shape), v = make<B>(ref::es_v, ref::es_v_shape);
  EXPECT_TRUE(matches(einsum<2>("i,j->ij", u, v), ref::es_outer, ref::es_outer_shape));
  const auto w = make<B>(ref::es_w, ref::es_w_shape);
  EXPECT_TRUE(matches(einsum<3>("...ij,...jk->...ik", a, w), ref::es_ellipsis, ref::es_ellipsis_shape));
  EXPECT_TRUE(matches(einsum<3>("bij,jk", a, w), ref::es_implicit, ref::es_implicit_shape));
  EXPECT_TRUE(matches(einsum<1>("ij,ij->i", a1, a0), ref::es_rowdot, ref::es_rowdot_shape));
  EXPECT_TRUE(matches(einsum<1>("bij->", a), ref::es_sum, ref::es_sum_shape));
  const auto x1 = make<B>(ref::es_x1, ref::es_x1_shape), wb = make<B>(ref::es_wb, ref::es_wb_shape),
             x2 = make<B>(ref::es_x2, ref::es_x2_shape);
  EXPECT_TRUE(matches(einsum<2>("bn,anm,bm->ba", x1, wb, x2), ref::es_bilinear, ref::es_bilinear_shape));
}

TYPED_TEST(ShapeOpsTest, EinsumErrors) {
  using B = TypeParam;
  const auto a = Tensor<B, 2>::zeros({2, 3}), b = Tensor<B, 2>::zeros({4, 5});
  EXPECT_THROW(einsum<2>("ij,jk->ik", a, b), ShapeError);          // j: 3 vs 4
  EXPECT_THROW(einsum<2>("ijk->ij", a), ShapeError);               // 3 subscripts for rank 2
  EXPECT_THROW(einsum<2>("ij,jk->ik", a), ArgumentError);          // 2 terms, 1 operand
  EXPECT_THROW(einsum<2>("i1->i", a), ArgumentError);              // invalid character
  EXPECT_THROW(einsum<2>("ij->iz", a), ArgumentError);             // output letter in no operand
  EXPECT_THROW(einsum<2>("ij->ii", a), ArgumentError);             // repeated output letter
  EXPECT_THROW(einsum<2>("ij->i->j", a), ArgumentError);           // two arrows
  EXPECT_THROW(einsum<2>("i..j->ij", a), ArgumentError);           // malformed ellipsis
  EXPECT_THROW(einsum<2>("ii->i", a), ShapeError);                 // diagonal of a non-square pair
  EXPECT_THROW(einsum<3>("ij->ij", a), ShapeError);                // asked for the wrong rank
}

TYPED_TEST(ShapeOpsTest, LogsumexpStable) {
  using B = TypeParam;
  const auto x = make<B>(ref::lse_x, ref::lse_x_shape);  // values up to 40: exp overflows f32 unshifted at 89
  EXPECT_TRUE(matches(x.logsumexp(1), ref::lse_dim1, ref::lse_dim1_shape));
  EXPECT_TRUE(matches(x.logsumexp({0, 1}), ref::lse_all, ref::lse_all_shape));
  EXPECT_TRUE(matches(x.logsumexp(std::vector<int64_t>{}), ref::lse_all, ref::lse_all_shape));
  // Large values stay finite (log(2) + 1000), an all -inf row gives -inf.
  const double inf = std::numeric_limits<double>::infinity();
  const auto big = Tensor<B, 2>::from_values(std::vector<double>{1000, 1000, -inf, -inf}, {2, 2});
  const auto r = big.logsumexp(1).template to_vec<double>();
  EXPECT_NEAR(r[0], 1000 + std::log(2.0), 1e-3);
  EXPECT_EQ(r[1], -inf);
  EXPECT_THROW(x.logsumexp({1, 1}), ArgumentError);
  EXPECT_THROW(x.logsumexp(2), IndexError);
}

TYPED_TEST(ShapeOpsTest, StdCorrection) {
  using B = TypeParam;
  const auto x = make<B>(ref::std_x, ref::std_x_shape);
  EXPECT_TRUE(matches(x.std({0, 2}), ref::std_02, ref::std_02_shape));
  EXPECT_TRUE(matches(x.std(1, 0), ref::std_1c0, ref::std_1c0_shape));
}

TYPED_TEST(ShapeOpsTest, Interpolate) {
  using B = TypeParam;
  using M = InterpolateMode;
  const auto x = make<B>(ref::ip_x, ref::ip_x_shape);
  auto sized = [](M m, int64_t h, int64_t w, bool ac = false) {
    return InterpolateOptions{std::array<int64_t, 2>{h, w}, std::nullopt, m, ac};
  };
  auto scaled = [](M m, double h, double w) {
    return InterpolateOptions{std::nullopt, std::array<double, 2>{h, w}, m, false};
  };
  EXPECT_TRUE(matches(interpolate(x, sized(M::Nearest, 5, 7)), ref::ip_nearest_size, ref::ip_nearest_size_shape));
  EXPECT_TRUE(matches(interpolate(x, scaled(M::Nearest, 1.7, 2.0)), ref::ip_nearest_scale,
                      ref::ip_nearest_scale_shape));
  EXPECT_TRUE(matches(interpolate(x, sized(M::Bilinear, 5, 6)), ref::ip_bilinear, ref::ip_bilinear_shape));
  EXPECT_TRUE(
      matches(interpolate(x, sized(M::Bilinear, 4, 7, true)), ref::ip_bilinear_ac, ref::ip_bilinear_ac_shape));
  EXPECT_TRUE(matches(interpolate(x, scaled(M::Bilinear, 2.0, 1.5)), ref::ip_bilinear_scale,
                      ref::ip_bilinear_scale_shape));
  EXPECT_TRUE(matches(interpolate(x, sized(M::Bilinear, 2, 3)), ref::ip_bilinear_down, ref::ip_bilinear_down_shape));
  EXPECT_THROW(interpolate(x, InterpolateOptions{}), ArgumentError);  // neither size nor scale_factor
  EXPECT_THROW(interpolate(x, sized(M::Nearest, 4, 4, true)), ArgumentError);  // align_corners with nearest
  EXPECT_THROW(interpolate(x, scaled(M::Nearest, 0.1, 1.0)), ArgumentError);  // empty output
}

}  // namespace shape_ops_cases
