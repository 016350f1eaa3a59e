#pragma once
// Finite-difference gradient checks on Autodiff<Cpu<double>> (or, in grad_check_composed, on
// Autodiff<HideOptional<Cpu<double>>>).
//
// check_grad(f, x0, x1, ...) evaluates out = f(x0, x1, ...) with every input tracked, reduces it to the scalar
// L = sum(out * w) with a fixed pseudo-random weighting w (so every output element gets a distinct weight and a
// wrong routing of gradients cannot cancel out), runs backward, and compares each input's analytic gradient dL/dxi
// with central differences (L(x + eps e_j) - L(x - eps e_j)) / (2 eps) evaluated without tracking.
//
// The error measure is ||analytic - numeric|| / max(||numeric||, floor): relative for ordinary gradients and
// absolute (scaled by `floor`) for gradients that are (nearly) zero.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"
#include "tests/support/hide_optional.hpp"

namespace ember::gradcheck {

// grad_check_composed compiles the same checks with EMBER_GRAD_CHECK_HIDE_OPTIONAL: the backend's optional ops
// hidden, so the composed defaults (engine/backend/optional_ops.hpp) are what is checked.
#if defined(EMBER_GRAD_CHECK_HIDE_OPTIONAL)
using AD = Autodiff<test::HideOptional<Cpu<double>>>;
static_assert(!optional_ops::HasAnyOptionalOp<AD::InnerBackend>, "grad_check_composed would check the fused ops");
#elif defined(EMBER_GRAD_CHECK_FUSION)
using AD = Autodiff<Fusion<Cpu<double>>>;  // grad_check_fusion (issue 14): the backward as fused chains
#else
using AD = Autodiff<Cpu<double>>;
#endif
template <std::size_t D>
using T = Tensor<AD, D>;
template <std::size_t D>
using TI = Tensor<AD, D, Int>;
template <std::size_t D>
using TB = Tensor<AD, D, Bool>;

struct Options {
  double eps = 1e-6;
  double tol = 1e-6;
  double floor = 1.0;  // gradients smaller than this in norm are compared absolutely (error scaled by floor)
  uint64_t seed = 1234;
};

// ---------------------------------------------------------------- input construction
template <std::size_t D>
T<D> tensor(const std::vector<double>& v, std::array<int64_t, D> shape) {
  return T<D>::from_values(v, shape);
}
template <std::size_t D>
TI<D> itensor(const std::vector<int64_t>& v, std::array<int64_t, D> shape) {
  return TI<D>::from_values(v, shape);
}
template <std::size_t D>
TB<D> btensor(const std::vector<bool>& v, std::array<int64_t, D> shape) {
  return TB<D>::from_values(v, shape);
}

template <std::size_t D>
int64_t numel(std::array<int64_t, D> shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

// Uniform values in [lo, hi), reproducible from `seed`.
template <std::size_t D>
T<D> uniform(std::array<int64_t, D> shape, double lo, double hi, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(static_cast<std::size_t>(numel(shape)));
  for (auto& x : v) x = lo + (hi - lo) * rng.uniform();
  return tensor<D>(v, shape);
}

// Values in [lo, hi) with |x| >= away (random sign), for ops with a kink at 0 (abs, relu, sign).
template <std::size_t D>
T<D> away_from_zero(std::array<int64_t, D> shape, double lo, double hi, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(static_cast<std::size_t>(numel(shape)));
  for (auto& x : v) x = (rng.uniform() < 0.5 ? -1.0 : 1.0) * (lo + (hi - lo) * rng.uniform());
  return tensor<D>(v, shape);
}

// Pairwise distinct values (a shuffled grid over [lo, hi] with jitter), spaced >= (hi-lo)/(2n): no ties, so max,
// min, max_pool and friends have a unique winner that a perturbation of eps cannot change.
template <std::size_t D>
T<D> distinct(std::array<int64_t, D> shape, double lo, double hi, uint64_t seed) {
  Rng rng(seed);
  const std::size_t n = static_cast<std::size_t>(numel(shape));
  std::vector<double> v(n);
  const double step = n > 1 ? (hi - lo) / static_cast<double>(n - 1) : 0.0;
  for (std::size_t i = 0; i < n; ++i) v[i] = lo + step * static_cast<double>(i) + 0.25 * step * (rng.uniform() - 0.5);
  for (std::size_t i = n; i > 1; --i) std::swap(v[i - 1], v[rng.next() % i]);
  return tensor<D>(v, shape);
}

// ---------------------------------------------------------------- the check
namespace detail {

inline std::vector<double> vals(const TensorData& d) { return d.template to_vec<double>(); }

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  long double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<long double>(a[i]) * b[i];
  return static_cast<double>(s);
}

inline std::string show(const std::vector<double>& v) {
  std::ostringstream os;
  os.precision(10);
  os << "[";
  for (std::size_t i = 0; i < v.size() && i < 24; ++i) os << (i ? ", " : "") << v[i];
  os << (v.size() > 24 ? ", ...]" : "]");
  return os.str();
}

// Compares one input's analytic gradient with the numeric one.
inline ::testing::AssertionResult compare(std::size_t input, const std::vector<double>& analytic,
                                          const std::vector<double>& numeric, const Options& o) {
  if (analytic.size() != numeric.size())
    return ::testing::AssertionFailure() << "input " << input << ": gradient has " << analytic.size()
                                         << " elements, the input has " << numeric.size();
  double num = 0, den = 0, worst = 0;
  std::size_t worst_at = 0;
  for (std::size_t i = 0; i < analytic.size(); ++i) {
    if (!std::isfinite(analytic[i]))
      return ::testing::AssertionFailure() << "input " << input << ": non-finite analytic gradient at element " << i
                                           << ": " << analytic[i];
    const double d = analytic[i] - numeric[i];
    num += d * d;
    den += numeric[i] * numeric[i];
    if (std::abs(d) > worst) {
      worst = std::abs(d);
      worst_at = i;
    }
  }
  const double err = std::sqrt(num) / std::max(std::sqrt(den), o.floor);
  if (err <= o.tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "input " << input << ": normalized gradient error " << err << " > " << o.tol
                                       << " (worst element " << worst_at << ": analytic " << analytic[worst_at]
                                       << ", numeric " << numeric[worst_at] << ")\n  analytic " << show(analytic)
                                       << "\n  numeric  " << show(numeric);
}

}  // namespace detail

// f: (const T<D0>&, const T<D1>&, ...) -> T<Dout>. Every input is checked.
template <class F, std::size_t... Ds>
::testing::AssertionResult check_grad_opts(const Options& o, F&& f, const T<Ds>&... inputs) {
  constexpr std::size_t N = sizeof...(Ds);
  // Plain (untracked) copies of the inputs' values, perturbed one element at a time for the numeric gradient.
  std::array<std::vector<double>, N> base{detail::vals(inputs.into_data())...};
  std::array<Shape, N> shapes{inputs.shape()...};

  // Analytic: every input a fresh leaf.
  auto leaves = std::make_tuple(inputs.detach().require_grad()...);
  auto out = std::apply(f, leaves);
  using Out = decltype(out);
  if (!out.is_require_grad()) return ::testing::AssertionFailure() << "output is not tracked";
  Rng rng(o.seed);
  std::vector<double> w(static_cast<std::size_t>(out.numel()));
  for (auto& x : w) x = 0.5 + rng.uniform();  // in [0.5, 1.5): no weight near zero
  for (std::size_t i = 0; i < w.size(); ++i)
    if (i % 2) w[i] = -w[i];
  const auto wt = Out::from_values(w, out.dims());
  const auto loss = out.mul(wt).sum();
  auto grads = loss.backward();
  std::array<std::vector<double>, N> analytic;
  std::array<bool, N> present{};
  {
    std::size_t i = 0;
    std::apply(
        [&](const auto&... leaf) {
          ((([&] {
             auto g = leaf.grad(grads);
             present[i] = g.has_value();
             if (g) {
               if (!(g->shape() == shapes[i])) present[i] = false;
               analytic[i] = detail::vals(g->into_data());
             }
             ++i;
           })()),
           ...);
        },
        leaves);
  }

  // Numeric: central differences of L on untracked inputs.
  auto eval = [&](const std::array<std::vector<double>, N>& xs) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto y = f(T<Ds>(AD::template from_data<Float>(TensorData::from_vec<double>(xs[I], shapes[I]), {}))...);
      if (y.is_require_grad()) throw std::logic_error("untracked inputs gave a tracked output");
      return detail::dot(detail::vals(y.into_data()), w);
    }(std::index_sequence_for<decltype(Ds)...>{});
  };
  auto xs = base;
  for (std::size_t i = 0; i < N; ++i) {
    if (!present[i])
      return ::testing::AssertionFailure() << "input " << i << ": no gradient (or wrong shape) after backward";
    std::vector<double> numeric(base[i].size());
    for (std::size_t j = 0; j < base[i].size(); ++j) {
      xs[i][j] = base[i][j] + o.eps;
      const double fp = eval(xs);
      xs[i][j] = base[i][j] - o.eps;
      const double fm = eval(xs);
      xs[i][j] = base[i][j];
      numeric[j] = (fp - fm) / (2 * o.eps);
    }
    auto r = detail::compare(i, analytic[i], numeric, o);
    if (!r) return r;
  }
  return ::testing::AssertionSuccess();
}

template <class F, std::size_t... Ds>
::testing::AssertionResult check_grad(F&& f, const T<Ds>&... inputs) {
  return check_grad_opts(Options{}, std::forward<F>(f), inputs...);
}

// The analytic gradient of sum(f(x) * w) must be exactly zero (piecewise-constant ops).
template <class F, std::size_t D>
::testing::AssertionResult check_zero_grad(F&& f, const T<D>& x) {
  auto leaf = x.detach().require_grad();
  auto out = f(leaf);
  if (!out.is_require_grad()) return ::testing::AssertionFailure() << "output is not tracked";
  auto g = out.mul(out.ones_like().detach().mul_scalar(0.7)).sum().backward();
  auto gx = leaf.grad(g);
  if (!gx) return ::testing::AssertionFailure() << "no gradient";
  for (double v : detail::vals(gx->into_data()))
    if (v != 0.0) return ::testing::AssertionFailure() << "nonzero gradient " << v;
  return ::testing::AssertionSuccess();
}

}  // namespace ember::gradcheck
