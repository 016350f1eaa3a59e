// Semantics of Autodiff<B> beyond per-op gradients: accumulation, which gradients are kept, graph lifetime,
// NoGrad, detach, require_grad(false), grad_remove, errors, Int/Bool pass-through, an MLP checked against a
// hand-written backprop, and very deep graphs (no recursion in backward or in graph destruction).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"

namespace ember {
namespace {

using AD = Autodiff<Cpu<double>>;
using AD32 = Autodiff<Cpu<float>>;
template <std::size_t D>
using T = Tensor<AD, D>;

static_assert(AutodiffBackend<Autodiff<Cpu<float>>>);
static_assert(AutodiffBackend<Autodiff<Cpu<double>>>);
static_assert(Backend<Autodiff<Cpu<float>>>);
static_assert(!AutodiffBackend<Cpu<float>>);
// Int and Bool primitives are the inner backend's own.
static_assert(std::is_same_v<AD32::IntPrimitive, Cpu<float>::IntPrimitive>);
static_assert(std::is_same_v<AD32::BoolPrimitive, Cpu<float>::BoolPrimitive>);

T<1> vec(const std::vector<double>& v) { return T<1>::from_values(v, {static_cast<int64_t>(v.size())}); }
std::vector<double> vals(const std::optional<Tensor<Cpu<double>, 1>>& g) { return g->to_vec<double>(); }

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// ---------------------------------------------------------------- accumulation and which gradients are kept
TEST(AutodiffSemantics, TensorUsedTwiceAccumulates) {
  const auto x = vec({1.5, -2.0, 0.25}).require_grad();
  const auto y = x * x + x;  // dy/dx = 2x + 1
  auto g = y.sum().backward();
  expect_near(vals(x.grad(g)), {4.0, -3.0, 1.5}, 1e-15);
}

TEST(AutodiffSemantics, TensorUsedInTwoBranches) {
  const auto x = vec({0.3, -0.7, 1.1}).require_grad();
  const auto a = x.exp();
  const auto y = a.sin() + a.cos() * x;  // dy/dx = cos(a) a - sin(a) a x + cos(a)
  auto g = y.sum().backward();
  std::vector<double> want;
  for (double v : {0.3, -0.7, 1.1}) {
    const double e = std::exp(v);
    want.push_back(std::cos(e) * e - std::sin(e) * e * v + std::cos(e));
  }
  expect_near(vals(x.grad(g)), want, 1e-14);
}

TEST(AutodiffSemantics, OnlyLeavesKeepGradients) {
  const auto x = vec({1.0, 2.0}).require_grad();
  const auto w = vec({3.0, 4.0}).require_grad();
  const auto unused = vec({5.0}).require_grad();
  const auto h = x.mul(w);  // non-leaf
  const auto loss = h.exp().sum();
  auto g = loss.backward();
  EXPECT_FALSE(h.grad(g).has_value());
  EXPECT_FALSE(loss.grad(g).has_value());
  EXPECT_FALSE(unused.grad(g).has_value());  // not reached
  ASSERT_TRUE(x.grad(g).has_value());
  ASSERT_TRUE(w.grad(g).has_value());
  EXPECT_EQ(g.size(), 2u);
  expect_near(vals(x.grad(g)), {3.0 * std::exp(3.0), 4.0 * std::exp(8.0)}, 1e-9);
  expect_near(vals(w.grad(g)), {1.0 * std::exp(3.0), 2.0 * std::exp(8.0)}, 1e-9);
}

TEST(AutodiffSemantics, NonScalarRootIsSeededWithOnes) {
  const auto x = T<2>::from_values(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3}).require_grad();
  auto g = x.mul_scalar(2.0).backward();
  EXPECT_EQ(x.grad(g)->to_vec<double>(), std::vector<double>(6, 2.0));
  // A leaf as the root: its gradient is the seed.
  auto gl = x.backward();
  EXPECT_EQ(x.grad(gl)->to_vec<double>(), std::vector<double>(6, 1.0));
}

TEST(AutodiffSemantics, RequireGradTwiceKeepsTheSameLeaf) {
  const auto x = vec({1.0, 2.0}).require_grad();
  const auto x2 = x.require_grad();
  auto g = x.mul(x2).sum().backward();
  expect_near(vals(x.grad(g)), {2.0, 4.0}, 0);
  expect_near(vals(x2.grad(g)), {2.0, 4.0}, 0);
}

// ---------------------------------------------------------------- graph lifetime
TEST(AutodiffSemantics, BackwardFreesTheGraph) {
  const auto x = vec({0.5, 1.5}).require_grad();
  std::weak_ptr<autodiff::Node<Cpu<double>::FloatPrimitive>> mid_node;
  std::weak_ptr<cpu::Buffer> mid_buffer;
  T<1> loss = [&] {
    const auto mid = x.exp();  // intermediate: after this scope only the graph refers to it
    mid_node = mid.primitive().node;
    mid_buffer = mid.primitive().value.buffer;
    return mid.sin().sum();
  }();
  // Before backward the graph keeps the intermediate node and the tensors its backward steps saved.
  EXPECT_FALSE(mid_node.expired());
  EXPECT_FALSE(mid_buffer.expired());
  auto g = loss.backward();
  ASSERT_TRUE(x.grad(g).has_value());
  // backward released every closure and parent link it ran, so nothing but the root tensor is left.
  EXPECT_TRUE(mid_node.expired());
  EXPECT_TRUE(mid_buffer.expired());
  const auto& root = loss.primitive().node;
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE(root->parents.empty());
  EXPECT_FALSE(static_cast<bool>(root->backward));
  // The leaf itself survives: it is owned by x.
  EXPECT_TRUE(x.is_require_grad());
}

TEST(AutodiffSemantics, SecondBackwardThroughAFreedGraphThrows) {
  const auto x = vec({0.5, 1.5}).require_grad();
  const auto loss = x.exp().mul(x).sum();
  auto g1 = loss.backward();
  ASSERT_TRUE(x.grad(g1).has_value());
  EXPECT_THROW(loss.backward(), ArgumentError);  // PyTorch: "Trying to backward through the graph a second time"
  // A fresh forward pass builds a fresh graph.
  auto g3 = x.exp().mul(x).sum().backward();
  expect_near(vals(x.grad(g3)), vals(x.grad(g1)), 0);
}

TEST(AutodiffSemantics, BackwardThroughAPartlyFreedGraphThrowsInsteadOfGivingAPartialGradient) {
  const auto x = vec({1.0}).require_grad();
  const auto h = x.exp();
  auto g1 = h.sum().backward();  // frees h's backward step
  ASSERT_TRUE(x.grad(g1).has_value());
  try {
    (void)h.mul(x).sum().backward();  // would silently miss d(h)/dx without the check
    FAIL() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("already freed"), std::string::npos) << e.what();
  }
}

TEST(AutodiffSemantics, UnusedGraphIsFreedWithItsTensors) {
  std::weak_ptr<autodiff::Node<Cpu<double>::FloatPrimitive>> node;
  const auto x = vec({0.5, 1.5}).require_grad();
  {
    const auto y = x.exp().sin().mul(x);
    node = y.primitive().node;
    EXPECT_FALSE(node.expired());
  }
  EXPECT_TRUE(node.expired());
}

// ---------------------------------------------------------------- NoGrad
TEST(AutodiffSemantics, NoGradRecordsNothing) {
  const auto x = vec({1.0, 2.0}).require_grad();
  {
    NoGrad ng;
    const auto y = x.exp().mul(x).add_scalar(1.0).sum();
    EXPECT_FALSE(y.is_require_grad());
    EXPECT_THROW(y.backward(), ArgumentError);
    {
      NoGrad nested;
      EXPECT_FALSE(x.sin().is_require_grad());
    }
    // Leaving the nested scope restores the outer one: still off.
    EXPECT_FALSE(x.sin().is_require_grad());
  }
  // Recording is back on after the scope.
  const auto z = x.exp().sum();
  EXPECT_TRUE(z.is_require_grad());
  expect_near(vals(x.grad(z.backward())), {std::exp(1.0), std::exp(2.0)}, 1e-15);
}

TEST(AutodiffSemantics, NoGradIsThreadLocal) {
  const auto x = vec({1.0, 2.0}).require_grad();
  // NoGrad on this thread does not stop another thread from recording.
  {
    NoGrad ng;
    bool other_records = false;
    std::thread t([&] { other_records = x.exp().is_require_grad(); });
    t.join();
    EXPECT_TRUE(other_records);
    EXPECT_FALSE(x.exp().is_require_grad());
  }
  // NoGrad on another thread does not stop this one.
  bool other_off = false;
  std::atomic<int> phase{0};
  std::thread t([&] {
    NoGrad ng;
    other_off = !x.exp().is_require_grad();
    phase = 1;
    while (phase.load() != 2) std::this_thread::yield();
  });
  while (phase.load() != 1) std::this_thread::yield();
  EXPECT_TRUE(x.exp().is_require_grad());  // the other thread's NoGrad is alive right now
  phase = 2;
  t.join();
  EXPECT_TRUE(other_off);
}

// ---------------------------------------------------------------- detach, require_grad(false), grad_remove
TEST(AutodiffSemantics, DetachStopsGradientFlow) {
  const auto x = vec({1.5, -2.0}).require_grad();
  const auto d = x.detach();
  EXPECT_FALSE(d.is_require_grad());
  EXPECT_TRUE(x.is_require_grad());  // detach returns a new tensor, x is unchanged
  auto g = x.mul(x.detach()).sum().backward();  // d/dx (x * c) = c, not 2x
  expect_near(vals(x.grad(g)), {1.5, -2.0}, 0);
  // A path made only of detached values does not reach x at all.
  const auto w = vec({2.0, 3.0}).require_grad();
  auto g2 = w.mul(x.detach().exp()).sum().backward();
  EXPECT_FALSE(x.grad(g2).has_value());
  expect_near(vals(w.grad(g2)), {std::exp(1.5), std::exp(-2.0)}, 1e-15);
  EXPECT_THROW(x.exp().detach().sum().backward(), ArgumentError);
}

TEST(AutodiffSemantics, RequireGradFalse) {
  const auto x = vec({1.0, 2.0});
  EXPECT_FALSE(x.is_require_grad());
  EXPECT_FALSE(x.exp().is_require_grad());  // untracked inputs record nothing
  const auto t = x.require_grad();
  const auto off = t.require_grad(false);
  EXPECT_FALSE(off.is_require_grad());
  EXPECT_TRUE(t.is_require_grad());
  EXPECT_EQ(off.to_vec<double>(), t.to_vec<double>());
  const auto w = vec({3.0, 4.0}).require_grad();
  auto g = w.mul(off).sum().backward();
  EXPECT_FALSE(off.grad(g).has_value());
  EXPECT_FALSE(t.grad(g).has_value());
  expect_near(vals(w.grad(g)), {1.0, 2.0}, 0);
  // require_grad(false) on an untracked tensor is a no-op.
  EXPECT_FALSE(x.require_grad(false).is_require_grad());
}

TEST(AutodiffSemantics, GradRemoveRemovesTheEntry) {
  const auto x = vec({1.0, 2.0}).require_grad();
  const auto w = vec({3.0, 4.0}).require_grad();
  auto g = x.mul(w).sum().backward();
  EXPECT_EQ(g.size(), 2u);
  auto removed = x.grad_remove(g);
  ASSERT_TRUE(removed.has_value());
  expect_near(removed->to_vec<double>(), {3.0, 4.0}, 0);
  EXPECT_FALSE(x.grad(g).has_value());
  EXPECT_FALSE(x.grad_remove(g).has_value());
  EXPECT_EQ(g.size(), 1u);
  EXPECT_TRUE(w.grad(g).has_value());  // the other entry stays
  // Untracked tensors have no entry to remove.
  EXPECT_FALSE(x.detach().grad_remove(g).has_value());
  EXPECT_EQ(g.size(), 1u);
}

TEST(AutodiffSemantics, BackwardOnUntrackedTensorThrows) {
  EXPECT_THROW(vec({1.0, 2.0}).sum().backward(), ArgumentError);
  EXPECT_THROW(vec({1.0, 2.0}).backward(), ArgumentError);
  using F32 = Tensor<AD32, 2>;
  EXPECT_THROW(F32::ones({2, 2}).exp().backward(), ArgumentError);
  // ArgumentError is an ember::Error.
  EXPECT_THROW(vec({1.0}).exp().backward(), Error);
}

// ---------------------------------------------------------------- Int and Bool pass through
TEST(AutodiffSemantics, IntAndBoolOpsPassThrough) {
  using IA = Tensor<AD32, 2, Int>;
  using IC = Tensor<Cpu<float>, 2, Int>;
  using F2 = Tensor<AD32, 2>;
  const std::vector<int64_t> a{3, -1, 4, 1, -5, 9}, b{2, 7, 1, 8, 2, 8};
  const auto ia = IA::from_values(a, {2, 3}), ib = IA::from_values(b, {2, 3});
  const auto ca = IC::from_values(a, {2, 3}), cb = IC::from_values(b, {2, 3});
  EXPECT_EQ(ia.add(ib).mul(ib).sub_scalar(3).to_vec<int64_t>(), ca.add(cb).mul(cb).sub_scalar(3).to_vec<int64_t>());
  EXPECT_EQ(ia.abs().sum_dim(1).to_vec<int64_t>(), ca.abs().sum_dim(1).to_vec<int64_t>());
  EXPECT_EQ(ia.argmax(1).to_vec<int64_t>(), ca.argmax(1).to_vec<int64_t>());
  EXPECT_EQ(ia.transpose().reshape<1>({6}).to_vec<int64_t>(), ca.transpose().reshape<1>({6}).to_vec<int64_t>());
  EXPECT_EQ(ia.gt(ib).to_vec<bool>(), ca.gt(cb).to_vec<bool>());
  EXPECT_EQ(ia.gt(ib).logical_and(ia.lt(5.0)).logical_not().to_vec<bool>(),
            ca.gt(cb).logical_and(ca.lt(5.0)).logical_not().to_vec<bool>());
  using I1 = Tensor<AD32, 1, Int>;
  EXPECT_EQ(I1::arange(2, 6).to_vec<int64_t>(), (std::vector<int64_t>{2, 3, 4, 5}));
  // Casts: float -> int is not differentiable and leaves the graph; int -> float gives an untracked float.
  const auto f = F2::from_values(std::vector<float>{1.7f, -2.2f, 3.0f, 0.4f}, {2, 2}).require_grad();
  EXPECT_EQ(f.mul_scalar(2.0).to_int().to_vec<int64_t>(), (std::vector<int64_t>{3, -4, 6, 0}));
  EXPECT_FALSE(ia.to_float().is_require_grad());
  // Comparisons of tracked floats give plain Bool tensors, usable as masks in tracked ops.
  const auto mask = f.gt(0.5);
  auto g = f.mask_fill(mask, 0.0).sum().backward();
  EXPECT_EQ(f.grad(g)->to_vec<float>(), (std::vector<float>{0.f, 1.f, 0.f, 1.f}));
}

// ---------------------------------------------------------------- a 3-layer MLP against hand-written backprop
// Plain row-major matrices and loops, independent of the engine.
struct Mat {
  int64_t r, c;
  std::vector<double> v;
  double& at(int64_t i, int64_t j) { return v[static_cast<std::size_t>(i * c + j)]; }
  double at(int64_t i, int64_t j) const { return v[static_cast<std::size_t>(i * c + j)]; }
};
Mat matmul(const Mat& a, const Mat& b, bool ta = false, bool tb = false) {
  const int64_t n = ta ? a.c : a.r, k = ta ? a.r : a.c, m = tb ? b.r : b.c;
  Mat o{n, m, std::vector<double>(static_cast<std::size_t>(n * m), 0.0)};
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      for (int64_t p = 0; p < k; ++p) o.at(i, j) += (ta ? a.at(p, i) : a.at(i, p)) * (tb ? b.at(j, p) : b.at(p, j));
  return o;
}
Mat sum_rows(const Mat& a) {
  Mat o{1, a.c, std::vector<double>(static_cast<std::size_t>(a.c), 0.0)};
  for (int64_t i = 0; i < a.r; ++i)
    for (int64_t j = 0; j < a.c; ++j) o.at(0, j) += a.at(i, j);
  return o;
}
Mat mk(int64_t r, int64_t c, double scale, double phase) {
  Mat m{r, c, {}};
  for (int64_t i = 0; i < r * c; ++i) m.v.push_back(scale * std::sin(1.3 * static_cast<double>(i) + phase));
  return m;
}

struct Mlp {
  Mat x, y, w1, b1, w2, b2, w3, b3;
};
// loss = mean((tanh(tanh(x w1 + b1) w2 + b2) w3 + b3 - y)^2); returns loss and fills grads (w1 b1 w2 b2 w3 b3).
double mlp_reference(const Mlp& m, std::vector<Mat>* grads) {
  auto affine_tanh = [](const Mat& in, const Mat& w, const Mat& b, bool act) {
    Mat o = matmul(in, w);
    for (int64_t i = 0; i < o.r; ++i)
      for (int64_t j = 0; j < o.c; ++j) o.at(i, j) = act ? std::tanh(o.at(i, j) + b.at(0, j)) : o.at(i, j) + b.at(0, j);
    return o;
  };
  const Mat h1 = affine_tanh(m.x, m.w1, m.b1, true);
  const Mat h2 = affine_tanh(h1, m.w2, m.b2, true);
  const Mat p = affine_tanh(h2, m.w3, m.b3, false);
  const double n = static_cast<double>(p.v.size());
  double loss = 0;
  Mat dp = p;
  for (std::size_t i = 0; i < p.v.size(); ++i) {
    const double d = p.v[i] - m.y.v[i];
    loss += d * d / n;
    dp.v[i] = 2.0 * d / n;
  }
  if (!grads) return loss;
  auto through_tanh = [](Mat d, const Mat& h) {
    for (std::size_t i = 0; i < d.v.size(); ++i) d.v[i] *= 1.0 - h.v[i] * h.v[i];
    return d;
  };
  const Mat da2 = through_tanh(matmul(dp, m.w3, false, true), h2);
  const Mat da1 = through_tanh(matmul(da2, m.w2, false, true), h1);
  *grads = {matmul(m.x, da1, true), sum_rows(da1), matmul(h1, da2, true), sum_rows(da2), matmul(h2, dp, true),
            sum_rows(dp)};
  return loss;
}

template <class B>
std::vector<std::vector<double>> mlp_autodiff(const Mlp& m, double* loss_out) {
  using TT = Tensor<B, 2>;
  auto t = [](const Mat& a, bool track) {
    auto r = TT::from_values(a.v, {a.r, a.c});  // converted to the backend's float element
    return track ? r.require_grad() : r;
  };
  std::vector<TT> ps{t(m.w1, true), t(m.b1, true), t(m.w2, true), t(m.b2, true), t(m.w3, true), t(m.b3, true)};
  const auto h1 = t(m.x, false).matmul(ps[0]).add(ps[1]).tanh();
  const auto h2 = h1.matmul(ps[2]).add(ps[3]).tanh();
  const auto d = h2.matmul(ps[4]).add(ps[5]).sub(t(m.y, false));
  const auto loss = d.mul(d).mean();
  *loss_out = loss.item();
  auto g = loss.backward();
  std::vector<std::vector<double>> out;
  for (auto& p : ps) out.push_back(p.grad(g)->template to_vec<double>());
  return out;
}

TEST(AutodiffSemantics, MlpMatchesHandWrittenBackprop) {
  Mlp m{mk(5, 3, 1.0, 0.1), mk(5, 2, 0.8, 0.7), mk(3, 4, 0.6, 0.2), mk(1, 4, 0.3, 0.9), mk(4, 4, 0.5, 1.3),
        mk(1, 4, 0.2, 2.1), mk(4, 2, 0.7, 0.4), mk(1, 2, 0.1, 1.7)};
  std::vector<Mat> ref;
  const double ref_loss = mlp_reference(m, &ref);
  // Double-check the hand-written backprop against central differences of the reference loss.
  std::vector<Mat*> params{&m.w1, &m.b1, &m.w2, &m.b2, &m.w3, &m.b3};
  for (std::size_t p = 0; p < params.size(); ++p) {
    for (std::size_t i = 0; i < params[p]->v.size(); ++i) {
      const double keep = params[p]->v[i], eps = 1e-6;
      params[p]->v[i] = keep + eps;
      const double lp = mlp_reference(m, nullptr);
      params[p]->v[i] = keep - eps;
      const double lm = mlp_reference(m, nullptr);
      params[p]->v[i] = keep;
      EXPECT_NEAR(ref[p].v[i], (lp - lm) / (2 * eps), 1e-8) << "reference param " << p << " element " << i;
    }
  }
  double loss64 = 0, loss32 = 0;
  const auto g64 = mlp_autodiff<AD>(m, &loss64);
  const auto g32 = mlp_autodiff<AD32>(m, &loss32);
  EXPECT_NEAR(loss64, ref_loss, 1e-14);
  EXPECT_NEAR(loss32, ref_loss, 1e-6);
  for (std::size_t p = 0; p < ref.size(); ++p) {
    SCOPED_TRACE("param " + std::to_string(p));
    expect_near(g64[p], ref[p].v, 1e-13);
    expect_near(g32[p], ref[p].v, 2e-6);
  }
}

// ---------------------------------------------------------------- deep graphs
TEST(AutodiffSemantics, DeepChainBackward) {
  constexpr int kDepth = 10000;
  const auto x = vec({1.0, -2.0, 0.5}).require_grad();
  auto y = x;
  for (int i = 0; i < kDepth; ++i) y = y + x;  // y = (kDepth + 1) x
  auto g = y.sum().backward();
  expect_near(vals(x.grad(g)), std::vector<double>(3, kDepth + 1.0), 0);
  // A chain of unary ops: d/dx of x * 1.0001^n.
  auto z = x;
  for (int i = 0; i < kDepth; ++i) z = z.mul_scalar(1.0001);
  auto gz = z.sum().backward();
  expect_near(vals(x.grad(gz)), std::vector<double>(3, std::pow(1.0001, kDepth)), 1e-9);
}

TEST(AutodiffSemantics, DeepChainDestroyedWithoutBackward) {
  // Releasing the last tensor of a long chain must not recurse once per node through the parents.
  const auto x = vec({1.0}).require_grad();
  for (int depth : {10000, 300000}) {
    std::weak_ptr<autodiff::Node<Cpu<double>::FloatPrimitive>> first;
    {
      auto y = x.add(x);
      first = y.primitive().node;
      for (int i = 0; i < depth; ++i) y = y.reshape<1>({1});
      EXPECT_FALSE(first.expired());
    }  // the whole chain is released here
    EXPECT_TRUE(first.expired()) << depth;
  }
  // The same for a graph with fan-out (every node also refers to the leaf) and a deep backward afterwards.
  auto y = x;
  for (int i = 0; i < 100000; ++i) y = y.add(x).reshape<1>({1});
  auto g = y.backward();
  expect_near(vals(x.grad(g)), {100001.0}, 0);
}

// ---------------------------------------------------------------- retain_graph, .grad slots, autograd.grad and
// in-place updates (issue 11): the engine side of ember_tensor_backward_ex / _inplace / ember_autograd_grad
using IP = Cpu<double>::FloatPrimitive;

std::vector<std::pair<AD::FloatPrimitive, IP>> seeded(const T<1>& root) {
  return {{root.primitive(), AD::inner(T<1>::ones({root.dims()[0]}).primitive())}};
}
std::vector<double> ivals(const IP& p) { return Tensor<Cpu<double>, 1>(p).to_vec<double>(); }

// What a holder does for x.add_(s): refuse / count the update, compute as usual, take the result.
AD::FloatPrimitive add_inplace(const AD::FloatPrimitive& self, double s) {
  AD::float_inplace_begin(self);
  return AD::float_inplace_commit(self, AD::float_scalar(self, ScalarOp::Add, s));
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(AutodiffSemantics, RetainGraphGivesTheSameGradientsTwice) {
  const auto x = vec({0.5, -1.5}).require_grad();
  const auto y = x.exp().mul(x);  // dy/dx = e^x (1 + x)
  auto g1 = AD::backward_seeded(seeded(y), /*retain_graph=*/true, /*accumulate=*/false);
  auto g2 = AD::backward_seeded(seeded(y), /*retain_graph=*/false, /*accumulate=*/false);
  const std::vector<double> want{std::exp(0.5) * 1.5, std::exp(-1.5) * -0.5};
  expect_near(vals(x.grad(g1)), want, 1e-15);
  expect_near(vals(x.grad(g2)), want, 1e-15);
  // The second pass did not retain it: a third one fails as before.
  EXPECT_NE(error_of([&] { AD::backward_seeded(seeded(y), false, false); }).find("already freed"), std::string::npos);
}

TEST(AutodiffSemantics, AccumulateAddsIntoTheLeafGradSlot) {
  const auto x = vec({2.0, 3.0}).require_grad();
  EXPECT_FALSE(AD::leaf_grad(x.primitive()).has_value());
  const auto y = x.mul(x);  // 2x
  AD::backward_seeded(seeded(y), true, true);
  expect_near(ivals(*AD::leaf_grad(x.primitive())), {4.0, 6.0}, 0);
  AD::backward_seeded(seeded(y), false, true);
  expect_near(ivals(*AD::leaf_grad(x.primitive())), {8.0, 12.0}, 0);
  // The slot belongs to the leaf: another tensor of the same leaf sees it; non-leaves have none.
  EXPECT_TRUE(AD::leaf_grad(x.require_grad().primitive()).has_value());
  EXPECT_FALSE(AD::leaf_grad(y.primitive()).has_value());
  AD::set_leaf_grad(x.primitive(), std::nullopt);
  EXPECT_FALSE(AD::leaf_grad(x.primitive()).has_value());
  EXPECT_THROW(AD::set_leaf_grad(y.primitive(), AD::inner(y.primitive())), ArgumentError);
  EXPECT_THROW(AD::set_leaf_grad(x.primitive(), AD::inner(vec({1.0}).primitive())), ShapeError);
}

TEST(AutodiffSemantics, GradOfReachesIntermediateTensorsAndLeavesGradAlone) {
  const auto x = vec({1.0, -2.0}).require_grad();
  const auto unused = vec({1.0}).require_grad();
  const auto y = x.mul(x);
  const auto z = y.mul_scalar(3.0).add(x);  // dz/dy = 3, dz/dx = 6x + 1
  auto r = AD::grad_of(seeded(z), {y.primitive(), x.primitive(), unused.primitive()}, false);
  ASSERT_EQ(r.size(), 3u);
  expect_near(ivals(*r[0]), {3.0, 3.0}, 0);
  expect_near(ivals(*r[1]), {7.0, -11.0}, 0);
  EXPECT_FALSE(r[2].has_value());
  EXPECT_FALSE(AD::leaf_grad(x.primitive()).has_value());
  EXPECT_NE(error_of([&] { AD::grad_of(seeded(x.mul(x)), {vec({1.0}).primitive()}, false); })
                .find("does not require grad"),
            std::string::npos);
}

TEST(AutodiffSemantics, InplaceUpdateOfASavedLeafFailsTheBackward) {
  auto x = vec({1.0, 2.0}).require_grad().primitive();
  const AD::FloatPrimitive y = AD::float_binary(x, x, BinaryOp::Mul);
  // Grad mode on: a leaf that requires grad is refused, and nothing is counted.
  EXPECT_EQ(error_of([&] { add_inplace(x, 1.0); }),
            "a leaf Variable that requires grad is being used in an in-place operation.");
  EXPECT_EQ(AD::float_version(x), 0u);
  const uint64_t id = x.node->id;
  {
    NoGrad ng;
    x = add_inplace(x, 1.0);
  }
  // The same leaf (id, .grad slot) with the new value and version 1.
  EXPECT_EQ(x.node->id, id);
  EXPECT_TRUE(x.node->leaf);
  EXPECT_EQ(AD::float_version(x), 1u);
  expect_near(ivals(AD::inner(x)), {2.0, 3.0}, 0);
  const std::string e = error_of([&] { AD::backward_seeded({{y, AD::inner(y)}}, false, true); });
  EXPECT_NE(e.find("one of the variables needed for gradient computation has been modified by an inplace operation"),
            std::string::npos) << e;
  EXPECT_NE(e.find("is at version 1; expected version 0"), std::string::npos) << e;
  EXPECT_FALSE(AD::leaf_grad(x).has_value());  // a failed pass changes no .grad
  // A new forward pass records the new version and differentiates the new value.
  const auto y2 = AD::float_binary(x, x, BinaryOp::Mul);
  AD::backward_seeded({{y2, AD::inner(vec({1.0, 1.0}).primitive())}}, false, true);
  expect_near(ivals(*AD::leaf_grad(x)), {4.0, 6.0}, 0);
}

TEST(AutodiffSemantics, InplaceUpdateOfANonLeafContinuesItsHistory) {
  const auto x = vec({1.0, 2.0}).require_grad();
  auto h = x.mul_scalar(2.0).primitive();  // a non-leaf
  const auto before = AD::float_binary(h, h, BinaryOp::Mul);  // recorded h at version 0
  h = add_inplace(h, 1.0);  // grad mode on: recorded, h = 2x + 1
  EXPECT_FALSE(AD::float_is_leaf(h));
  // d/dx sum((2x + 1) * x) = 4x + 1: the update's own step ran after the count, so it is not stale.
  const auto y = AD::float_binary(h, x.primitive(), BinaryOp::Mul);
  auto g = AD::backward_seeded({{y, AD::inner(vec({1.0, 1.0}).primitive())}}, false, false);
  expect_near(vals(x.grad(g)), {5.0, 9.0}, 0);
  // The op that recorded h before the update refuses.
  EXPECT_NE(error_of([&] { AD::backward_seeded({{before, AD::inner(before)}}, false, false); })
                .find("modified by an inplace operation"),
            std::string::npos);
}

}  // namespace
}  // namespace ember
