// scaled_dot_product_attention (engine/nn/functional/scaled_dot_product_attention.hpp) on every backend against a
// double loop written here: softmax(q k^T * scale + bias [+ causal]) v with bias broadcasting, S != L, Ev != E,
// custom scale, and fully masked rows (defined as 0; torch gives NaN). Then the backend's fused kernel (where it has
// one: optional_ops.hpp HasFusedSdpa) against the composed path (nn::detail::sdpa_naive, every op recorded on its
// own) at sizes that are not multiples of the kernels' tiles, forward and (under Autodiff) every gradient.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "engine/nn/functional/scaled_dot_product_attention.hpp"
#include "tests/reference/sdpa_reference.hpp"
#include "tests/support/grad_agreement.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace attention_cases {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> wave(int64_t n, double seed) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(0.37 * static_cast<double>(i) + seed) * 1.5;
  return v;
}

struct Dims {
  int64_t b, h, l, s, e, ev;
};

// The reference in double. bias has shape bs (each dim 1 or full) or is empty.
std::vector<double> reference(const Dims& d, const std::vector<double>& q, const std::vector<double>& k,
                              const std::vector<double>& v, const std::vector<double>& bias,
                              std::array<int64_t, 4> bs, bool causal, double scale) {
  std::vector<double> out(static_cast<std::size_t>(d.b * d.h * d.l * d.ev), 0.0);
  std::vector<double> p(static_cast<std::size_t>(d.s));
  for (int64_t b = 0; b < d.b; ++b)
    for (int64_t h = 0; h < d.h; ++h)
      for (int64_t i = 0; i < d.l; ++i) {
        double mx = -kInf;
        for (int64_t j = 0; j < d.s; ++j) {
          double sc = 0;
          for (int64_t e = 0; e < d.e; ++e) sc += q[((b * d.h + h) * d.l + i) * d.e + e] * k[((b * d.h + h) * d.s + j) * d.e + e];
          sc *= scale;
          if (!bias.empty()) {
            const int64_t bi = (((bs[0] == 1 ? 0 : b) * bs[1] + (bs[1] == 1 ? 0 : h)) * bs[2] + (bs[2] == 1 ? 0 : i)) *
                                   bs[3] + (bs[3] == 1 ? 0 : j);
            sc += bias[bi];
          }
          if (causal && j > i) sc = -kInf;
          p[j] = sc;
          mx = std::max(mx, sc);
        }
        if (mx == -kInf) continue;  // fully masked: zeros
        double den = 0;
        for (int64_t j = 0; j < d.s; ++j) den += (p[j] = std::exp(p[j] - mx));
        for (int64_t j = 0; j < d.s; ++j)
          for (int64_t e = 0; e < d.ev; ++e)
            out[((b * d.h + h) * d.l + i) * d.ev + e] += p[j] / den * v[((b * d.h + h) * d.s + j) * d.ev + e];
      }
  return out;
}

template <class B>
::testing::AssertionResult sdpa_matches(const Dims& d, const std::vector<double>& bias, std::array<int64_t, 4> bs,
                                        bool causal, std::optional<double> scale = std::nullopt) {
  const auto qv = wave(d.b * d.h * d.l * d.e, 0.1), kv = wave(d.b * d.h * d.s * d.e, 1.3),
             vv = wave(d.b * d.h * d.s * d.ev, 2.9);
  const auto q = make<B, 4>(qv, {d.b, d.h, d.l, d.e});
  const auto k = make<B, 4>(kv, {d.b, d.h, d.s, d.e});
  const auto v = make<B, 4>(vv, {d.b, d.h, d.s, d.ev});
  std::optional<Tensor<B, 4>> bt;
  if (!bias.empty()) bt = make<B, 4>(bias, bs);
  const double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(d.e));
  const auto want = reference(d, qv, kv, vv, bias, bs, causal, sc);
  const auto got = nn::scaled_dot_product_attention(q, k, v, bt, causal, scale);
  return matches(got, Shape{d.b, d.h, d.l, d.ev}, want, gemm_tol<B>(Tol<B>::loose));
}

template <class B>
class Attention : public ::testing::Test {};
TYPED_TEST_SUITE(Attention, TestBackends, BackendNames);

TYPED_TEST(Attention, PlainMatchesReference) {
  EXPECT_TRUE(sdpa_matches<TypeParam>({2, 3, 5, 7, 4, 6}, {}, {}, false));
  EXPECT_TRUE(sdpa_matches<TypeParam>({1, 1, 1, 1, 3, 2}, {}, {}, false));
}

TYPED_TEST(Attention, CustomScale) { EXPECT_TRUE(sdpa_matches<TypeParam>({1, 2, 4, 3, 5, 5}, {}, {}, false, 0.7)); }

TYPED_TEST(Attention, CausalIsTopLeftAligned) {
  EXPECT_TRUE(sdpa_matches<TypeParam>({1, 2, 6, 6, 4, 4}, {}, {}, true));
  EXPECT_TRUE(sdpa_matches<TypeParam>({2, 1, 5, 9, 3, 2}, {}, {}, true));  // S > L
  EXPECT_TRUE(sdpa_matches<TypeParam>({1, 2, 7, 3, 4, 5}, {}, {}, true));  // S < L
}

TYPED_TEST(Attention, BiasBroadcasts) {
  const Dims d{2, 3, 4, 5, 4, 3};
  auto key_padding = wave(2 * 5, 0.5);  // [B, 1, 1, S], key 4 of batch 1 masked
  key_padding[9] = -kInf;
  EXPECT_TRUE(sdpa_matches<TypeParam>(d, key_padding, {2, 1, 1, 5}, false));
  EXPECT_TRUE(sdpa_matches<TypeParam>(d, wave(4 * 5, 0.9), {1, 1, 4, 5}, true));  // [L, S] mask plus causal
  EXPECT_TRUE(sdpa_matches<TypeParam>(d, wave(3 * 5, 0.2), {1, 3, 1, 5}, false));
  EXPECT_TRUE(sdpa_matches<TypeParam>(d, wave(2 * 3 * 4 * 5, 0.4), {2, 3, 4, 5}, false));
}

TYPED_TEST(Attention, FullyMaskedRowIsZero) {
  using B = TypeParam;
  const Dims d{1, 2, 3, 4, 2, 3};
  std::vector<double> mask(3 * 4, 0.0);
  for (int j = 0; j < 4; ++j) mask[4 + j] = -kInf;  // query row 1 sees nothing
  EXPECT_TRUE(sdpa_matches<B>(d, mask, {1, 1, 3, 4}, false));
  const auto q = make<B, 4>(wave(12, 0.1), {1, 2, 3, 2});
  const auto k = make<B, 4>(wave(16, 0.2), {1, 2, 4, 2});
  const auto v = make<B, 4>(wave(24, 0.3), {1, 2, 4, 3});
  const auto out = values(nn::scaled_dot_product_attention(q, k, v, make<B, 4>(mask, {1, 1, 3, 4})));
  for (int h = 0; h < 2; ++h)
    for (int e = 0; e < 3; ++e) EXPECT_EQ(out[(h * 3 + 1) * 3 + e], 0.0) << "head " << h << " col " << e;
}

TYPED_TEST(Attention, ShapeErrorsNameTheOperands) {
  using B = TypeParam;
  const auto q = make<B, 4>(wave(8, 0), {1, 1, 2, 4});
  const auto k = make<B, 4>(wave(12, 0), {1, 1, 3, 4});
  const auto v3 = make<B, 4>(wave(8, 0), {1, 1, 2, 4});
  EXPECT_THROW(nn::scaled_dot_product_attention(q, k, v3), ShapeError);
  const auto bad_bias = make<B, 4>(wave(4, 0), {1, 1, 2, 2});
  EXPECT_THROW(nn::scaled_dot_product_attention(q, k, k, bad_bias), ShapeError);
}

// Forward of the fused path against the composed one over several tiles (the CPU's are 64 x 64; Vulkan's and
// CUDA's smaller), with causal masking, a broadcast bias holding -inf, S != L and Ev != E.
template <class B>
::testing::AssertionResult fused_matches_naive(const Dims& d, std::array<int64_t, 4> bs, bool causal) {
  const auto q = make<B, 4>(wave(d.b * d.h * d.l * d.e, 0.3), {d.b, d.h, d.l, d.e});
  const auto k = make<B, 4>(wave(d.b * d.h * d.s * d.e, 1.1), {d.b, d.h, d.s, d.e});
  const auto v = make<B, 4>(wave(d.b * d.h * d.s * d.ev, 2.2), {d.b, d.h, d.s, d.ev});
  auto bv = wave(bs[0] * bs[1] * bs[2] * bs[3], 0.7);
  for (std::size_t i = 3; i < bv.size(); i += 11) bv[i] = -kInf;
  const auto bias = make<B, 4>(bv, bs);
  const double scale = 0.35;
  const auto want = values(nn::detail::sdpa_naive(q, k, v, bias, causal, scale));
  return matches(nn::scaled_dot_product_attention(q, k, v, bias, causal, scale), Shape{d.b, d.h, d.l, d.ev}, want,
                 gemm_tol<B>(Tol<B>::loose));
}

TYPED_TEST(Attention, FusedMatchesNaiveAcrossTiles) {
  using B = TypeParam;
  EXPECT_TRUE(fused_matches_naive<B>({1, 2, 70, 67, 5, 7}, {1, 2, 1, 67}, false));
  EXPECT_TRUE(fused_matches_naive<B>({1, 2, 70, 67, 5, 7}, {1, 1, 70, 67}, true));
  EXPECT_TRUE(fused_matches_naive<B>({2, 1, 131, 20, 3, 4}, {2, 1, 131, 1}, true));  // S < L, bias per query row
  EXPECT_TRUE(fused_matches_naive<B>({1, 1, 9, 140, 8, 2}, {1, 1, 1, 1}, false));    // S > L, scalar bias
}

// Gradients of q, k, v (and of a bias that requires grad, which takes the composed backward) through the fused
// op against the composed path's, on the autodiff backend.
template <class B>
::testing::AssertionResult grads_match_naive(const Dims& d, std::array<int64_t, 4> bs, bool causal, bool bias_grad) {
  auto bv = wave(bs[0] * bs[1] * bs[2] * bs[3], 0.7);
  for (std::size_t i = 5; i < bv.size(); i += 13) bv[i] = -kInf;
  const In<4> q{wave(d.b * d.h * d.l * d.e, 0.3), {d.b, d.h, d.l, d.e}};
  const In<4> k{wave(d.b * d.h * d.s * d.e, 1.1), {d.b, d.h, d.s, d.e}};
  const In<4> v{wave(d.b * d.h * d.s * d.ev, 2.2), {d.b, d.h, d.s, d.ev}};
  const In<4> b{bv, bs};
  using T4 = Tensor<B, 4>;
  const auto bias_of = [&](const T4& t) { return bias_grad ? t : t.detach(); };
  const auto fused = [&](T4 q4, T4 k4, T4 v4, T4 b4) {
    return nn::scaled_dot_product_attention(q4, k4, v4, bias_of(b4), causal, 0.4);
  };
  const auto naive = [&](T4 q4, T4 k4, T4 v4, T4 b4) {
    return nn::detail::sdpa_naive(q4, k4, v4, bias_of(b4), causal, 0.4);
  };
  const auto got = gradients<B>(alternating_weight, fused, q, k, v, b);
  const auto want = gradients<B>(alternating_weight, naive, q, k, v, b);
  for (std::size_t i = 0; i < 3; ++i) {
    auto r = close(got[i], want[i], gemm_tol<B>(Tol<B>::loose));
    if (!r) return r << " (gradient of input " << i << ")";
  }
  if (bias_grad) return close(got[3], want[3], gemm_tol<B>(Tol<B>::loose)) << " (gradient of the bias)";
  if (!got[3].empty()) return ::testing::AssertionFailure() << "a detached bias got a gradient";
  return ::testing::AssertionSuccess();
}

TYPED_TEST(Attention, FusedGradientsMatchNaive) {
  using B = TypeParam;
  if constexpr (!IsAutodiff<B>::value) {
    GTEST_SKIP() << "gradients: the autodiff backend";
  } else {
    EXPECT_TRUE(grads_match_naive<B>({1, 2, 70, 67, 5, 7}, {1, 2, 1, 67}, false, false));
    EXPECT_TRUE(grads_match_naive<B>({2, 1, 67, 70, 4, 3}, {1, 1, 67, 70}, true, false));
    EXPECT_TRUE(grads_match_naive<B>({1, 2, 20, 9, 3, 5}, {1, 2, 20, 9}, true, true));
    EXPECT_TRUE(grads_match_naive<B>({2, 2, 6, 7, 3, 2}, {2, 1, 1, 7}, false, true));
  }
}

// A fully masked query row: output 0 and no gradient flows through it (all finite), fused and composed alike.
TYPED_TEST(Attention, FullyMaskedRowHasZeroGradient) {
  using B = TypeParam;
  if constexpr (!IsAutodiff<B>::value) {
    GTEST_SKIP() << "gradients: the autodiff backend";
  } else {
    std::vector<double> mask(5 * 6, 0.0);
    for (int j = 0; j < 6; ++j) mask[2 * 6 + j] = -kInf;  // query row 2
    const auto q = make<B, 4>(wave(15, 0.1), {1, 1, 5, 3}).require_grad();
    const auto k = make<B, 4>(wave(18, 0.2), {1, 1, 6, 3}).require_grad();
    const auto v = make<B, 4>(wave(24, 0.3), {1, 1, 6, 4}).require_grad();
    const auto out = nn::scaled_dot_product_attention(q, k, v, make<B, 4>(mask, {1, 1, 5, 6}));
    const auto grads = out.mul(out).sum().backward();
    const auto dq = values(*q.grad(grads));
    for (int e = 0; e < 3; ++e) EXPECT_EQ(dq[2 * 3 + e], 0.0);
    for (double x : values(*k.grad(grads))) EXPECT_TRUE(std::isfinite(x));
    for (double x : values(*v.grad(grads))) EXPECT_TRUE(std::isfinite(x));
  }
}

// Golden values from torch 1.13 (tests/reference/gen_sdpa_reference.py): the output and the gradients of
// sum(out * w) for q, k, v and the bias, forward on every backend, gradients on the autodiff one.
#define EMBER_SDPA_GOLDEN(c)                                                                                       \
  Golden {                                                                                                         \
    VI(ref::sdpa::c##_dims), VI(ref::sdpa::c##_bias_shape), ref::sdpa::c##_causal, ref::sdpa::c##_scale,           \
        V(ref::sdpa::c##_q), V(ref::sdpa::c##_k), V(ref::sdpa::c##_v), V(ref::sdpa::c##_bias), V(ref::sdpa::c##_w), \
        V(ref::sdpa::c##_out), V(ref::sdpa::c##_dq), V(ref::sdpa::c##_dk), V(ref::sdpa::c##_dv),                  \
        V(ref::sdpa::c##_dbias)                                                                                    \
  }
struct Golden {
  std::vector<int64_t> dims, bias_shape;
  bool causal;
  double scale;
  std::vector<double> q, k, v, bias, w, out, dq, dk, dv, dbias;
};

template <class B>
void check_golden(const Golden& g) {
  const std::array<int64_t, 4> qs{g.dims[0], g.dims[1], g.dims[2], g.dims[4]}, ks{g.dims[0], g.dims[1], g.dims[3], g.dims[4]},
      vs{g.dims[0], g.dims[1], g.dims[3], g.dims[5]};
  const bool has_bias = g.bias_shape[0] != 0;
  const std::array<int64_t, 4> bs{g.bias_shape[0], g.bias_shape[1], g.bias_shape[2], g.bias_shape[3]};
  auto q = make<B, 4>(g.q, qs), k = make<B, 4>(g.k, ks), v = make<B, 4>(g.v, vs);
  std::optional<Tensor<B, 4>> bias;
  if (has_bias) bias = make<B, 4>(g.bias, bs);
  // 0 in the reference means the default, which is spelled out here (a plain double: GCC's -Wmaybe-uninitialized
  // misfires on a conditionally empty std::optional<double> copied into several calls).
  const double scale = g.scale == 0 ? 1.0 / std::sqrt(static_cast<double>(g.dims[4])) : g.scale;
  const double tol = gemm_tol<B>(Tol<B>::loose);
  if constexpr (IsAutodiff<B>::value) {
    q = q.require_grad(), k = k.require_grad(), v = v.require_grad();
    if (bias) bias = bias->require_grad();
    const auto out = nn::scaled_dot_product_attention(q, k, v, bias, g.causal, scale);
    EXPECT_TRUE(close(values(out), g.out, tol));
    const auto grads = out.mul(make<B, 4>(g.w, {g.dims[0], g.dims[1], g.dims[2], g.dims[5]})).sum().backward();
    EXPECT_TRUE(close(values(*q.grad(grads)), g.dq, tol)) << "dq";
    EXPECT_TRUE(close(values(*k.grad(grads)), g.dk, tol)) << "dk";
    EXPECT_TRUE(close(values(*v.grad(grads)), g.dv, tol)) << "dv";
    if (bias) {
      EXPECT_TRUE(close(values(*bias->grad(grads)), g.dbias, tol)) << "dbias";
    }
    // The fused backward (a detached bias) gives the same q, k, v gradients.
    if (bias) {
      const auto out2 = nn::scaled_dot_product_attention(q, k, v, bias->detach(), g.causal, scale);
      const auto g2 = out2.mul(make<B, 4>(g.w, {g.dims[0], g.dims[1], g.dims[2], g.dims[5]})).sum().backward();
      EXPECT_TRUE(close(values(*q.grad(g2)), g.dq, tol)) << "dq, fused backward";
      EXPECT_TRUE(close(values(*k.grad(g2)), g.dk, tol)) << "dk, fused backward";
      EXPECT_TRUE(close(values(*v.grad(g2)), g.dv, tol)) << "dv, fused backward";
    }
  } else {
    EXPECT_TRUE(close(values(nn::scaled_dot_product_attention(q, k, v, bias, g.causal, scale)), g.out, tol));
  }
}

TYPED_TEST(Attention, MatchesTorchGolden) {
  check_golden<TypeParam>(EMBER_SDPA_GOLDEN(plain));
  check_golden<TypeParam>(EMBER_SDPA_GOLDEN(padding));
  check_golden<TypeParam>(EMBER_SDPA_GOLDEN(causal));
}

}  // namespace attention_cases
}  // namespace ember::test
