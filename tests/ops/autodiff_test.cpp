// Gradients on every autodiff backend agree with Autodiff<Cpu<double>>, whose gradients tests/grad checks against
// finite differences. Each case evaluates L = sum(f(inputs) * w) with fixed weights w on the backend under test and
// on the f64 CPU reference, from the same input values, and compares every input's gradient (normalized error).
// This is how a GPU backend's backward passes (which reuse its forward kernels: matmul, conv, pooling, FFT,
// reductions, indexing) are tested. Plain (non-autodiff) backends skip.
#include <array>
#include <tuple>
#include <vector>

#include "engine/tensor/fft.hpp"
#include "tests/support/grad_agreement.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace autodiff_cases {

// Deterministic, well-spread values in [lo, hi) (no ties, so max-like ops have unique winners).
template <std::size_t D>
In<D> values(std::array<int64_t, D> shape, double lo, double hi, uint64_t salt) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const uint64_t h = (i + 1) * 2654435761u + salt * 40503u;
    v[i] = lo + (hi - lo) * (static_cast<double>((h >> 7) % 100003) / 100003.0);
  }
  return {v, shape};
}

template <class B>
class AutodiffAgreement : public ::testing::Test {
 protected:
  void SetUp() override {
    if constexpr (!AutodiffBackend<B>) GTEST_SKIP() << "plain backend: no gradients to compare";
  }
  // f32 backends accumulate in f32. Measured normalized errors against the f64 reference, worst case per backend
  // over these cases: CPU 3.0e-7, Vulkan (lavapipe) 3.3e-7 (both BinaryBroadcast; the rest 2e-8..1.7e-7). 2e-6 is
  // ~6x the worst: room for another device's rounding, while a wrong backward rule (off by O(1e-3) or more) fails.
  // GEMM-backed cases (matmul, conv) take gemm_tol(kTol): f16's bound where the f16 GEMM runs (op_suite_vulkan_f16).
  // Finite differences are not used here (tests/grad checks the f64 CPU reference that way), so none is skipped.
  static constexpr double kTol = std::is_same_v<typename B::FloatElem, double> ? 1e-10 : 2e-6;
};
TYPED_TEST_SUITE(AutodiffAgreement, TestBackends, BackendNames);

TYPED_TEST(AutodiffAgreement, UnaryChain) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x) {
      return x.exp().add(x.tanh()).add(x.sigmoid()).add(x.gelu()).add(x.sin()).add(x.mul(x).add_scalar(1.0).sqrt())
          .add(x.abs().add_scalar(1.0).log()).add(x.relu().mul_scalar(3.0)).add(x.erf());
    };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<2>({3, 5}, -2.0, 2.0, 1)));
  }
}

TYPED_TEST(AutodiffAgreement, BinaryBroadcast) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& a, const auto& b) {
      return a.mul(b).add(a.div(b.abs().add_scalar(1.0))).sub(b.pow_scalar(2.0)).add(a.maximum(b)).add(a.minimum(b));
    };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<3>({2, 3, 4}, -1.5, 1.5, 2), values<3>({1, 3, 1}, 0.5, 2.0, 3)));
  }
}

TYPED_TEST(AutodiffAgreement, Reductions) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x) {
      return x.sum_dim(1).add(x.mean_dim(1)).add(x.max_dim(1)).add(x.min_dim(1)).add(x.prod_dim(1)).add(
          x.sum().reshape(std::array<int64_t, 2>{1, 1}));
    };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<2>({4, 5}, 0.5, 1.5, 4)));
  }
}

TYPED_TEST(AutodiffAgreement, SoftmaxAndLogSoftmax) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x) { return x.softmax(1).add(x.log_softmax(0)); };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<2>({6, 7}, -3.0, 3.0, 5)));
  }
}

TYPED_TEST(AutodiffAgreement, Matmul) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& a, const auto& b) { return a.matmul(b).add(b.transpose().matmul(a.transpose()).transpose()); };
    EXPECT_TRUE(agrees<TypeParam>(gemm_tol<TypeParam>(this->kTol), f, values<3>({2, 5, 7}, -1.0, 1.0, 6), values<3>({2, 7, 5}, -1.0, 1.0, 7)));
  }
}

TYPED_TEST(AutodiffAgreement, LayoutOps) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x) {
      const auto p = x.permute({2, 0, 1});                      // [4, 2, 3]
      const auto n = x.narrow(2, 1, 2).flip({0, 2});            // [2, 3, 2]
      const auto c = decltype(n)::cat({n, n.mul_scalar(2.0)}, 1);  // [2, 6, 2]
      const auto e = x.narrow(1, 0, 1).expand(std::array<int64_t, 3>{2, 3, 4});
      return p.sum_dim(0).reshape(std::array<int64_t, 3>{1, 2, 3}).sum_dim(1).sum_dim(2)
          .add(c.sum().reshape(std::array<int64_t, 3>{1, 1, 1}))
          .add(e.mul(x).sum_dim(2).sum_dim(1).reshape(std::array<int64_t, 3>{2, 1, 1}).sum_dim(0));
    };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<3>({2, 3, 4}, -1.0, 1.0, 8)));
  }
}

TYPED_TEST(AutodiffAgreement, Indexing) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x) {
      using B = typename std::decay_t<decltype(x)>::Backend_;
      const auto idx = Tensor<B, 1, Int>::from_values(std::vector<int64_t>{2, 0, 2, 1}, {4});
      const auto gidx = Tensor<B, 2, Int>::from_values(std::vector<int64_t>{0, 3, 3, 1, 2, 2, 0, 1, 1, 0, 3, 2}, {3, 4});
      return x.index_select(0, idx).sum_dim(0).add(x.gather(1, gidx).sum_dim(0));
    };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<2>({3, 4}, -1.0, 1.0, 9)));
  }
}

TYPED_TEST(AutodiffAgreement, ConvAndPooling) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x, const auto& w, const auto& b) {
      using B = typename std::decay_t<decltype(x)>::Backend_;
      Conv2dOptions o;
      o.padding = {1, 1};
      const auto y = conv2d<B>(x, w, b, o).relu();
      Pool2dOptions p;
      return max_pool2d<B>(y, p).add(avg_pool2d<B>(y, p)).add(adaptive_avg_pool2d<B>(y, {3, 3}));
    };
    EXPECT_TRUE(agrees<TypeParam>(gemm_tol<TypeParam>(this->kTol), f, values<4>({2, 3, 6, 6}, -1.0, 1.0, 10),
                                  values<4>({4, 3, 3, 3}, -0.5, 0.5, 11), values<1>({4}, -0.1, 0.1, 12)));
  }
}

TYPED_TEST(AutodiffAgreement, Fft) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x) {
      const auto spectrum = rfft(x);                    // [3, 5, 2]
      const auto back = irfft(spectrum.mul(spectrum), 9);  // [3, 9]
      return fft(spectrum).reshape(std::array<int64_t, 2>{3, 10}).sum_dim(1).add(back.sum_dim(1)).add(
          ifft(spectrum).sum_dim(1).reshape(std::array<int64_t, 2>{3, 2}).sum_dim(1));
    };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<2>({3, 9}, -1.0, 1.0, 13)));
  }
}

// ---------------------------------------------------------------- every differentiable op (engine/backend/ops.def's
// float families and the Tensor API's composites), each at least once in an agreement case.

TYPED_TEST(AutodiffAgreement, EveryUnaryOp) {
  if constexpr (AutodiffBackend<TypeParam>) {
    // x in [0.15, 0.85]: inside every domain (asin, acos, atanh: |x| < 1; log, sqrt, recip: x > 0); acosh at x + 1.2.
    // sign, floor, ceil and round have zero gradients, which must come back as zeros (not missing).
    auto smooth = [](const auto& x) {
      return x.neg().add(x.abs()).add(x.exp()).add(x.log()).add(x.log1p()).add(x.sqrt()).add(x.sin()).add(x.cos())
          .add(x.tanh()).add(x.sigmoid()).add(x.erf()).add(x.recip()).add(x.relu()).add(x.gelu()).add(x.gelu(true))
          .add(x.asin()).add(x.acos()).add(x.atan()).add(x.sinh()).add(x.cosh()).add(x.asinh())
          .add(x.add_scalar(1.2).acosh()).add(x.atanh());
    };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, smooth, values<2>({4, 5}, 0.15, 0.85, 21)));
    auto steps = [](const auto& x) { return x.sign().add(x.floor()).add(x.ceil()).add(x.round()).add(x); };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, steps, values<2>({4, 5}, -2.0, 2.0, 22)));
    auto negative = [](const auto& x) { return x.abs().add(x.relu()).add(x.gelu()).add(x.gelu(true)).add(x.sign()); };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, negative, values<2>({4, 5}, -3.0, -0.1, 23)));
  }
}

TYPED_TEST(AutodiffAgreement, EveryScalarOp) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x) {
      return x.add_scalar(0.5).mul(x.sub_scalar(0.25)).add(x.mul_scalar(-1.5)).add(x.div_scalar(3.0))
          .add(x.pow_scalar(3.0)).add(x.pow_scalar(0.5)).add(x.clamp_min(0.6)).add(x.clamp_max(0.9))
          .add(x.clamp(0.5, 1.0)).add(x.rsub_scalar(2.0).mul(x)).add(x.rdiv_scalar(1.5)).add(x.remainder_scalar(0.7));
    };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<2>({3, 7}, 0.2, 1.6, 24)));
  }
}

TYPED_TEST(AutodiffAgreement, EveryBinaryOp) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& a, const auto& b) {
      return a.add(b).sub(b.mul(a)).add(a.div(b)).add(a.pow(b)).add(a.maximum(b)).add(a.minimum(b)).add(a.atan2(b))
          .add(a.remainder(b));
    };
    // a > 0 for pow's log(a) term; b in [0.3, 0.9] and a in [0.1, 2]: remainder's floor(a / b) jumps between samples.
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<2>({3, 4}, 0.1, 2.0, 25), values<2>({3, 4}, 0.3, 0.9, 26)));
  }
}

TYPED_TEST(AutodiffAgreement, WholeTensorReductionsAndVariance) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x) {
      return x.sum().add(x.mean()).add(x.prod()).add(x.max()).add(x.min()).reshape(std::array<int64_t, 2>{1, 1})
          .add(x.var(1)).add(x.var(0, 0).sum_dim(1).reshape(std::array<int64_t, 2>{1, 1}));
    };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<2>({3, 4}, 0.6, 1.4, 27)));
  }
}

TYPED_TEST(AutodiffAgreement, MoreLayoutOps) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x) {  // x: [2, 3, 4]; each part flattened, so every output element has its own weight
      using B = typename std::decay_t<decltype(x)>::Backend_;
      const auto u = x.template unsqueeze<4>(0).repeat({1, 1, 2, 1}).template squeeze<3>(0);  // [2, 6, 4]
      const auto s = x.slice({{0, 1}, {1, std::nullopt}, {0, 3}});                            // [1, 2, 3]
      const auto w = x.swap_dims(0, 2).transpose().repeat_dim(0, 2);                           // [8, 2, 3]
      return Tensor<B, 1>::cat({u.reshape(std::array<int64_t, 1>{48}), s.reshape(std::array<int64_t, 1>{6}),
                                w.reshape(std::array<int64_t, 1>{48})},
                               0);
    };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<3>({2, 3, 4}, -1.0, 1.0, 28)));
  }
}

TYPED_TEST(AutodiffAgreement, MoreIndexingAndMasking) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f = [](const auto& x, const auto& v) {  // x: [3, 4], v: [3, 4]
      using B = typename std::decay_t<decltype(x)>::Backend_;
      using T = std::decay_t<decltype(x)>;
      const auto idx = Tensor<B, 2, Int>::from_values(std::vector<int64_t>{0, 2, 2, 1, 3, 0, 1, 1, 2, 0, 3, 3}, {3, 4});
      const auto rows = Tensor<B, 1, Int>::from_values(std::vector<int64_t>{2, 0}, {2});
      const auto mask = x.gt(0.0);
      const auto scattered = T::from_values(std::vector<double>(12, 0.0), {3, 4}).scatter_add(1, idx, v.mul(x));
      const auto assigned = x.select_assign(0, rows, v.narrow(0, 0, 2).mul_scalar(2.0));
      const auto sliced = x.slice_assign({{1, 3}, {0, 2}}, v.narrow(0, 0, 2).narrow(1, 0, 2).exp());
      return scattered.add(assigned).add(sliced).add(x.mask_fill(mask, 0.5).mul(v)).add(x.mask_where(mask, v.mul(v)));
    };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<2>({3, 4}, -1.0, 1.0, 29), values<2>({3, 4}, -1.0, 1.0, 30)));
  }
}

TYPED_TEST(AutodiffAgreement, Conv1dAndPoolingGeometries) {
  if constexpr (AutodiffBackend<TypeParam>) {
    auto f1 = [](const auto& x, const auto& w, const auto& b) {
      using B = typename std::decay_t<decltype(x)>::Backend_;
      Conv1dOptions o;
      o.stride = 2;
      o.padding = 2;
      o.dilation = 2;
      o.groups = 2;
      return conv1d<B>(x, w, b, o);
    };
    EXPECT_TRUE(agrees<TypeParam>(gemm_tol<TypeParam>(this->kTol), f1, values<3>({2, 4, 9}, -1.0, 1.0, 31),
                                  values<3>({6, 2, 3}, -0.5, 0.5, 32), values<1>({6}, -0.1, 0.1, 33)));
    auto f2 = [](const auto& x) {
      using B = typename std::decay_t<decltype(x)>::Backend_;
      Pool2dOptions overlap;  // 3x3 windows at stride 2 overlap; padding 1 with and without counting it
      overlap.kernel = {3, 3};
      overlap.stride = {2, 2};
      overlap.padding = {1, 1};
      Pool2dOptions exclude = overlap;
      exclude.count_include_pad = false;
      Pool2dOptions dilated;
      dilated.kernel = {2, 2};
      dilated.stride = {1, 1};
      dilated.dilation = {2, 2};
      return max_pool2d<B>(x, overlap).add(avg_pool2d<B>(x, overlap)).add(avg_pool2d<B>(x, exclude)).sum_dim(3)
          .add(max_pool2d<B>(x, dilated).sum_dim(3).narrow(2, 0, 3)).add(adaptive_avg_pool2d<B>(x, {3, 2}).sum_dim(3));
    };
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f2, values<4>({2, 2, 5, 6}, -1.0, 1.0, 34)));
  }
}

}  // namespace autodiff_cases
}  // namespace ember::test
