// The C ABI against the typed C++ engine: the same weights give the same forward values and gradients, and records
// move between a C Sequential and a typed nn::Sequential in both directions (same parameter paths).
#include <cmath>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"
#include "engine/nn/nn.hpp"
#include "records/module_record.hpp"
#include "records/recorder.hpp"
#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

using AB = Autodiff<Cpu<float>>;
using Inner = Cpu<float>;

std::vector<float> param(ember_module* m, size_t i) {
  ember_tensor* t = nullptr;
  EXPECT_EQ(ember_module_param_value(m, i, &t), EMBER_OK) << ember_last_error();
  return floats(Tensor(t).get());
}

template <std::size_t D>
Param<ember::Tensor<AB, D>> typed_param(const std::vector<float>& v, std::array<int64_t, D> shape) {
  return Param<ember::Tensor<AB, D>>::initialized(ParamId::next(), ember::Tensor<AB, D>::from_values(v, shape));
}

void expect_close(const std::vector<float>& a, const std::vector<float>& b, float tol = 1e-6f) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol * (1.0f + std::abs(b[i]))) << "element " << i;
}

// The C gradient of param i after a backward pass.
std::vector<float> c_grad(ember_module* m, ember_grads* g, size_t i) {
  ember_tensor *p = nullptr, *gp = nullptr;
  EXPECT_EQ(ember_module_param_value(m, i, &p), EMBER_OK);
  Tensor pt(p);
  EXPECT_EQ(ember_grads_get(g, p, &gp), EMBER_OK) << ember_last_error();
  EXPECT_NE(gp, nullptr);
  return gp ? floats(Tensor(gp).get()) : std::vector<float>{};
}

TEST(CApiTyped, MlpForwardAndGradients) {
  EMBER_ASSERT_OK(ember_seed(21));
  auto m = sequential({linear(5, 7), layer(EMBER_LAYER_GELU), linear(7, 3)});
  std::vector<float> xv(4 * 5);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.1f * static_cast<float>(i) - 0.8f;
  const std::vector<int64_t> labels = {0, 2, 1, 2};
  auto x = f32(xv, {4, 5});
  auto y = i64(labels, {4});

  nn::Linear<AB> fc1, fc2;
  fc1.weight = typed_param<2>(param(m.get(), 0), {5, 7});
  fc1.bias = typed_param<1>(param(m.get(), 1), {7});
  fc2.weight = typed_param<2>(param(m.get(), 2), {7, 3});
  fc2.bias = typed_param<1>(param(m.get(), 3), {3});
  const auto tx = ember::Tensor<AB, 2>::from_values(xv, {4, 5});
  const auto tlogits = fc2.forward(fc1.forward(tx).gelu());

  auto logits = forward(m.get(), x.get(), EMBER_MODE_TRAIN);
  expect_close(floats(logits.get()), tlogits.to_vec<float>());

  ember_tensor* l = nullptr;
  EMBER_ASSERT_OK(ember_loss_cross_entropy(logits.get(), y.get(), EMBER_REDUCTION_MEAN, &l));
  Tensor loss(l);
  const auto tloss = nn::cross_entropy(tlogits, ember::Tensor<AB, 1, Int>::from_values(labels, {4}));
  double cl = 0;
  EMBER_ASSERT_OK(ember_tensor_item(l, &cl));
  EXPECT_NEAR(cl, tloss.item(), 1e-6);

  ember_grads* g = nullptr;
  EMBER_ASSERT_OK(ember_tensor_backward(l, nullptr, &g));
  Grads grads(g);
  const auto tg = tloss.backward();
  expect_close(c_grad(m.get(), g, 0), fc1.weight.val().grad(tg)->to_vec<float>(), 1e-5f);
  expect_close(c_grad(m.get(), g, 1), fc1.bias->val().grad(tg)->to_vec<float>(), 1e-5f);
  expect_close(c_grad(m.get(), g, 2), fc2.weight.val().grad(tg)->to_vec<float>(), 1e-5f);
  expect_close(c_grad(m.get(), g, 3), fc2.bias->val().grad(tg)->to_vec<float>(), 1e-5f);
}

TEST(CApiTyped, ConvNetForwardAndGradients) {
  EMBER_ASSERT_OK(ember_seed(22));
  auto conv = layer(EMBER_LAYER_CONV2D);
  conv.in_features = 1;
  conv.out_features = 2;
  conv.kernel_size[0] = conv.kernel_size[1] = 3;
  conv.padding[0] = conv.padding[1] = 1;
  auto m = sequential({conv, layer(EMBER_LAYER_RELU), layer(EMBER_LAYER_MAX_POOL2D), layer(EMBER_LAYER_FLATTEN),
                       linear(2 * 2 * 2, 3)});
  std::vector<float> xv(2 * 16);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.7f * static_cast<float>(i));
  auto x = f32(xv, {2, 1, 4, 4});

  nn::Conv2d<AB> c;
  c.weight = typed_param<4>(param(m.get(), 0), {2, 1, 3, 3});
  c.bias = typed_param<1>(param(m.get(), 1), {2});
  c.options.padding = {1, 1};
  nn::Linear<AB> fc;
  fc.weight = typed_param<2>(param(m.get(), 2), {8, 3});
  fc.bias = typed_param<1>(param(m.get(), 3), {3});
  const auto tx = ember::Tensor<AB, 4>::from_values(xv, {2, 1, 4, 4});
  const auto h = max_pool2d<AB>(c.forward(tx).relu(), Pool2dOptions{});
  const auto ty = fc.forward(h.reshape(std::array<int64_t, 2>{2, 8}));

  auto out = forward(m.get(), x.get(), EMBER_MODE_TRAIN);
  expect_close(floats(out.get()), ty.to_vec<float>());

  // Gradients of sum(out * out).
  ember_tensor *sq = nullptr, *s = nullptr;
  EMBER_ASSERT_OK(ember_tensor_mul(out.get(), out.get(), &sq));
  Tensor sqt(sq);
  EMBER_ASSERT_OK(ember_tensor_reduce_all(sq, EMBER_REDUCE_SUM, &s));
  Tensor st(s);
  ember_grads* g = nullptr;
  EMBER_ASSERT_OK(ember_tensor_backward(s, nullptr, &g));
  Grads grads(g);
  const auto tg = ty.mul(ty).sum().backward();
  expect_close(c_grad(m.get(), g, 0), c.weight.val().grad(tg)->to_vec<float>(), 1e-5f);
  expect_close(c_grad(m.get(), g, 2), fc.weight.val().grad(tg)->to_vec<float>(), 1e-5f);
}

TEST(CApiTyped, OpsMatchTheTypedEngine) {
  const int64_t s[] = {3, 4, 5};
  ember_tensor* r = nullptr;
  EMBER_ASSERT_OK(ember_tensor_random(nullptr, EMBER_DIST_NORMAL, 0.0, 1.0, 99, s, 3, &r));
  Tensor a(r);
  const auto av = floats(r);
  const auto ta = ember::Tensor<Inner, 3>::from_values(av, {3, 4, 5});
  ember_tensor* t = nullptr;
  EMBER_ASSERT_OK(ember_tensor_log_softmax(r, 1, &t));
  expect_close(floats(Tensor(t).get()), ta.log_softmax(1).to_vec<float>());
  EMBER_ASSERT_OK(ember_tensor_reduce(r, EMBER_REDUCE_MEAN, -1, 1, &t));
  expect_close(floats(Tensor(t).get()), ta.mean_dim(-1).to_vec<float>());
  EMBER_ASSERT_OK(ember_tensor_transpose(r, 1, 2, &t));
  Tensor at(t);
  ember_tensor* mm = nullptr;
  EMBER_ASSERT_OK(ember_tensor_matmul(r, at.get(), &mm));
  expect_close(floats(Tensor(mm).get()), ta.matmul(ta.transpose()).to_vec<float>(), 1e-5f);
  EMBER_ASSERT_OK(ember_tensor_unary(r, EMBER_UNARY_GELU_TANH, &t));
  expect_close(floats(Tensor(t).get()), ta.gelu(true).to_vec<float>());
}

TEST(CApiTyped, RecordsMoveBetweenCAndTypedSequentials) {
  EMBER_ASSERT_OK(ember_seed(23));
  auto m = sequential({linear(4, 6), layer(EMBER_LAYER_GELU), linear(6, 2)});
  std::vector<float> xv = {0.5f, -1.0f, 2.0f, 0.25f};
  auto x = f32(xv, {1, 4});
  const auto cy = floats(forward(m.get(), x.get()).get());
  TempPath file("to_typed.emr");
  EMBER_ASSERT_OK(ember_module_save(m.get(), file.path.c_str(), nullptr));

  auto typed = nn::sequential<Inner>(nn::LinearConfig{4, 6}.init<Inner>(), nn::GELU{}, nn::LinearConfig{6, 2}.init<Inner>());
  typed = load_record(typed, load_record_file(file.path));  // strict: every path and shape must match
  expect_close(typed.forward(ember::Tensor<Inner, 2>::from_values(xv, {1, 4})).to_vec<float>(), cy);

  // And back: a typed module's record loads strictly into a C Sequential of the same layers.
  seed(7);
  auto other = nn::sequential<Inner>(nn::LinearConfig{4, 6}.init<Inner>(), nn::GELU{}, nn::LinearConfig{6, 2}.init<Inner>());
  TempPath back("from_typed.emr");
  DefaultFileRecorder{}.save(into_record(other), back.path);
  EMBER_ASSERT_OK(ember_module_load(m.get(), back.path.c_str(), EMBER_LOAD_STRICT, nullptr));
  expect_close(floats(forward(m.get(), x.get()).get()),
               other.forward(ember::Tensor<Inner, 2>::from_values(xv, {1, 4})).to_vec<float>());
}

}  // namespace
}  // namespace ember::capi_test
