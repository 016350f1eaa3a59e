// The optional packed attention op (optional_ops.hpp HasPackedSdpa): attention on one qkv Linear's rows [N, T, 3d].
// HideOptional hides it and the CPU provides it for short sequences. Its result is splitting q, k, v into heads
// (head h at columns h * E of each block), scaled_dot_product_attention and merging the heads -- written here with
// Tensor ops, independently of the composed default -- forward and, through Autodiff, the gradient of qkv; the CPU
// kernel and the composed default agree on the same primitives; past the GEMM path's bound the CPU declines and the
// dispatcher's composed default runs.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "engine/nn/functional/packed_attention.hpp"
#include "engine/nn/functional/scaled_dot_product_attention.hpp"
#include "tests/support/hide_optional.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace {

using C = Cpu<double>;
static_assert(optional_ops::HasPackedSdpa<C> && optional_ops::HasPackedSdpa<Cpu<float>>);
static_assert(!optional_ops::HasPackedSdpa<HideOptional<C>>);
static_assert(optional_ops::HasPackedSdpa<Autodiff<HideOptional<C>>>);

template <class B>
Tensor<B, 3> values_of(std::array<int64_t, 3> shape, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(static_cast<std::size_t>(shape[0] * shape[1] * shape[2]));
  for (auto& x : v) x = -1.5 + 3 * rng.uniform();
  return Tensor<B, 3>::from_values(v, shape);
}
template <class T>
std::vector<double> vec(const T& t) { return t.into_data().template to_vec<double>(); }

// The reference: split, attend, merge with Tensor ops.
template <class B>
Tensor<B, 3> split_attend_merge(const Tensor<B, 3>& qkv, int64_t h, bool causal) {
  const int64_t n = qkv.dim(0), t = qkv.dim(1), d = qkv.dim(2) / 3, e = d / h;
  auto heads = [&](int64_t i) {
    return qkv.narrow(2, i * d, d).reshape(std::array<int64_t, 4>{n, t, h, e}).swap_dims(1, 2);
  };
  const auto y = nn::scaled_dot_product_attention(heads(0), heads(1), heads(2), std::nullopt, causal);
  return y.swap_dims(1, 2).reshape(std::array<int64_t, 3>{n, t, d});
}

// Forward and the gradient of qkv under a weighted sum, packed against the reference, on Autodiff<B>.
template <class B>
void check_against_reference(int64_t t, bool causal) {
  SCOPED_TRACE(testing::Message() << B::name() << " t " << t << " causal " << causal);
  using AD = Autodiff<B>;
  const int64_t n = 2, h = 3, e = 4;
  const auto qkv = values_of<AD>({n, t, 3 * h * e}, 1).require_grad();
  const auto w = values_of<AD>({n, t, h * e}, 2);
  const auto packed = nn::packed_scaled_dot_product_attention(qkv, h, causal);
  const auto ref = split_attend_merge(qkv, h, causal);
  EXPECT_EQ(packed.shape(), ref.shape());
  EXPECT_TRUE(close(vec(packed), vec(ref), 1e-12)) << "out";
  const auto gp = packed.mul(w).sum().backward();
  const auto gr = ref.mul(w).sum().backward();
  EXPECT_TRUE(close(vec(*qkv.grad(gp)), vec(*qkv.grad(gr)), 1e-12)) << "dqkv";
}

TEST(OptionalPackedSdpa, MatchesSplitAttendMerge) {
  for (bool causal : {true, false}) {
    check_against_reference<C>(64, causal);             // the CPU's packed kernel
    check_against_reference<HideOptional<C>>(9, causal);  // the composed default
    check_against_reference<C>(130, causal);            // past the bound: the CPU declines, the default runs
  }
}

TEST(OptionalPackedSdpa, CpuKernelMatchesComposed) {
  const int64_t h = 2, e = 3;
  for (int64_t t : {1, 17, 64})
    for (bool causal : {true, false}) {
      const auto qkv = values_of<C>({3, t, 3 * h * e}, 3).primitive();
      const auto dout = values_of<C>({3, t, h * e}, 4).primitive();
      const SdpaOptions o{causal, 0.6};
      const auto fused = C::float_sdpa_packed(qkv, h, o);
      ASSERT_TRUE(fused.has_value());
      const auto composed = optional_ops::composed::float_sdpa_packed<C>(qkv, h, o);
      EXPECT_EQ(C::shape<Float>(fused->out), (Shape{3, t, h * e}));
      EXPECT_TRUE(close(vec(Tensor<C, 3>(fused->out)), vec(Tensor<C, 3>(composed.out)), 1e-12)) << "out t " << t;
      EXPECT_TRUE(close(vec(Tensor<C, 3>(fused->lse)), vec(Tensor<C, 3>(composed.lse)), 1e-12)) << "lse t " << t;
      const auto gf = C::float_sdpa_packed_backward(qkv, fused->out, fused->lse, dout, h, o);
      ASSERT_TRUE(gf.has_value());
      const auto gc = optional_ops::composed::float_sdpa_packed_backward<C>(qkv, composed.out, composed.lse, dout, h, o);
      EXPECT_TRUE(close(vec(Tensor<C, 3>(*gf)), vec(Tensor<C, 3>(gc)), 1e-12)) << "dqkv t " << t;
    }
  // Past the GEMM path's bound the CPU has no kernel.
  const auto long_qkv = values_of<C>({1, 200, 6}, 5).primitive();
  EXPECT_FALSE(C::float_sdpa_packed(long_qkv, 1, SdpaOptions{true, 1.0}).has_value());
}

TEST(OptionalPackedSdpa, RejectsColumnsNotThreeHeadBlocks) {
  const auto qkv = values_of<C>({1, 4, 10}, 6);
  EXPECT_THROW(nn::packed_scaled_dot_product_attention(qkv, 2), ShapeError);
  EXPECT_THROW(nn::packed_scaled_dot_product_attention(qkv, 0), ShapeError);
}

}  // namespace
}  // namespace ember::test
