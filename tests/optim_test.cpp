// Optimizer updates against hand-computed values (PyTorch semantics), per-param options, frozen params, clipping
// and gradient accumulation. Schedulers, state save/load and the end-to-end fit are in optim_state_test.cpp.
#include "tests/optim_test_util.hpp"

namespace ember::optim_test {
namespace {

// ---------------------------------------------------------------- SGD (loss 0.5*||w||^2, so g = w; lr = 0.1)

TEST(Sgd, PlainThreeSteps) {
  // w <- w - 0.1 w = 0.9 w: [1, -2] -> [0.9, -1.8] -> [0.81, -1.62] -> [0.729, -1.458]
  Sgd<AD> opt;
  auto w = three_quad_steps(opt, 0.1, {1, -2});
  expect_near(w[0], {0.9, -1.8});
  expect_near(w[1], {0.81, -1.62});
  expect_near(w[2], {0.729, -1.458});
}

TEST(Sgd, Momentum) {
  // momentum 0.9 on w0 = 1 (the -2 element is the same times -2):
  //   t1: g = 1     buf = g = 1 (first step)          w = 1 - 0.1*1 = 0.9
  //   t2: g = 0.9   buf = 0.9*1 + 0.9 = 1.8           w = 0.9 - 0.18 = 0.72
  //   t3: g = 0.72  buf = 0.9*1.8 + 0.72 = 2.34       w = 0.72 - 0.234 = 0.486
  Sgd<AD> opt(SgdConfig{.momentum = 0.9});
  auto w = three_quad_steps(opt, 0.1, {1, -2});
  expect_near(w[0], {0.9, -1.8});
  expect_near(w[1], {0.72, -1.44});
  expect_near(w[2], {0.486, -0.972});
}

TEST(Sgd, MomentumWithDampening) {
  // momentum 0.9, dampening 0.5: the first step takes buf = g undamped (PyTorch)
  //   t1: g = 1      buf = 1                              w = 0.9
  //   t2: g = 0.9    buf = 0.9*1 + 0.5*0.9 = 1.35         w = 0.9 - 0.135 = 0.765
  //   t3: g = 0.765  buf = 0.9*1.35 + 0.5*0.765 = 1.5975  w = 0.765 - 0.15975 = 0.60525
  Sgd<AD> opt(SgdConfig{.momentum = 0.9, .dampening = 0.5});
  auto w = three_quad_steps(opt, 0.1, {1});
  expect_near(w[0], {0.9});
  expect_near(w[1], {0.765});
  expect_near(w[2], {0.60525});
}

TEST(Sgd, Nesterov) {
  // momentum 0.9, Nesterov: d = g + 0.9 buf
  //   t1: g = 1       buf = 1                            d = 1.9                     w = 1 - 0.19 = 0.81
  //   t2: g = 0.81    buf = 0.9 + 0.81 = 1.71            d = 0.81 + 1.539 = 2.349    w = 0.81 - 0.2349 = 0.5751
  //   t3: g = 0.5751  buf = 1.539 + 0.5751 = 2.1141      d = 0.5751 + 1.90269 = 2.47779
  //                                                      w = 0.5751 - 0.247779 = 0.327321
  Sgd<AD> opt(SgdConfig{.momentum = 0.9, .nesterov = true});
  auto w = three_quad_steps(opt, 0.1, {1});
  expect_near(w[0], {0.81});
  expect_near(w[1], {0.5751});
  expect_near(w[2], {0.327321});
  EXPECT_THROW(Sgd<AD>(SgdConfig{.nesterov = true}), ArgumentError);  // Nesterov needs momentum
}

TEST(Sgd, WeightDecay) {
  // loss = sum(w) (g = 1), w0 = 2, wd = 0.1: d = 1 + 0.1 w
  //   t1: d = 1.2       w = 2 - 0.12 = 1.88
  //   t2: d = 1.188     w = 1.88 - 0.1188 = 1.7612
  //   t3: d = 1.17612   w = 1.7612 - 0.117612 = 1.643588
  Sgd<AD> opt(SgdConfig{.weight_decay = 0.1});
  auto m = make_pair<AD>({2}, {0});
  const std::vector<std::vector<double>> want = {{1.88}, {1.7612}, {1.643588}};
  for (int s = 0; s < 3; ++s) {
    m = opt.step(0.1, m, grads_of<AD>(m, [](const Pair<AD>& p) { return p.a.val().sum(); }));
    expect_near(vals(m.a), want[s]);
  }
}

TEST(Sgd, FloatBackendAndIdentity) {
  // The momentum sequence above on Autodiff<Cpu<float>>; the updated param keeps its ParamId and is a fresh leaf.
  Sgd<AF> opt(SgdConfig{.momentum = 0.9});
  auto m = make_pair<AF>({1, -2}, {3});
  const ParamId id = m.a.id();
  const std::vector<std::vector<double>> want = {{0.9, -1.8}, {0.72, -1.44}, {0.486, -0.972}};
  for (int s = 0; s < 3; ++s) {
    m = opt.step(0.1, m, grads_of<AF>(m, pair_half_sq<AF>));
    expect_near(vals(m.a), want[s], 1e-6);
  }
  EXPECT_EQ(m.a.id(), id);
  EXPECT_TRUE(m.a.require_grad());
  EXPECT_TRUE(m.a.val().is_require_grad());
  EXPECT_EQ(opt.step_count(id), 3);
}

// ---------------------------------------------------------------- Adam / AdamW (lr = 0.1, betas 0.9/0.999, eps 1e-8)

// The hand-derived updates hold for the backend's fused Adam step and for the composed default alike.
// The f32 composed path is the one the Vulkan backend runs (it has no fused Adam step); it is checked at 1e-6: the
// measured worst case is 1.08e-7 (f32 rounding of the inputs and of a handful of ops), so 1e-6 is ~9x that.
template <class B>
class AdamBothPaths : public ::testing::Test {
 protected:
  static constexpr double kTol = std::is_same_v<typename B::FloatElem, double> ? 1e-12 : 1e-6;
};
using AdamBackends = ::testing::Types<AD, ADComposed, AFComposed>;
struct AdamPathNames {
  template <class B>
  static std::string GetName(int) {
    if (std::is_same_v<B, AD>) return "Fused";
    return std::is_same_v<B, ADComposed> ? "Composed" : "ComposedF32";
  }
};
TYPED_TEST_SUITE(AdamBothPaths, AdamBackends, AdamPathNames);

TYPED_TEST(AdamBothPaths, ThreeSteps) {
  using B = TypeParam;
  // loss 0.5 w^2 (g = w), w0 = 1; m_hat = m/(1-0.9^t), v_hat = v/(1-0.999^t), w -= 0.1 m_hat/(sqrt(v_hat)+1e-8)
  //   t1: g = 1           m = 0.1           v = 0.001              m_hat = 1        v_hat = 1
  //       w = 1 - 0.1/(1 + 1e-8) = 0.900000001
  //   t2: g = 0.900000001 m = 0.18000000009 v = 0.0018090000018    m_hat = 0.9473684215789473
  //       v_hat = 0.9049524771385824        w = 0.900000001 - 0.1*0.94736842/0.95129 = 0.80041222971233816
  //   t3: g = 0.8004122297 m = 0.24204122306 v = 0.0024478507393   m_hat = 0.89314104450639797
  //       v_hat = 0.81676674090908874       w = 0.70158627450441502
  // and for w0 = -2 (same recursion): -1.9000000005, -1.8001664866210927, -1.7006233928121137
  Adam<B> opt;
  auto w = three_quad_steps<B>(opt, 0.1, {1, -2});
  expect_near(w[0], {0.900000001, -1.9000000005}, this->kTol);
  expect_near(w[1], {0.80041222971233816, -1.8001664866210927}, this->kTol);
  expect_near(w[2], {0.70158627450441502, -1.7006233928121137}, this->kTol);
}

TYPED_TEST(AdamBothPaths, L2WeightDecayVersusAdamW) {
  using B = TypeParam;
  // loss = sum(w) (g = 1), w0 = 1, weight_decay 0.1.
  // Adam (L2): g' = 1 + 0.1 w. Step 1 is sign-like, so the decay barely shows yet:
  //   t1: g' = 1.1            m_hat = 1.1  v_hat = 1.21                 w = 1 - 0.1*1.1/(1.1+1e-8) = 0.90000000090909094
  //   t2: g' = 1.0900000001   m = 0.208    v = 0.00239689               w = 0.8000248483897221
  //   t3: g' = 1.0800024848   m = 0.2952   v = 0.0035608985             w = 0.70009135443627257
  // AdamW: w *= 1 - 0.1*0.1 first, then the plain Adam step (m_hat = 1, v_hat = 1 every step since g is constant):
  //   t1: w = 0.99 - 0.1/(1+1e-8)                      = 0.89000000099999999
  //   t2: w = 0.89000000099999999*0.99 - 0.1/(1+1e-8)  = 0.78110000199000063
  //   t3: w = 0.78110000199000063*0.99 - 0.1/(1+1e-8)  = 0.67328900297010064
  auto run = [](auto opt) {
    auto m = make_pair<B>({1}, {0});
    std::vector<double> out;
    for (int s = 0; s < 3; ++s) {
      m = opt.step(0.1, m, grads_of<B>(m, [](const Pair<B>& p) { return p.a.val().sum(); }));
      out.push_back(vals(m.a)[0]);
    }
    return out;
  };
  expect_near(run(Adam<B>(AdamConfig{.weight_decay = 0.1})),
              {0.90000000090909094, 0.8000248483897221, 0.70009135443627257}, this->kTol);
  expect_near(run(AdamW<B>(AdamWConfig{.weight_decay = 0.1})),
              {0.89000000099999999, 0.78110000199000063, 0.67328900297010064}, this->kTol);
  EXPECT_EQ(AdamWConfig{}.weight_decay, 0.01);  // PyTorch defaults: AdamW decays, Adam does not
  EXPECT_EQ(AdamConfig{}.weight_decay, 0.0);
}

// torch.optim.Adam / AdamW's update for one scalar, written out in double here, independently of adam.hpp and
// optional_ops.hpp, with the bias corrections 1 - beta^t spelled out: a path that drops either correction is off by
// ~0.2 after the first step (m = 0.1 g against m_hat = g).
std::vector<double> scalar_adam(double w, double lr, double wd, bool decoupled, int steps, double (*grad)(double)) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  double m = 0, v = 0;
  std::vector<double> out;
  for (int t = 1; t <= steps; ++t) {
    double g = grad(w);
    if (decoupled) w *= 1 - lr * wd;
    else g += wd * w;
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g * g;
    const double m_hat = m / (1 - std::pow(b1, t)), v_hat = v / (1 - std::pow(b2, t));
    w -= lr * m_hat / (std::sqrt(v_hat) + eps);
    out.push_back(w);
  }
  return out;
}

TYPED_TEST(AdamBothPaths, OneTwoThreeStepsMatchScalarReference) {
  using B = TypeParam;
  // loss = sum(sin(a)) (g = cos(a), so the gradient changes every step and m_hat, v_hat differ from g), a0 = 1.3.
  auto run = [](auto opt) {
    auto m = make_pair<B>({1.3}, {0});
    std::vector<double> out;
    for (int s = 0; s < 3; ++s) {
      m = opt.step(0.1, m, grads_of<B>(m, [](const Pair<B>& p) { return p.a.val().sin().sum(); }));
      out.push_back(vals(m.a)[0]);
    }
    return out;
  };
  auto cos_grad = [](double w) { return std::cos(w); };
  SCOPED_TRACE("Adam");
  expect_near(run(Adam<B>()), scalar_adam(1.3, 0.1, 0.0, false, 3, cos_grad), this->kTol);
  SCOPED_TRACE("Adam with L2 weight decay 0.2");
  expect_near(run(Adam<B>(AdamConfig{.weight_decay = 0.2})), scalar_adam(1.3, 0.1, 0.2, false, 3, cos_grad),
              this->kTol);
  SCOPED_TRACE("AdamW with weight decay 0.2");
  expect_near(run(AdamW<B>(AdamWConfig{.weight_decay = 0.2})), scalar_adam(1.3, 0.1, 0.2, true, 3, cos_grad),
              this->kTol);
}

TEST(Adam, ComposedStepMatchesFusedStep) {
  // Five steps of Adam (L2) and AdamW on a loss whose gradient changes every step, once through the CPU backend's
  // fused kernel and once through the composed default: same formulas in the same order, so in f64 they agree to
  // rounding.
  auto run = [](auto opt, auto tag) {
    using B = decltype(tag);
    auto m = make_pair<B>({0.7, -1.3, 2.1, 0.05}, {-0.4, 0.9, 1.6});
    auto loss = [](const Pair<B>& p) { return p.a.val().sin().sum().add(p.b.val().mul(p.b.val()).tanh().sum()); };
    std::vector<double> out;
    for (int s = 0; s < 5; ++s) m = opt.step(0.05, m, grads_of<B>(m, loss));
    for (double v : vals(m.a)) out.push_back(v);
    for (double v : vals(m.b)) out.push_back(v);
    return out;
  };
  expect_near(run(Adam<ADComposed>(AdamConfig{.weight_decay = 0.05}), ADComposed{}),
              run(Adam<AD>(AdamConfig{.weight_decay = 0.05}), AD{}), 1e-14);
  expect_near(run(AdamW<ADComposed>(AdamWConfig{.weight_decay = 0.05}), ADComposed{}),
              run(AdamW<AD>(AdamWConfig{.weight_decay = 0.05}), AD{}), 1e-14);
}

// ---------------------------------------------------------------- per-param options, frozen params

template <Backend B>
struct Outer {
  BOOST_HANA_DEFINE_STRUCT(Outer, (Pair<B>, inner), (Param<Tensor<B, 1>>, c));
};

TEST(ParamOptions, LongestPrefixWins) {
  ParamOptionsTable t;
  t.set("", {2, 1});
  t.set("encoder", {0.5, 1});
  t.set("encoder.norm", {1, 0});
  EXPECT_EQ(t.resolve("decoder.w").lr_mult, 2);
  EXPECT_EQ(t.resolve("encoder.w").lr_mult, 0.5);
  EXPECT_EQ(t.resolve("encoder").lr_mult, 0.5);
  EXPECT_EQ(t.resolve("encoder.norm.gamma").wd_mult, 0);
  EXPECT_EQ(t.resolve("encoder.normal.w").wd_mult, 1);  // whole path components only
  EXPECT_EQ(t.resolve("enc").lr_mult, 2);
  EXPECT_THROW(t.set("x", {-1, 1}), ArgumentError);
}

TEST(ParamOptions, MultipliersApplyAtStep) {
  // SGD lr 0.1, weight_decay 0.5, loss 0.5||.||^2 (g = w), so d = g + wd_eff w:
  //   inner.a: "inner" {lr 0.5x}        lr 0.05, d = 1.5 w   ->  w (1 - 0.075) = 0.925 w
  //   inner.b: "inner.b" {wd 0x}        lr 0.1,  d = w       ->  0.9 w
  //   c:       defaults                  lr 0.1,  d = 1.5 w   ->  0.85 w
  Outer<AD> m;
  m.inner = make_pair<AD>({2}, {4});
  m.c = param<AD, 1>({-2}, {1});
  Sgd<AD> opt(SgdConfig{.weight_decay = 0.5});
  opt.set_param_options("inner", {0.5, 1});
  opt.set_param_options("inner.b", {1, 0});
  auto g = grads_of<AD>(m, [](const Outer<AD>& o) { return pair_half_sq(o.inner).add(half_sq(o.c.val())); });
  m = opt.step(0.1, m, g);
  expect_near(vals(m.inner.a), {1.85});
  expect_near(vals(m.inner.b), {3.6});
  expect_near(vals(m.c), {-1.7});
}

template <Backend B>
struct Mixed {
  BOOST_HANA_DEFINE_STRUCT(Mixed, (Param<Tensor<B, 1>>, a), (Param<Tensor<B, 1>>, frozen),
                           (Param<Tensor<B, 1>>, buffer), (Param<Tensor<B, 1, Int>>, count),
                           (Param<Tensor<B, 1>>, unused));
};

TEST(Optimizers, SkipFrozenBuffersAndParamsWithoutGradient) {
  Mixed<AD> m;
  m.a = param<AD, 1>({1}, {1});
  m.frozen = param<AD, 1>({2}, {1}, false);
  m.buffer = param<AD, 1>({3}, {1}, true, ParamRole::Buffer);  // a Buffer never requires grad, whatever is asked
  m.count = Param<Tensor<AD, 1, Int>>::initialized(ParamId::next(), Tensor<AD, 1, Int>::full({1}, 7), false,
                                                   ParamRole::Buffer);
  m.unused = param<AD, 1>({4}, {1});
  auto g = grads_of<AD>(m, [](const Mixed<AD>& x) {
    return x.a.val().mul(x.frozen.val()).add(x.buffer.val()).sum();  // unused is never touched
  });
  EXPECT_EQ(g.size(), 1u);  // only `a`
  ASSERT_TRUE(g.get(m.a.id()));
  // Even a gradient handed in explicitly for a frozen param or a buffer is ignored.
  g.put(m.frozen.id(), Tensor<Cpu<double>, 1>::ones({1}));
  g.put(m.buffer.id(), Tensor<Cpu<double>, 1>::ones({1}));
  Adam<AD> adam;
  auto out = adam.step(0.1, m, g);
  EXPECT_NEAR(vals(out.a)[0], 0.9, 1e-7);
  EXPECT_EQ(vals(out.frozen)[0], 2);
  EXPECT_EQ(vals(out.buffer)[0], 3);
  EXPECT_EQ(out.count.val().to_vec<int64_t>()[0], 7);
  EXPECT_EQ(vals(out.unused)[0], 4);
  EXPECT_FALSE(out.frozen.require_grad());
  EXPECT_EQ(adam.state().params.size(), 2u);  // exp_avg and exp_avg_sq of `a` only
}

// ---------------------------------------------------------------- clipping

GradientsParams<AD> grads_3_4_12() {
  GradientsParams<AD> g;
  g.put(ParamId{1}, Tensor<Cpu<double>, 1>::from_values(std::vector<double>{3, -4}, {2}));
  g.put(ParamId{2}, Tensor<Cpu<double>, 2>::from_values(std::vector<double>{12}, {1, 1}));
  return g;
}

TEST(Clip, ByGlobalNorm) {
  // ||[3, -4, 12]||_2 = 13; max_norm 6.5 -> coef = 6.5/(13 + 1e-6) = 0.49999996153846454
  auto g = grads_3_4_12();
  EXPECT_DOUBLE_EQ(clip_grad_norm(g, 6.5), 13.0);
  expect_near(g.get(ParamId{1})->to_vec<double>(), {1.4999998846153937, -1.9999998461538582});
  expect_near(g.get_shaped<2>(ParamId{2})->to_vec<double>(), {5.999999538461575});
  EXPECT_EQ(g.shape(ParamId{2}), (Shape{1, 1}));
  // Under the limit nothing changes.
  auto h = grads_3_4_12();
  EXPECT_DOUBLE_EQ(clip_grad_norm(h, 20.0), 13.0);
  expect_near(h.get(ParamId{1})->to_vec<double>(), {3, -4}, 0);
  // L1: 3 + 4 + 12 = 19, max 9.5 -> coef 9.5/(19 + 1e-6) = 0.4999999736842119; L-inf: 12.
  auto l1 = grads_3_4_12();
  EXPECT_DOUBLE_EQ(clip_grad_norm(l1, 9.5, 1.0), 19.0);
  expect_near(l1.get(ParamId{2})->to_vec<double>(), {12 * 0.4999999736842119});
  auto li = grads_3_4_12();
  EXPECT_DOUBLE_EQ(grad_norm(li, std::numeric_limits<double>::infinity()), 12.0);
  // p = 3: (27 + 64 + 1728)^(1/3)
  EXPECT_NEAR(grad_norm(li, 3.0), std::cbrt(1819.0), 1e-12);
}

TEST(Clip, ByValue) {
  auto g = grads_3_4_12();
  clip_grad_value(g, 3.5);
  expect_near(g.get(ParamId{1})->to_vec<double>(), {3, -3.5}, 0);
  expect_near(g.get(ParamId{2})->to_vec<double>(), {3.5}, 0);
  EXPECT_THROW(clip_grad_value(g, -1), ArgumentError);
}

TEST(Clip, RealGradientsThenStep) {
  // a = [3, -4], b = [[12]], loss 0.5||.||^2 -> g = values, norm 13; clipped to 1.3 then SGD lr 1:
  // w - w * 1.3/(13 + 1e-6)
  auto m = make_pair<AD>({3, -4}, {12});
  auto g = grads_of<AD>(m, pair_half_sq<AD>);
  EXPECT_NEAR(clip_grad_norm(g, 1.3), 13.0, 1e-12);
  Sgd<AD> sgd;
  m = sgd.step(1.0, m, g);
  const double k = 1 - 1.3 / (13 + 1e-6);
  expect_near(vals(m.a), {3 * k, -4 * k});
  expect_near(vals(m.b), {12 * k});
}

// ---------------------------------------------------------------- accumulation

TEST(Accumulate, AddSumsAndWriteReplaces) {
  // pass 1: loss sum(1*a) + sum(5*b)  -> g_a = [1, 1], g_b = [[5]]
  // pass 2: loss sum(10*a)            -> g_a = [10, 10], no g_b
  auto m = make_pair<AD>({0, 0}, {0});
  auto g1 = grads_of<AD>(m, [](const Pair<AD>& p) { return p.a.val().sum().add(p.b.val().mul_scalar(5).sum()); });
  auto g2 = grads_of<AD>(m, [](const Pair<AD>& p) { return p.a.val().mul_scalar(10).sum(); });
  GradientsAccumulator<AD> add(AccumulateMode::Add), write(AccumulateMode::Write);
  for (auto* acc : {&add, &write}) {
    acc->accumulate(g1);
    acc->accumulate(g2);
    EXPECT_EQ(acc->count(), 2u);
  }
  auto sum = add.take();
  expect_near(sum.get(m.a.id())->to_vec<double>(), {11, 11}, 0);
  expect_near(sum.get(m.b.id())->to_vec<double>(), {5}, 0);
  auto last = write.take();
  expect_near(last.get(m.a.id())->to_vec<double>(), {10, 10}, 0);
  expect_near(last.get(m.b.id())->to_vec<double>(), {5}, 0);  // absent from pass 2: kept
  EXPECT_EQ(add.count(), 0u);
  EXPECT_TRUE(add.take().empty());
  // The accumulated gradients drive a step: SGD lr 0.1 -> a = -0.1 * 11.
  Sgd<AD> sgd;
  m = sgd.step(0.1, m, sum);
  expect_near(vals(m.a), {-1.1, -1.1});
}

}  // namespace
}  // namespace ember::optim_test
