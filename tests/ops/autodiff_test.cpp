// Gradients on every autodiff backend agree with Autodiff<Cpu<double>>, whose gradients tests/grad checks against
// finite differences. Each case evaluates L = sum(f(inputs) * w) with fixed weights w on the backend under test and
// on the f64 CPU reference, from the same input values, and compares every input's gradient (normalized error).
// This is how a GPU backend's backward passes (which reuse its forward kernels: matmul, conv, pooling, FFT,
// reductions, indexing) are tested. Plain (non-autodiff) backends skip.
#include <array>
#include <tuple>
#include <vector>

#include "engine/tensor/fft.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace {

template <std::size_t D>
struct In {
  std::vector<double> v;
  std::array<int64_t, D> shape;
};

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

template <class B, class F, std::size_t... Ds>
std::vector<std::vector<double>> gradients(F&& f, const In<Ds>&... in) {
  auto leaves = std::make_tuple(Tensor<B, Ds>::from_values(in.v, in.shape).require_grad()...);
  auto out = std::apply(f, leaves);
  using Out = decltype(out);
  std::vector<double> w(static_cast<std::size_t>(out.numel()));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = (i % 2 ? -1.0 : 1.0) * (0.5 + static_cast<double>(i % 7) / 7.0);
  auto grads = out.mul(Out::from_values(w, out.dims())).sum().backward();
  std::vector<std::vector<double>> result;
  std::apply(
      [&](const auto&... leaf) {
        (result.push_back(leaf.grad(grads) ? leaf.grad(grads)->into_data().template to_vec<double>()
                                           : std::vector<double>{}),
         ...);
      },
      leaves);
  return result;
}

template <class B, class F, std::size_t... Ds>
::testing::AssertionResult agrees(double tol, F&& f, const In<Ds>&... in) {
  const auto got = gradients<B>(f, in...);
  const auto want = gradients<Autodiff<Cpu<double>>>(f, in...);
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i].empty()) return ::testing::AssertionFailure() << "input " << i << ": no gradient";
    auto r = close(got[i], want[i], tol);
    if (!r) return r << " (input " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

template <class B>
class AutodiffAgreement : public ::testing::Test {
 protected:
  void SetUp() override {
    if constexpr (!AutodiffBackend<B>) GTEST_SKIP() << "plain backend: no gradients to compare";
  }
  // f32 backends accumulate in f32: gradients of these small problems agree with f64 to ~1e-6; 1e-4 leaves room
  // for transcendental approximations without hiding a wrong backward (those are off by O(1)).
  static constexpr double kTol = std::is_same_v<typename B::FloatElem, double> ? 1e-10 : 1e-4;
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
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<3>({2, 5, 7}, -1.0, 1.0, 6), values<3>({2, 7, 5}, -1.0, 1.0, 7)));
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
    EXPECT_TRUE(agrees<TypeParam>(this->kTol, f, values<4>({2, 3, 6, 6}, -1.0, 1.0, 10),
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

}  // namespace
}  // namespace ember::test
