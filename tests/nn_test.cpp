// ember::nn module behaviour: shapes, lazy init, default init bounds and initializers, parameter paths, records,
// Dropout train/eval, Sequential, valid() to an inference module, argument errors. Forward values against the
// NumPy references are in tests/nn/nn_reference_test.cpp, gradients in tests/nn/nn_grad_test.cpp.
#include "engine/nn/nn.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "records/module_record.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace {

using namespace ember::nn;
using CB = Cpu<double>;
using AD = Autodiff<Cpu<double>>;

template <Backend B>
struct Net {
  BOOST_HANA_DEFINE_STRUCT(Net, (Linear<B>, fc1), (BatchNorm1d<B>, bn), (Dropout, drop), (PReLU<B>, act),
                           (Sequential<B, Linear<B>, ReLU, Linear<B>>, head));
  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {
    return head.forward(act.forward(drop.forward(bn.forward(fc1.forward(x)))));
  }
};

template <Backend B>
Net<B> make_net() {
  Net<B> n;
  n.fc1 = LinearConfig{3, 4}.template init<B>();
  n.bn = BatchNorm1dConfig{4}.template init<B>();
  n.drop = DropoutConfig{0.5}.init();
  n.act = PReLUConfig{4}.template init<B>();
  n.head = sequential<B>(LinearConfig{4, 5}.template init<B>(), ReLU{}, LinearConfig{5, 2, false}.template init<B>());
  return n;
}

Rng global_rng_copy() {
  std::lock_guard lock(global_rng().mu);
  return global_rng().rng;
}

std::vector<std::string> paths(const std::vector<ParamInfo>& ps) {
  std::vector<std::string> out;
  for (const auto& p : ps) out.push_back(p.path);
  return out;
}

// ---------------------------------------------------------------- lazy init
TEST(NnLazyInit, ConstructionSamplesNothing) {
  seed(7);
  const Rng before = global_rng_copy();
  auto n = make_net<AD>();
  auto conv = Conv2dConfig{3, 8, {3, 3}}.init<AD>();
  auto emb = EmbeddingConfig{1000, 64}.init<AD>();
  Rng after = global_rng_copy(), expect = before;
  EXPECT_EQ(after.next(), expect.next()) << "constructing modules drew from the global Rng";
  for (const auto& p : named_parameters(n)) EXPECT_FALSE(p.initialized) << p.path;
  EXPECT_FALSE(conv.weight.is_initialized());
  EXPECT_FALSE(emb.weight.is_initialized());
  // num_params reads shapes only: 3*4+4 + 4*4 (bn) + 4 (prelu) + 4*5+5 + 5*2.
  EXPECT_EQ(num_params(n), 16 + 16 + 4 + 25 + 10);
  EXPECT_EQ(num_params(emb), 64000);
  EXPECT_EQ(num_params(conv), 8 * 3 * 9 + 8);
  for (const auto& p : named_parameters(n)) EXPECT_FALSE(p.initialized) << p.path << " after num_params";
  // First use materializes exactly what it touches.
  (void)n.fc1.forward(Tensor<AD, 2>::ones({2, 3}));
  EXPECT_TRUE(n.fc1.weight.is_initialized());
  EXPECT_FALSE(n.head.get<0>().weight.is_initialized());
}

TEST(NnLazyInit, SameSeedSameValues) {
  auto draw = [] {
    seed(42);
    auto l = LinearConfig{5, 3}.init<CB>();
    return values(l.weight.val());
  };
  EXPECT_EQ(draw(), draw());
}

TEST(NnLazyInit, LoadRecordIntoFreshModuleNeverInitializes) {
  auto src = make_net<CB>();
  const auto rec = into_record(src);
  EXPECT_EQ(rec.params.size(), named_parameters(src).size());
  seed(9);
  const Rng before = global_rng_copy();
  auto loaded = load_record(make_net<CB>(), rec);
  Rng after = global_rng_copy(), expect = before;
  EXPECT_EQ(after.next(), expect.next());
  // Records default to f32 storage (full precision settings), hence the tolerance.
  EXPECT_TRUE(close(values(loaded.fc1.weight.val()), values(src.fc1.weight.val()), 1e-7));
  EXPECT_EQ(values(loaded.bn.running_var.val()), values(src.bn.running_var.val()));
  EXPECT_EQ(loaded.fc1.weight.id(), src.fc1.weight.id());
}

// ---------------------------------------------------------------- default init (PyTorch's)
double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}
double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
double std_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}

TEST(NnDefaultInit, LinearIsUniformOneOverSqrtFanIn) {
  seed(1);
  auto l = LinearConfig{64, 32}.init<CB>();
  const double bound = 1.0 / 8.0;
  const auto w = values(l.weight.val()), b = values(l.bias->val());
  EXPECT_LE(max_abs(w), bound);
  EXPECT_GT(max_abs(w), 0.95 * bound);  // 2048 uniform draws fill the range
  EXPECT_NEAR(std_of(w), bound / std::sqrt(3.0), 0.01);
  EXPECT_LE(max_abs(b), bound);
  EXPECT_GT(max_abs(b), 0.5 * bound);
}

TEST(NnDefaultInit, ConvFanInCountsGroupsAndKernel) {
  seed(2);
  auto c = Conv2dConfig{8, 6, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 2}.init<CB>();
  EXPECT_EQ(c.weight.shape(), (Shape{6, 4, 3, 3}));
  const double bound = 1.0 / std::sqrt(4.0 * 9.0);
  EXPECT_LE(max_abs(values(c.weight.val())), bound);
  EXPECT_GT(max_abs(values(c.weight.val())), 0.9 * bound);
  EXPECT_LE(max_abs(values(c.bias->val())), bound);
  auto c1 = Conv1dConfig{4, 2, 5}.init<CB>();
  EXPECT_LE(max_abs(values(c1.weight.val())), 1.0 / std::sqrt(20.0));
}

TEST(NnDefaultInit, OtherLayers) {
  seed(3);
  auto e = EmbeddingConfig{100, 50}.init<CB>();
  EXPECT_NEAR(mean_of(values(e.weight.val())), 0.0, 0.05);
  EXPECT_NEAR(std_of(values(e.weight.val())), 1.0, 0.05);
  auto ln = LayerNormConfig{3}.init<CB>();
  EXPECT_EQ(values(ln.gamma.val()), std::vector<double>(3, 1.0));
  EXPECT_EQ(values(ln.beta.val()), std::vector<double>(3, 0.0));
  auto bn = BatchNorm2dConfig{2}.init<CB>();
  EXPECT_EQ(values(bn.running_mean.val()), std::vector<double>(2, 0.0));
  EXPECT_EQ(values(bn.running_var.val()), std::vector<double>(2, 1.0));
  EXPECT_DOUBLE_EQ(bn.momentum, 0.1);
  EXPECT_DOUBLE_EQ(bn.epsilon, 1e-5);
  EXPECT_EQ(values(PReLUConfig{3}.init<CB>().weight.val()), std::vector<double>(3, 0.25));
}

TEST(NnInitializers, Distributions) {
  seed(4);
  const Fans f{100, 300};
  auto draw = [&](const Initializer& i) {
    return values(initialize<Tensor<CB, 2>>(i, std::array<int64_t, 2>{200, 100}, f));
  };
  EXPECT_NEAR(std_of(draw(init::KaimingNormal{})), std::sqrt(2.0) / 10.0, 0.005);
  EXPECT_NEAR(std_of(draw(init::KaimingNormal{1.0, FanMode::FanOut})), 1.0 / std::sqrt(300.0), 0.002);
  const double ku = std::sqrt(2.0) * std::sqrt(3.0 / 100.0);
  EXPECT_LE(max_abs(draw(init::KaimingUniform{})), ku);
  EXPECT_GT(max_abs(draw(init::KaimingUniform{})), 0.99 * ku);
  const double xu = std::sqrt(6.0 / 400.0);
  EXPECT_LE(max_abs(draw(init::XavierUniform{})), xu);
  EXPECT_GT(max_abs(draw(init::XavierUniform{})), 0.99 * xu);
  EXPECT_NEAR(std_of(draw(init::XavierNormal{2.0})), 2.0 * std::sqrt(2.0 / 400.0), 0.003);
  EXPECT_NEAR(mean_of(draw(init::Normal{3.0, 0.5})), 3.0, 0.02);
  const auto u = draw(init::Uniform{-3.0, -2.0});
  EXPECT_TRUE(std::all_of(u.begin(), u.end(), [](double v) { return v >= -3.0 && v < -2.0; }));
  EXPECT_EQ(draw(init::Constant{1.5}), std::vector<double>(20000, 1.5));
  EXPECT_EQ(draw(init::Ones{}), std::vector<double>(20000, 1.0));
  EXPECT_EQ(draw(init::Zeros{}), std::vector<double>(20000, 0.0));
  EXPECT_NEAR(init::leaky_relu_gain(std::sqrt(5.0)), std::sqrt(1.0 / 3.0), 1e-15);
}

TEST(NnInitializers, MissingFanThrowsAtConfigTime) {
  EXPECT_THROW((lazy_param<Tensor<CB, 1>>(init::XavierUniform{}, std::array<int64_t, 1>{3}, Fans{3, std::nullopt}, {})),
               ArgumentError);
  EXPECT_NO_THROW((lazy_param<Tensor<CB, 1>>(init::Ones{}, std::array<int64_t, 1>{3}, {}, {})));
  EXPECT_NO_THROW((LinearConfig{3, 2, true, init::XavierNormal{}}.init<CB>()));
}

// ---------------------------------------------------------------- paths, roles, records
TEST(NnModule, NamedParameterPaths) {
  const auto n = make_net<AD>();
  const std::vector<std::string> want = {"fc1.weight",         "fc1.bias",
                                         "bn.gamma",           "bn.beta",
                                         "bn.running_mean",    "bn.running_var",
                                         "act.weight",         "head.layers.0.weight",
                                         "head.layers.0.bias", "head.layers.2.weight"};
  EXPECT_EQ(paths(named_parameters(n)), want);
  for (const auto& p : named_parameters(n)) {
    const bool buffer = p.path.find("running") != std::string::npos;
    EXPECT_EQ(p.role, buffer ? ParamRole::Buffer : ParamRole::Trainable) << p.path;
    EXPECT_EQ(p.require_grad, !buffer) << p.path;
  }
  EXPECT_EQ(paths(named_parameters(n.head)),
            (std::vector<std::string>{"layers.0.weight", "layers.0.bias", "layers.2.weight"}));
  EXPECT_EQ(named_parameters(n.fc1)[0].shape, (Shape{3, 4}));  // [d_input, d_output]
}

TEST(NnModule, ParameterFreeModulesHaveEmptyRecords) {
  auto acts = sequential<CB>(ReLU{}, GELU{}, Sigmoid{}, Tanh{}, SiLU{}, Softplus{}, LeakyReLU{}, Threshold{}, Softmax{},
                             LogSoftmax{}, Identity{}, DropoutConfig{0.1}.init());
  EXPECT_TRUE(into_record(acts).params.empty());
  EXPECT_EQ(num_params(acts), 0);
  EXPECT_TRUE(into_record(MaxPool2dConfig{}.init()).params.empty());
}

// ---------------------------------------------------------------- shapes
TEST(NnShapes, LayersAndRanks) {
  auto l = LinearConfig{4, 3}.init<CB>();
  EXPECT_EQ(l.forward(Tensor<CB, 1>::ones({4})).shape(), (Shape{3}));
  EXPECT_EQ(l.forward(Tensor<CB, 2>::ones({5, 4})).shape(), (Shape{5, 3}));
  EXPECT_EQ(l.forward(Tensor<CB, 4>::ones({2, 3, 5, 4})).shape(), (Shape{2, 3, 5, 3}));
  EXPECT_THROW(l.forward(Tensor<CB, 2>::ones({5, 3})), ShapeError);
  EXPECT_FALSE((LinearConfig{4, 3, false}.init<CB>().bias.has_value()));

  auto c = Conv2dConfig{4, 6, {3, 2}, {2, 1}, {1, 0}, {1, 2}, 2}.init<CB>();
  // H: (9 + 2 - 2 - 1) / 2 + 1 = 5; W: (7 - 2 - 1) / 1 + 1 = 5.
  EXPECT_EQ(c.forward(Tensor<CB, 4>::ones({2, 4, 9, 7})).shape(), (Shape{2, 6, 5, 5}));
  auto c1 = Conv1dConfig{2, 3, 3, 2, 1}.init<CB>();
  EXPECT_EQ(c1.forward(Tensor<CB, 3>::ones({1, 2, 8})).shape(), (Shape{1, 3, 4}));
  EXPECT_THROW((Conv2dConfig{3, 4, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 2}.init<CB>()), ArgumentError);

  auto e = EmbeddingConfig{10, 6}.init<CB>();
  EXPECT_EQ(e.forward(Tensor<CB, 2, Int>::zeros({2, 5})).shape(), (Shape{2, 5, 6}));
  EXPECT_THROW(e.forward(Tensor<CB, 2, Int>::full({1, 2}, 10)), IndexError);

  const auto img = Tensor<CB, 4>::ones({1, 2, 6, 6});
  EXPECT_EQ((MaxPool2dConfig{{2, 2}}.init().forward(img).shape()), (Shape{1, 2, 3, 3}));
  EXPECT_EQ((AvgPool2dConfig{{3, 3}, std::array<int64_t, 2>{1, 1}, {1, 1}}.init().forward(img).shape()),
            (Shape{1, 2, 6, 6}));
  EXPECT_EQ((AdaptiveAvgPool2dConfig{{2, 3}}.init().forward(img).shape()), (Shape{1, 2, 2, 3}));
  EXPECT_THROW((MaxPool2dConfig{{0, 2}}.init()), ArgumentError);
}

TEST(NnShapes, LayersMatchTheirOps) {
  seed(5);
  auto c = Conv2dConfig{2, 3, {3, 3}, {1, 1}, {1, 1}}.init<CB>();
  const auto x = Tensor<CB, 4>::random({2, 2, 5, 5}, Normal{});
  Conv2dOptions o;
  o.padding = {1, 1};
  EXPECT_TRUE(close(values(c.forward(x)), values(conv2d<CB>(x, c.weight.val(), c.bias->val(), o)), 1e-15));
  auto l = LinearConfig{5, 4}.init<CB>();
  const auto y = Tensor<CB, 3>::random({2, 3, 5}, Normal{});
  const auto want = y.reshape(std::array<int64_t, 2>{6, 5})
                        .matmul(l.weight.val())
                        .add(l.bias->val().reshape(std::array<int64_t, 2>{1, 4}));
  EXPECT_TRUE(close(values(l.forward(y)), values(want), 1e-14));
  EXPECT_EQ(values(Identity{}.forward(y)), values(y));
}

TEST(NnShapes, PreluChannels) {
  auto shared = PReLUConfig{}.init<CB>();
  EXPECT_EQ(shared.forward(Tensor<CB, 1>::full({3}, -4.0)).to_vec<double>(), std::vector<double>(3, -1.0));
  auto per = PReLUConfig{3}.init<CB>();
  EXPECT_THROW(per.forward(Tensor<CB, 1>::ones({3})), ShapeError);  // rank 1 has no channel dim
  EXPECT_THROW(per.forward(Tensor<CB, 2>::ones({3, 2})), ShapeError);
}

// ---------------------------------------------------------------- Dropout
TEST(NnDropout, TrainScalesEvalIsIdentity) {
  seed(11);
  const auto d = DropoutConfig{0.25}.init();
  ASSERT_TRUE(d.mode.training);
  const auto x = Tensor<CB, 2>::ones({100, 100});
  const auto y = values(d.forward(x));
  std::size_t zeros = 0;
  for (double v : y) {
    if (v == 0.0)
      ++zeros;
    else
      EXPECT_DOUBLE_EQ(v, 1.0 / 0.75);
  }
  EXPECT_NEAR(static_cast<double>(zeros) / 10000.0, 0.25, 0.02);
  EXPECT_NEAR(mean_of(y), 1.0, 0.03);  // inverted dropout keeps the expectation
  EXPECT_NE(values(d.forward(x)), y);  // a fresh mask per call
  seed(11);
  EXPECT_EQ(values(d.forward(x)), y);  // reproducible from the seed
  EXPECT_EQ(values(eval(d).forward(x)), values(x));
  EXPECT_EQ(values(DropoutConfig{0.0}.init().forward(x)), values(x));
  EXPECT_EQ(values(DropoutConfig{1.0}.init().forward(x)), std::vector<double>(10000, 0.0));
  EXPECT_THROW(DropoutConfig{1.5}.init(), ArgumentError);
}

// The pre-scaled mask (one multiply each way) gives the bits of the two-step x * keep * (1 / (1 - p)), forward and
// backward, with keep drawn from the same seed.
TEST(NnDropout, PrescaledMaskHasTheTwoStepBits) {
  Rng r(5);
  const auto x = Tensor<AD, 2>::random({37, 29}, Normal{0.0, 3.0}, r).require_grad();
  const auto d = DropoutConfig{0.3}.init();
  seed(21);
  const auto y = d.forward(x);
  const auto gy = Tensor<AD, 2>::random({37, 29}, Normal{}, r);
  const auto gx = x.grad(y.mul(gy).sum().backward());
  seed(21);
  const auto keep = Tensor<CB, 2>::random({37, 29}, Bernoulli{0.7}, x.inner().device());
  const auto xi = x.inner(), gyi = gy.inner();
  EXPECT_EQ(values(y.inner()), values(xi.mul(keep).mul_scalar(1.0 / 0.7)));
  ASSERT_TRUE(gx.has_value());
  EXPECT_EQ(values(*gx), values(gyi.mul_scalar(1.0 / 0.7).mul(keep)));
}

// ---------------------------------------------------------------- Sequential, valid, BatchNorm modes
TEST(NnSequential, ChainsLayersAcrossRanksAndKinds) {
  auto s = sequential<CB>(EmbeddingConfig{7, 4}.init<CB>(), LinearConfig{4, 3}.init<CB>(), Tanh{});
  const auto idx = Tensor<CB, 2, Int>::from_values(std::vector<int64_t>{0, 6, 2, 2, 1, 3}, {2, 3});
  const auto y = s.forward(idx);
  static_assert(std::is_same_v<decltype(y), const Tensor<CB, 3>>);
  const auto want = s.get<1>().forward(s.get<0>().forward(idx)).tanh();
  EXPECT_EQ(values(y), values(want));
  EXPECT_EQ(paths(named_parameters(s)),
            (std::vector<std::string>{"layers.0.weight", "layers.1.weight", "layers.1.bias"}));
}

TEST(NnValid, GivesAnInferenceModuleInEvalMode) {
  auto n = make_net<AD>();
  seed(12);
  const auto x = Tensor<AD, 2>::random({8, 3}, Normal{});
  (void)n.forward(x);  // a training step: updates bn's running statistics
  const auto rm = values(n.bn.running_mean.val());
  EXPECT_NE(rm, std::vector<double>(4, 0.0));

  auto v = valid(n);
  static_assert(std::is_same_v<decltype(v), Net<CB>>);
  EXPECT_FALSE(v.bn.mode.training);
  EXPECT_FALSE(v.drop.mode.training);
  EXPECT_TRUE(n.bn.mode.training);  // the original is untouched
  EXPECT_EQ(values(v.bn.running_mean.val()), rm);
  const auto xi = x.inner();
  const auto y1 = values(v.forward(xi)), y2 = values(v.forward(xi));
  EXPECT_EQ(y1, y2);                               // eval: no dropout mask, running statistics
  EXPECT_EQ(values(v.bn.running_mean.val()), rm);  // eval forward does not update
  for (const auto& p : named_parameters(v)) EXPECT_FALSE(p.require_grad) << p.path;

  // Top-level Sequential (not M<B>-shaped) has its own valid().
  auto s = sequential<AD>(LinearConfig{3, 4}.init<AD>(), DropoutConfig{0.5}.init(), BatchNorm1dConfig{4}.init<AD>());
  (void)s.forward(x);  // BatchNorm's running statistics update through the const Sequential::forward
  EXPECT_NE(values(s.get<2>().running_mean.val()), std::vector<double>(4, 0.0));
  auto vs = valid(s);
  static_assert(std::is_same_v<decltype(vs), Sequential<CB, Linear<CB>, Dropout, BatchNorm1d<CB>>>);
  EXPECT_FALSE(vs.get<1>().mode.training);
  EXPECT_FALSE(vs.get<2>().mode.training);
  EXPECT_EQ(vs.forward(xi).shape(), (Shape{8, 4}));
}

TEST(NnBatchNorm, ModesAndErrors) {
  auto bn = BatchNorm1dConfig{3}.init<AD>();
  EXPECT_THROW(bn.forward(Tensor<AD, 2>::ones({1, 3})), ShapeError);  // one value per channel in training
  EXPECT_THROW(bn.forward(Tensor<AD, 2>::ones({4, 2})), ShapeError);
  const auto copy = bn;  // value semantics: a copy taken before a step keeps its statistics
  (void)bn.forward(Tensor<AD, 2>::from_values(std::vector<double>{1, 2, 3, 3, 2, 1}, {2, 3}));
  EXPECT_EQ(values(bn.running_mean.val()), (std::vector<double>{0.2, 0.2, 0.2}));
  EXPECT_EQ(values(copy.running_mean.val()), std::vector<double>(3, 0.0));
  const auto ev = eval(bn);
  EXPECT_EQ(ev.forward(Tensor<AD, 2>::ones({1, 3})).shape(), (Shape{1, 3}));  // eval accepts a batch of one
  // The running statistics are buffers: never tracked, so optimizers and backward ignore them.
  EXPECT_FALSE(bn.running_var.val().is_require_grad());
  EXPECT_EQ(train(ev).mode.training, true);
}

TEST(NnLoss, ArgumentErrors) {
  const auto logits = Tensor<CB, 2>::zeros({2, 3});
  EXPECT_THROW(cross_entropy(logits, Tensor<CB, 1, Int>::from_values(std::vector<int64_t>{0, 3}, {2})), IndexError);
  EXPECT_THROW(cross_entropy(logits, Tensor<CB, 1, Int>::zeros({3})), ShapeError);
  EXPECT_THROW(cross_entropy(logits, Tensor<CB, 1, Int>::zeros({2}), {1.5}), ArgumentError);
  EXPECT_THROW(mse_loss(logits, Tensor<CB, 2>::zeros({3, 2})), ShapeError);
  EXPECT_THROW(huber_loss(logits, logits, 0.0), ArgumentError);
  EXPECT_NEAR(cross_entropy(logits, Tensor<CB, 1, Int>::zeros({2})).item(), std::log(3.0), 1e-15);
}

}  // namespace
}  // namespace ember::test
