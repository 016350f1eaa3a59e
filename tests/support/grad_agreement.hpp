#pragma once
// Gradient agreement with Autodiff<Cpu<double>> (whose gradients tests/grad checks against finite differences):
// L = sum(f(inputs) * w) for fixed, uneven weights w (so every output position matters differently) is
// differentiated on the backend under test and on the f64 CPU reference from the same input values, and every
// input's gradient is compared (normalized error). Shared by tests/ops/autodiff_test.cpp and
// backward_geometry_test.cpp, which differ in the ops and the input values they choose.
#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

#include "tests/support/test_backends.hpp"

namespace ember::test {

template <std::size_t D>
struct In {
  std::vector<double> v;
  std::array<int64_t, D> shape;
};

// The weight of output position i: alternating signs, uneven magnitudes.
inline double alternating_weight(std::size_t i) {
  return (i % 2 ? -1.0 : 1.0) * (0.5 + static_cast<double>(i % 7) / 7.0);
}

template <class B, class W, class F, std::size_t... Ds>
std::vector<std::vector<double>> gradients(W&& weight, F&& f, const In<Ds>&... in) {
  auto leaves = std::make_tuple(Tensor<B, Ds>::from_values(in.v, in.shape).require_grad()...);
  auto out = std::apply(f, leaves);
  using Out = decltype(out);
  std::vector<double> w(static_cast<std::size_t>(out.numel()));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = weight(i);
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

// agrees_weighted with weights chosen by the case: one whose outputs' gradients would cancel under alternating
// signs (a bias summed over alternating weights) keeps its tolerance tight with same-sign weights.
template <class B, class W, class F, std::size_t... Ds>
::testing::AssertionResult agrees_weighted(W&& weight, double tol, F&& f, const In<Ds>&... in) {
  const auto got = gradients<B>(weight, f, in...);
  const auto want = gradients<Autodiff<Cpu<double>>>(weight, f, in...);
  // Every input is compared (not just up to the first failure), so a failure reports each wrong gradient.
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i].empty()) {
      result = ::testing::AssertionFailure() << result.message() << "input " << i << ": no gradient\n";
      continue;
    }
    auto r = close(got[i], want[i], tol);
    if (!r) result = ::testing::AssertionFailure() << result.message() << "input " << i << ": " << r.message() << "\n";
  }
  return result;
}

template <class B, class F, std::size_t... Ds>
::testing::AssertionResult agrees(double tol, F&& f, const In<Ds>&... in) {
  return agrees_weighted<B>(alternating_weight, tol, f, in...);
}

}  // namespace ember::test
