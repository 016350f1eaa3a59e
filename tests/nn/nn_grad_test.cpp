// Finite-difference gradient checks (Autodiff<Cpu<double>>) through every ember::nn layer, activation and loss:
// inputs and params are both checked (each param's value is swapped for a tracked tensor inside the checked
// function). Plus an end-to-end check that every trainable param of a mixed network receives a gradient.
#include <gtest/gtest.h>

#include "engine/nn/nn.hpp"
#include "tests/grad/grad_check.hpp"

namespace ember::gradcheck {
namespace {

using namespace ember::nn;

// The param with value `v`; tracked exactly when v is (so the numeric pass, on untracked inputs, stays untracked).
template <class P>
P with(const P& p, const typename P::Value& v) {
  return P::initialized(p.id(), v, v.is_require_grad(), p.role());
}

TEST(NnGrad, Linear) {
  const auto cfg = LinearConfig{4, 3};
  auto f = [cfg](const T<2>& x, const T<2>& w, const T<1>& b) {
    auto l = cfg.init<AD>();
    l.weight = with(l.weight, w);
    l.bias = with(*l.bias, b);
    return l.forward(x);
  };
  EXPECT_TRUE(check_grad(f, uniform<2>({5, 4}, -1, 1, 1), uniform<2>({4, 3}, -1, 1, 2), uniform<1>({3}, -1, 1, 3)));
  auto f3 = [cfg](const T<3>& x, const T<2>& w) {  // batched rank-3 input, no bias
    auto l = LinearConfig{4, 3, false}.init<AD>();
    l.weight = with(l.weight, w);
    return l.forward(x);
  };
  EXPECT_TRUE(check_grad(f3, uniform<3>({2, 3, 4}, -1, 1, 4), uniform<2>({4, 3}, -1, 1, 5)));
}

TEST(NnGrad, Conv2dAndConv1d) {
  auto f = [](const T<4>& x, const T<4>& w, const T<1>& b) {
    auto c = Conv2dConfig{4, 2, {3, 2}, {2, 1}, {1, 1}, {1, 1}, 2}.init<AD>();
    c.weight = with(c.weight, w);
    c.bias = with(*c.bias, b);
    return c.forward(x);
  };
  EXPECT_TRUE(
      check_grad(f, uniform<4>({2, 4, 5, 4}, -1, 1, 6), uniform<4>({2, 2, 3, 2}, -1, 1, 7), uniform<1>({2}, -1, 1, 8)));
  auto f1 = [](const T<3>& x, const T<3>& w) {
    auto c = Conv1dConfig{2, 3, 3, 1, 1, 2, 1, false}.init<AD>();
    c.weight = with(c.weight, w);
    return c.forward(x);
  };
  EXPECT_TRUE(check_grad(f1, uniform<3>({2, 2, 7}, -1, 1, 9), uniform<3>({3, 2, 3}, -1, 1, 10)));
}

TEST(NnGrad, LayerNorm) {
  auto f = [](const T<3>& x, const T<1>& g, const T<1>& b) {
    auto ln = LayerNormConfig{5}.init<AD>();
    ln.gamma = with(ln.gamma, g);
    ln.beta = with(ln.beta, b);
    return ln.forward(x);
  };
  EXPECT_TRUE(
      check_grad(f, uniform<3>({2, 3, 5}, -2, 2, 11), uniform<1>({5}, 0.5, 1.5, 12), uniform<1>({5}, -1, 1, 13)));
}

TEST(NnGrad, BatchNormTrainAndEval) {
  auto f2 = [](const T<4>& x, const T<1>& g, const T<1>& b) {
    auto bn = BatchNorm2dConfig{3}.init<AD>();
    bn.gamma = with(bn.gamma, g);
    bn.beta = with(bn.beta, b);
    return bn.forward(x);  // training: gradient flows through the batch mean and variance
  };
  EXPECT_TRUE(
      check_grad(f2, uniform<4>({2, 3, 2, 3}, -2, 2, 14), uniform<1>({3}, 0.5, 1.5, 15), uniform<1>({3}, -1, 1, 16)));
  auto f1 = [](const T<3>& x, const T<1>& g) {
    auto bn = no_grad(BatchNorm1dConfig{2}.init<AD>());  // beta stays an untracked constant
    bn.gamma = with(bn.gamma, g);
    return bn.forward(x);
  };
  EXPECT_TRUE(check_grad(f1, uniform<3>({3, 2, 4}, -2, 2, 17), uniform<1>({2}, 0.5, 1.5, 18)));
  auto fe = [](const T<2>& x, const T<1>& g) {
    auto bn = no_grad(eval(BatchNorm1dConfig{2}.init<AD>()));
    bn.running_mean = bn.running_mean.with_value(T<1>::from_values(std::vector<double>{0.5, -0.25}, {2}));
    bn.running_var = bn.running_var.with_value(T<1>::from_values(std::vector<double>{2.0, 0.5}, {2}));
    bn.gamma = with(bn.gamma, g);
    return bn.forward(x);
  };
  EXPECT_TRUE(check_grad(fe, uniform<2>({3, 2}, -2, 2, 19), uniform<1>({2}, 0.5, 1.5, 20)));
}

TEST(NnGrad, PreluInputAndWeight) {
  auto f = [](const T<3>& x, const T<1>& w) {
    auto p = PReLUConfig{3}.init<AD>();
    p.weight = with(p.weight, w);
    return p.forward(x);
  };
  EXPECT_TRUE(check_grad(f, away_from_zero<3>({2, 3, 4}, 0.1, 2, 21), uniform<1>({3}, -1, 1, 22)));
}

TEST(NnGrad, EmbeddingWeightWithRepeatedIndices) {
  const auto idx = TI<2>::from_values(std::vector<int64_t>{0, 3, 3, 1, 0, 3}, {2, 3});
  auto f = [idx](const T<2>& w) {
    auto e = EmbeddingConfig{5, 4}.init<AD>();
    e.weight = with(e.weight, w);
    return e.forward(idx);
  };
  EXPECT_TRUE(check_grad(f, uniform<2>({5, 4}, -1, 1, 23)));
}

TEST(NnGrad, Activations) {
  const auto x = away_from_zero<2>({3, 5}, 0.1, 3, 24);
  EXPECT_TRUE(check_grad([](const T<2>& v) { return GELU{}.forward(v); }, x));
  EXPECT_TRUE(check_grad([](const T<2>& v) { return GELU{GeluApproximate::Tanh}.forward(v); }, x));
  EXPECT_TRUE(check_grad([](const T<2>& v) { return SiLU{}.forward(v); }, x));
  EXPECT_TRUE(check_grad([](const T<2>& v) { return Sigmoid{}.forward(v); }, x));
  EXPECT_TRUE(check_grad([](const T<2>& v) { return Tanh{}.forward(v); }, x));
  EXPECT_TRUE(check_grad([](const T<2>& v) { return ReLU{}.forward(v); }, x));
  EXPECT_TRUE(check_grad([](const T<2>& v) { return LeakyReLU{0.2}.forward(v); }, x));
  EXPECT_TRUE(check_grad([](const T<2>& v) { return Threshold{0.05, -3.0}.forward(v); }, x));
  EXPECT_TRUE(check_grad([](const T<2>& v) { return Softplus{}.forward(v); }, x));
  // Both sides of the threshold (beta x = 2 * [0.1, 3] vs 1.5): the x branch has gradient exactly 1.
  EXPECT_TRUE(check_grad([](const T<2>& v) { return Softplus{2.0, 1.5}.forward(v); }, x.add_scalar(0.01)));
  EXPECT_TRUE(check_grad([](const T<2>& v) { return Softmax{1}.forward(v); }, x));
  EXPECT_TRUE(check_grad([](const T<2>& v) { return LogSoftmax{0}.forward(v); }, x));
}

TEST(NnGrad, Losses) {
  const auto targets = TI<1>::from_values(std::vector<int64_t>{2, 0, 4, 1}, {4});
  const auto logits = uniform<2>({4, 5}, -2, 2, 25);
  EXPECT_TRUE(check_grad([&](const T<2>& z) { return cross_entropy(z, targets); }, logits));
  EXPECT_TRUE(check_grad([&](const T<2>& z) { return cross_entropy(z, targets, {0.2}); }, logits));
  EXPECT_TRUE(check_grad([&](const T<2>& z) { return cross_entropy(z, targets, {0.1, Reduction::Sum}); }, logits));
  EXPECT_TRUE(check_grad([&](const T<2>& z) { return nll_loss(z.log_softmax(1), targets); }, logits));
  const auto t = uniform<2>({3, 4}, 0, 1, 26);
  EXPECT_TRUE(check_grad([&](const T<2>& z) { return binary_cross_entropy_with_logits(z, t); },
                         away_from_zero<2>({3, 4}, 0.1, 4, 27)));
  EXPECT_TRUE(
      check_grad([&](const T<2>& a, const T<2>& b) { return mse_loss(a, b); }, uniform<2>({3, 4}, -1, 1, 28), t));
  EXPECT_TRUE(check_grad([&](const T<2>& a) { return huber_loss(a, t, 0.5); }, uniform<2>({3, 4}, -2, 2, 29)));
}

// A network using every layer kind; every trainable param gets a gradient of its own shape, buffers none.
template <Backend B>
struct Everything {
  BOOST_HANA_DEFINE_STRUCT(Everything, (Conv2d<B>, conv), (BatchNorm2d<B>, bn), (PReLU<B>, act), (Conv1d<B>, conv1),
                           (Embedding<B>, emb), (LayerNorm<B>, ln),
                           (Sequential<B, Linear<B>, GELU, Dropout, Linear<B>>, head));
  Tensor<B, 1> loss(const Tensor<B, 4>& img, const Tensor<B, 2, Int>& tokens, const Tensor<B, 1, Int>& y) const {
    auto h = act.forward(bn.forward(conv.forward(img)));                               // [2, 4, 4, 4]
    h = AdaptiveAvgPool2d{{2, 2}}.forward(MaxPool2d{Pool2dOptions{}}.forward(h));      // [2, 4, 2, 2]
    auto seq = conv1.forward(h.template reshape<3>(std::array<int64_t, 3>{2, 4, 4}));  // [2, 4, 4]
    auto tok = ln.forward(emb.forward(tokens));                                        // [2, 4, 4]
    auto feats = seq.add(tok).template reshape<2>(std::array<int64_t, 2>{2, 16});
    return cross_entropy(head.forward(feats), y, {0.1});
  }
};

TEST(NnGrad, EveryTrainableParamReceivesAGradient) {
  seed(30);
  Everything<AD> m;
  m.conv = Conv2dConfig{3, 4, {3, 3}, {1, 1}, {1, 1}}.init<AD>();
  m.bn = BatchNorm2dConfig{4}.init<AD>();
  m.act = PReLUConfig{4}.init<AD>();
  m.conv1 = Conv1dConfig{4, 4, 3, 1, 1}.init<AD>();
  m.emb = EmbeddingConfig{6, 4}.init<AD>();
  m.ln = LayerNormConfig{4}.init<AD>();
  m.head =
      sequential<AD>(LinearConfig{16, 8}.init<AD>(), GELU{}, DropoutConfig{0.2}.init(), LinearConfig{8, 3}.init<AD>());
  const auto img = T<4>::random({2, 3, 4, 4}, Normal{});
  const auto tokens = TI<2>::from_values(std::vector<int64_t>{0, 5, 2, 2, 1, 3, 4, 0}, {2, 4});
  const auto y = TI<1>::from_values(std::vector<int64_t>{1, 2}, {2});
  const auto grads = m.loss(img, tokens, y).backward();
  std::size_t trainable = 0;
  visit_params(m, [&](const std::string& path, const auto& p) {
    if constexpr (std::decay_t<decltype(p)>::Value::is_float) {
      const auto g = p.val().grad(grads);
      if (p.role() != ParamRole::Trainable) {
        EXPECT_FALSE(g.has_value()) << path;
        return;
      }
      ++trainable;
      ASSERT_TRUE(g.has_value()) << path;
      EXPECT_EQ(g->shape(), p.shape()) << path;
      double norm = 0;
      for (double v : g->template to_vec<double>()) norm += v * v;
      EXPECT_GT(norm, 0.0) << path;
    }
  });
  EXPECT_EQ(trainable, 14u);
}

}  // namespace
}  // namespace ember::gradcheck
