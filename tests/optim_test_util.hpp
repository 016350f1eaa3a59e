#pragma once
// Shared by the optimizer tests: tiny reflected modules, param construction, gradients of a loss, comparisons.
#include <gtest/gtest.h>

#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"
#include "engine/module/module.hpp"
#include "engine/optim/optim.hpp"
#include "records/module_record.hpp"
#include "tests/support/hide_optional.hpp"

namespace ember::optim_test {

using AD = Autodiff<Cpu<double>>;  // exact enough to compare against hand-computed values at 1e-12
using AF = Autodiff<Cpu<float>>;
// The CPU backend with its optional ops hidden: Adam / AdamW take the composed update of
// engine/backend/optional_ops.hpp instead of the fused kernel.
using ADComposed = Autodiff<test::HideOptional<Cpu<double>>>;
// ... in f32: the Adam update the Vulkan backend runs (it has no fused step).
using AFComposed = Autodiff<test::HideOptional<Cpu<float>>>;

// Two params of different ranks, so the flattening in GradientsParams / optimizers is exercised.
template <Backend B>
struct Pair {
  BOOST_HANA_DEFINE_STRUCT(Pair, (Param<Tensor<B, 1>>, a), (Param<Tensor<B, 2>>, b));
};

template <class B, std::size_t D>
Param<Tensor<B, D>> param(const std::vector<double>& v, std::array<int64_t, D> shape, bool require_grad = true,
                          ParamRole role = ParamRole::Trainable, ParamId id = ParamId::next()) {
  return Param<Tensor<B, D>>::initialized(id, Tensor<B, D>::from_values(v, shape), require_grad, role);
}

// a = av (shape [n]), b = bv (shape [1, n]).
template <class B>
Pair<B> make_pair(const std::vector<double>& av, const std::vector<double>& bv) {
  Pair<B> m;
  m.a = param<B, 1>(av, {static_cast<int64_t>(av.size())});
  m.b = param<B, 2>(bv, {1, static_cast<int64_t>(bv.size())});
  return m;
}

// 0.5 * sum(x^2): its gradient is x itself, so hand-computed updates only need the current value.
template <class T>
auto half_sq(const T& x) {
  return x.mul(x).sum().mul_scalar(0.5);
}
template <class B>
Tensor<B, 1> pair_half_sq(const Pair<B>& m) {
  return half_sq(m.a.val()).add(half_sq(m.b.val()));
}

template <class P>
std::vector<double> vals(const P& p) {
  return p.val().template to_vec<double>();
}

template <class B, class M, class F>
GradientsParams<B> grads_of(const M& m, F&& loss) {
  auto g = loss(m).backward();
  return GradientsParams<B>::from_grads(g, m);
}

inline void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// Three steps of `opt` (an optimizer over backend B) on 0.5*||a||^2 + 0.5*||b||^2 from a = a0; returns a after
// each step.
template <class B = AD, class Opt>
std::vector<std::vector<double>> three_quad_steps(Opt& opt, double lr, const std::vector<double>& a0) {
  auto m = make_pair<B>(a0, {0.0});
  std::vector<std::vector<double>> out;
  for (int s = 0; s < 3; ++s) {
    m = opt.step(lr, m, grads_of<B>(m, pair_half_sq<B>));
    out.push_back(vals(m.a));
  }
  return out;
}

}  // namespace ember::optim_test
