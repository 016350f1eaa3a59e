// scaled_dot_product_attention (engine/nn/functional/scaled_dot_product_attention.hpp) on every backend against a
// double loop written here: softmax(q k^T * scale + bias [+ causal]) v with bias broadcasting, S != L, Ev != E,
// custom scale, and fully masked rows (defined as 0; torch gives NaN).
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "engine/nn/functional/scaled_dot_product_attention.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace {

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

}  // namespace
}  // namespace ember::test
