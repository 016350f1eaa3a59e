// Tensor semantics through the C ABI: creation, host copies, ops with runtime rank, autodiff, devices.
#include <cmath>
#include <cstring>

#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

Tensor op2(ember_status (*f)(const ember_tensor*, const ember_tensor*, ember_tensor**), const Tensor& a,
           const Tensor& b) {
  ember_tensor* out = nullptr;
  EXPECT_EQ(f(a.get(), b.get(), &out), EMBER_OK) << ember_last_error();
  return Tensor(out);
}

TEST(CApiOps, VersionAndBackends) {
  EXPECT_STREQ(ember_version(), "0.1.0");
  EXPECT_EQ(ember_abi_version(), EMBER_ABI_VERSION);
  EXPECT_STREQ(ember_status_name(EMBER_ERR_SHAPE), "EMBER_ERR_SHAPE");
  ember_backend_info info;
  info.struct_size = sizeof info;
  EMBER_ASSERT_OK(ember_backend_query(EMBER_BACKEND_CPU, &info));
  EXPECT_EQ(info.compiled, 1);
  EXPECT_EQ(info.usable, 1);
  EXPECT_EQ(info.device_count, 1);
  EXPECT_EQ(info.float_dtype, EMBER_DTYPE_F32);
  EXPECT_STREQ(info.name, "cpu");
  int32_t list[4];
  size_t n = 0;
  EMBER_ASSERT_OK(ember_backend_list(list, 4, &n));
  // The compiled backends in list order: the CPU first, then each GPU backend built (as a plugin).
  std::vector<int32_t> compiled;
  for (int32_t b : {EMBER_BACKEND_CPU, EMBER_BACKEND_VULKAN, EMBER_BACKEND_CUDA}) {
    ember_backend_info bi{};
    bi.struct_size = sizeof bi;
    EMBER_ASSERT_OK(ember_backend_query(b, &bi));
    EXPECT_EQ(bi.backend, b);
    if (bi.compiled) compiled.push_back(b);
  }
  ASSERT_EQ(n, compiled.size());
  EXPECT_EQ(std::vector<int32_t>(list, list + n), compiled);
  EXPECT_EQ(list[0], EMBER_BACKEND_CPU);
  ember_device* dev = nullptr;
  EMBER_ASSERT_OK(ember_device_create(EMBER_BACKEND_CPU, 0, &dev));
  const int64_t s[] = {2};
  ember_tensor* t = nullptr;
  EMBER_ASSERT_OK(ember_tensor_ones(dev, EMBER_DTYPE_F32, s, 1, &t));
  Tensor tt(t);
  ember_device* d2 = nullptr;
  EMBER_ASSERT_OK(ember_tensor_device(t, &d2));
  int32_t backend = -1, index = -1;
  EMBER_ASSERT_OK(ember_device_info(d2, &backend, &index));
  EXPECT_EQ(backend, EMBER_BACKEND_CPU);
  EXPECT_EQ(index, 0);
  EMBER_EXPECT_OK(ember_device_free(d2));
  EMBER_EXPECT_OK(ember_device_free(dev));
}

TEST(CApiOps, HostRoundTripsAndDtypes) {
  const double d[] = {1.5, -2.25, 3.0, 4.75};
  const int64_t s[] = {2, 2};
  ember_tensor* t = nullptr;
  EMBER_ASSERT_OK(ember_tensor_from_data(nullptr, EMBER_DTYPE_F64, d, sizeof d, s, 2, &t));
  Tensor a(t);
  int32_t dt = -1;
  EMBER_ASSERT_OK(ember_tensor_dtype(t, &dt));
  EXPECT_EQ(dt, EMBER_DTYPE_F64);  // float64 end to end on the CPU (issue 11; it was stored as F32 before)
  EXPECT_EQ(floats(t), (std::vector<float>{1.5f, -2.25f, 3.0f, 4.75f}));
  int32_t ints32[4];
  EMBER_ASSERT_OK(ember_tensor_copy_to(t, EMBER_DTYPE_I32, ints32, sizeof ints32, nullptr));
  EXPECT_EQ(ints32[1], -2);  // truncation toward zero
  uint16_t halves[4];
  EMBER_ASSERT_OK(ember_tensor_copy_to(t, EMBER_DTYPE_F16, halves, sizeof halves, nullptr));
  EXPECT_EQ(halves[0], 0x3e00);  // 1.5 in IEEE half
  const uint8_t flags[] = {0, 7, 1, 0};
  EMBER_ASSERT_OK(ember_tensor_from_data(nullptr, EMBER_DTYPE_BOOL, flags, sizeof flags, s, 2, &t));
  Tensor b(t);
  EMBER_ASSERT_OK(ember_tensor_dtype(t, &dt));
  EXPECT_EQ(dt, EMBER_DTYPE_BOOL);
  EXPECT_EQ(ints(t), (std::vector<int64_t>{0, 1, 1, 0}));
  const int32_t i32[] = {3, -4};
  const int64_t s1[] = {2};
  EMBER_ASSERT_OK(ember_tensor_from_data(nullptr, EMBER_DTYPE_I32, i32, sizeof i32, s1, 1, &t));
  Tensor c(t);
  EMBER_ASSERT_OK(ember_tensor_dtype(t, &dt));
  EXPECT_EQ(dt, EMBER_DTYPE_I64);
  double item = 0;
  EMBER_EXPECT_ERR(ember_tensor_item(t, &item), EMBER_ERR_SHAPE, "not one element");
  // Zero-element tensors are fine.
  const int64_t empty[] = {0, 3};
  EMBER_ASSERT_OK(ember_tensor_from_data(nullptr, EMBER_DTYPE_F32, nullptr, 0, empty, 2, &t));
  Tensor e(t);
  EXPECT_EQ(shape_of(t), (std::vector<int64_t>{0, 3}));
}

TEST(CApiOps, Creation) {
  ember_tensor* t = nullptr;
  const int64_t s[] = {2, 3};
  EMBER_ASSERT_OK(ember_tensor_full(nullptr, EMBER_DTYPE_F32, s, 2, 2.5, &t));
  EXPECT_EQ(floats(Tensor(t).get()), std::vector<float>(6, 2.5f));
  EMBER_ASSERT_OK(ember_tensor_arange(nullptr, EMBER_DTYPE_I64, 10, 0, -3, &t));
  EXPECT_EQ(ints(Tensor(t).get()), (std::vector<int64_t>{10, 7, 4, 1}));
  EMBER_ASSERT_OK(ember_tensor_arange(nullptr, EMBER_DTYPE_F32, 0, 5, 2, &t));
  EXPECT_EQ(floats(Tensor(t).get()), (std::vector<float>{0, 2, 4}));
  auto random = [&](uint64_t seed) {
    ember_tensor* r = nullptr;
    EXPECT_EQ(ember_tensor_random(nullptr, EMBER_DIST_NORMAL, 0.0, 1.0, seed, s, 2, &r), EMBER_OK);
    return floats(Tensor(r).get());
  };
  EXPECT_EQ(random(7), random(7));
  EXPECT_NE(random(7), random(8));
  EMBER_ASSERT_OK(ember_tensor_random(nullptr, EMBER_DIST_UNIFORM, 2.0, 3.0, 1, s, 2, &t));
  for (float v : floats(Tensor(t).get())) EXPECT_TRUE(v >= 2.0f && v < 3.0f);
}

TEST(CApiOps, ElementwiseBroadcastAcrossRanks) {
  auto a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  auto b = f32({10, 20, 30}, {3});
  auto c = op2(ember_tensor_add, a, b);
  EXPECT_EQ(shape_of(c.get()), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(floats(c.get()), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(floats(op2(ember_tensor_sub, b, a).get()), (std::vector<float>{9, 18, 27, 6, 15, 24}));
  ember_tensor* t = nullptr;
  EMBER_ASSERT_OK(ember_tensor_scalar(a.get(), EMBER_SCALAR_RSUB, 1.0, &t));
  EXPECT_EQ(floats(Tensor(t).get()), (std::vector<float>{0, -1, -2, -3, -4, -5}));
  EMBER_ASSERT_OK(ember_tensor_unary(a.get(), EMBER_UNARY_NEG, &t));
  EXPECT_EQ(floats(Tensor(t).get())[5], -6.0f);
  EMBER_ASSERT_OK(ember_tensor_compare_scalar(a.get(), EMBER_CMP_GT, 3.5, &t));
  Tensor mask(t);
  EXPECT_EQ(ints(mask.get()), (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EMBER_ASSERT_OK(ember_tensor_where(mask.get(), a.get(), b.get(), &t));
  EXPECT_EQ(floats(Tensor(t).get()), (std::vector<float>{10, 20, 30, 4, 5, 6}));
  auto ia = i64({7, -7}, {2});
  auto ib = i64({2}, {1});
  EXPECT_EQ(ints(op2(ember_tensor_div, ia, ib).get()), (std::vector<int64_t>{3, -3}));
  EMBER_ASSERT_OK(ember_tensor_compare(ia.get(), ib.get(), EMBER_CMP_LT, &t));
  EXPECT_EQ(ints(Tensor(t).get()), (std::vector<int64_t>{0, 1}));
}

TEST(CApiOps, Reductions) {
  auto a = f32({1, 5, 3, 4, 2, 6}, {2, 3});
  ember_tensor* t = nullptr;
  EMBER_ASSERT_OK(ember_tensor_reduce(a.get(), EMBER_REDUCE_SUM, 1, 1, &t));
  Tensor keep(t);
  EXPECT_EQ(shape_of(t), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(floats(t), (std::vector<float>{9, 12}));
  EMBER_ASSERT_OK(ember_tensor_reduce(a.get(), EMBER_REDUCE_MAX, -2, 0, &t));
  Tensor drop(t);
  EXPECT_EQ(shape_of(t), (std::vector<int64_t>{3}));
  EXPECT_EQ(floats(t), (std::vector<float>{4, 5, 6}));
  EMBER_ASSERT_OK(ember_tensor_reduce_all(a.get(), EMBER_REDUCE_MEAN, &t));
  double mean = 0;
  EMBER_ASSERT_OK(ember_tensor_item(Tensor(t).get(), &mean));
  EXPECT_DOUBLE_EQ(mean, 3.5);
  EMBER_ASSERT_OK(ember_tensor_argmax(a.get(), 1, 0, &t));
  Tensor am(t);
  EXPECT_EQ(shape_of(t), (std::vector<int64_t>{2}));
  EXPECT_EQ(ints(t), (std::vector<int64_t>{1, 2}));
  auto v = f32({4}, {1});
  EMBER_ASSERT_OK(ember_tensor_reduce(v.get(), EMBER_REDUCE_SUM, 0, 0, &t));
  EXPECT_EQ(shape_of(Tensor(t).get()), (std::vector<int64_t>{}));  // dropping the only dim gives a scalar
}

// ember_tensor_linear: act(x @ op(w) + bias) with PyTorch's [N, K] weight (trans_w) or a [K, N] one, bias NULL or
// [N], ReLU or not, and its one recorded op's gradients (worked out by hand), then its errors.
TEST(CApiOps, LinearForwardGradientsAndErrors) {
  const auto x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const auto w_nk = f32({1, 0, -1, 0, 1, 1}, {2, 3});   // [N = 2, K = 3]
  const auto w_kn = f32({1, 0, 0, 1, -1, 1}, {3, 2});   // its transpose
  const auto bias = f32({0.5f, -10.0f}, {2});
  const auto run = [&](const ember_tensor* xs, const ember_tensor* w, const ember_tensor* b, int32_t trans_w,
                       int32_t relu) {
    ember_tensor* out = nullptr;
    EXPECT_EQ(ember_tensor_linear(xs, w, b, trans_w, relu, &out), EMBER_OK) << ember_last_error();
    return Tensor(out);
  };
  // x @ w^T = [[-2, 5], [-2, 11]]; + bias = [[-1.5, -5], [-1.5, 1]]; ReLU = [[0, 0], [0, 1]].
  EXPECT_EQ(floats(run(x.get(), w_nk.get(), nullptr, 1, 0).get()), (std::vector<float>{-2, 5, -2, 11}));
  EXPECT_EQ(floats(run(x.get(), w_kn.get(), bias.get(), 0, 0).get()), (std::vector<float>{-1.5f, -5, -1.5f, 1}));
  EXPECT_EQ(floats(run(x.get(), w_nk.get(), bias.get(), 1, 1).get()), (std::vector<float>{0, 0, 0, 1}));

  // sum(relu(x @ w^T + bias)): the upstream gradient is the ReLU's mask [[0, 0], [0, 1]], so dx = mask @ w = row 1
  // [0, 1, 1], dw = mask^T @ x = row 1 [4, 5, 6], dbias = [0, 1]. Without ReLU (ones): dx rows [1, 1, 0], dw rows
  // [5, 7, 9], dbias [2, 2].
  for (const int32_t relu : {1, 0}) {
    const auto xs = f32({1, 2, 3, 4, 5, 6}, {2, 3});
    const auto w = f32({1, 0, -1, 0, 1, 1}, {2, 3});
    const auto b = f32({0.5f, -10.0f}, {2});
    for (ember_tensor* t : {xs.get(), w.get(), b.get()}) EMBER_ASSERT_OK(ember_tensor_set_requires_grad(t, 1));
    const auto y = run(xs.get(), w.get(), b.get(), 1, relu);
    ember_tensor* s = nullptr;
    EMBER_ASSERT_OK(ember_tensor_reduce_all(y.get(), EMBER_REDUCE_SUM, &s));
    const Tensor loss(s);
    EMBER_ASSERT_OK(ember_tensor_backward_ex(loss.get(), nullptr, nullptr, nullptr));
    const auto grad = [](const ember_tensor* t) {
      ember_tensor* g = nullptr;
      EXPECT_EQ(ember_tensor_grad(t, &g), EMBER_OK) << ember_last_error();
      const Tensor owned(g);
      return g ? floats(g) : std::vector<float>{};
    };
    if (relu) {
      EXPECT_EQ(grad(xs.get()), (std::vector<float>{0, 0, 0, 0, 1, 1}));
      EXPECT_EQ(grad(w.get()), (std::vector<float>{0, 0, 0, 4, 5, 6}));
      EXPECT_EQ(grad(b.get()), (std::vector<float>{0, 1}));
    } else {
      EXPECT_EQ(grad(xs.get()), (std::vector<float>{1, 1, 0, 1, 1, 0}));
      EXPECT_EQ(grad(w.get()), (std::vector<float>{5, 7, 9, 5, 7, 9}));
      EXPECT_EQ(grad(b.get()), (std::vector<float>{2, 2}));
    }
  }

  ember_tensor* out = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_linear(x.get(), w_kn.get(), nullptr, 1, 0, &out), EMBER_ERR_SHAPE, "do not multiply");
  EMBER_EXPECT_ERR(ember_tensor_linear(x.get(), w_nk.get(), x.get(), 1, 0, &out), EMBER_ERR_SHAPE, "bias must be");
  const auto rank3 = f32(std::vector<float>(6, 1.0f), {1, 2, 3});
  EMBER_EXPECT_ERR(ember_tensor_linear(rank3.get(), w_nk.get(), nullptr, 1, 0, &out), EMBER_ERR_SHAPE, "rank 2");
  const auto ints = i64({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_NE(ember_tensor_linear(ints.get(), w_nk.get(), nullptr, 1, 0, &out), EMBER_OK);
  EXPECT_EQ(out, nullptr);
}

// ember_tensor_adam_step: two updates (Adam, then AdamW with decay) against the formulas worked out in double; the
// three handles keep their identity (a leaf param keeps requires_grad and its .grad), each version counts the update;
// then the argument errors.
TEST(CApiOps, AdamStepUpdatesInPlace) {
  const std::vector<double> g0{0.1, -0.3, 0.0, 2.0};
  std::vector<double> p{1.0, -2.0, 0.5, 0.25}, m(4, 0.0), v(4, 0.0);
  const auto param = f32({1.0f, -2.0f, 0.5f, 0.25f}, {4});
  const auto grad = f32({0.1f, -0.3f, 0.0f, 2.0f}, {4});
  const auto exp_avg = f32({0, 0, 0, 0}, {4});
  const auto exp_avg_sq = f32({0, 0, 0, 0}, {4});
  EMBER_ASSERT_OK(ember_tensor_set_requires_grad(param.get(), 1));
  EMBER_ASSERT_OK(ember_tensor_set_grad(param.get(), grad.get()));
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  struct Update {
    double weight_decay;
    int32_t decoupled;
  };
  int64_t step = 0;
  for (const Update u : {Update{0.0, 0}, Update{0.1, 1}}) {
    ++step;
    EMBER_ASSERT_OK(ember_tensor_adam_step(param.get(), grad.get(), exp_avg.get(), exp_avg_sq.get(), lr, b1, b2, eps,
                                           u.weight_decay, u.decoupled, step));
    const double t = static_cast<double>(step);
    for (std::size_t i = 0; i < 4; ++i) {
      if (u.decoupled) p[i] *= 1 - lr * u.weight_decay;
      m[i] += (1 - b1) * (g0[i] - m[i]);
      v[i] = b2 * v[i] + (1 - b2) * g0[i] * g0[i];
      p[i] -= lr / (1 - std::pow(b1, t)) * m[i] / (std::sqrt(v[i]) / std::sqrt(1 - std::pow(b2, t)) + eps);
    }
    const auto near = [](const std::vector<float>& got, const std::vector<double>& want) {
      bool ok = got.size() == want.size();
      for (std::size_t i = 0; ok && i < got.size(); ++i) ok = std::abs(got[i] - want[i]) <= 1e-6 * (1 + std::abs(want[i]));
      return ok;
    };
    EXPECT_TRUE(near(floats(param.get()), p)) << "param after step " << step;
    EXPECT_TRUE(near(floats(exp_avg.get()), m)) << "exp_avg after step " << step;
    EXPECT_TRUE(near(floats(exp_avg_sq.get()), v)) << "exp_avg_sq after step " << step;
  }
  // While g keeps its value every update moves by lr: 1 - lr, then decayed by 1 - lr * wd and moved again.
  EXPECT_NEAR(floats(param.get())[0], (1.0 - lr) * (1 - lr * 0.1) - lr, 1e-5);
  int32_t on = 0;
  EMBER_ASSERT_OK(ember_tensor_requires_grad(param.get(), &on));
  EXPECT_EQ(on, 1);
  ember_tensor* kept = nullptr;
  EMBER_ASSERT_OK(ember_tensor_grad(param.get(), &kept));
  const Tensor kept_owned(kept);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(floats(kept), (std::vector<float>{0.1f, -0.3f, 0.0f, 2.0f}));
  for (const ember_tensor* t : {param.get(), exp_avg.get(), exp_avg_sq.get()}) {
    int64_t version = -1;
    EMBER_ASSERT_OK(ember_tensor_version(t, &version));
    EXPECT_EQ(version, 2);
  }

  const auto short_m = f32({0, 0}, {2});
  EMBER_EXPECT_ERR(ember_tensor_adam_step(param.get(), grad.get(), short_m.get(), exp_avg_sq.get(), lr, b1, b2, eps,
                                          0, 0, 3),
                   EMBER_ERR_SHAPE, "exp_avg has shape");
  const auto ints = i64({1, 2, 3, 4}, {4});
  EMBER_EXPECT_ERR(ember_tensor_adam_step(param.get(), ints.get(), exp_avg.get(), exp_avg_sq.get(), lr, b1, b2, eps,
                                          0, 0, 3),
                   EMBER_ERR_DTYPE, "grad must be a float tensor");
  EMBER_EXPECT_ERR(ember_tensor_adam_step(param.get(), grad.get(), exp_avg.get(), exp_avg_sq.get(), lr, b1, 1.0, eps,
                                          0, 0, 3),
                   EMBER_ERR_INVALID_ARGUMENT, "betas");
  EMBER_EXPECT_ERR(ember_tensor_adam_step(param.get(), grad.get(), exp_avg.get(), exp_avg_sq.get(), -1.0, b1, b2,
                                          eps, 0, 0, 3),
                   EMBER_ERR_INVALID_ARGUMENT, "lr, eps and weight_decay");
  EMBER_EXPECT_ERR(ember_tensor_adam_step(param.get(), grad.get(), exp_avg.get(), exp_avg_sq.get(), lr, b1, b2, eps,
                                          0, 0, 0),
                   EMBER_ERR_INVALID_ARGUMENT, "step must be >= 1");
  EMBER_EXPECT_ERR(ember_tensor_adam_step(param.get(), grad.get(), param.get(), exp_avg_sq.get(), lr, b1, b2, eps, 0,
                                          0, 3),
                   EMBER_ERR_INVALID_ARGUMENT, "three tensors");
  EMBER_EXPECT_ERR(ember_tensor_adam_step(nullptr, grad.get(), exp_avg.get(), exp_avg_sq.get(), lr, b1, b2, eps, 0,
                                          0, 3),
                   EMBER_ERR_NULL_HANDLE, "param");
  EXPECT_EQ(floats(exp_avg.get()).size(), 4u);  // untouched by the failed calls
  int64_t version = -1;
  EMBER_ASSERT_OK(ember_tensor_version(param.get(), &version));
  EXPECT_EQ(version, 2);
}

TEST(CApiOps, MatmulLayoutAndIndexing) {
  auto a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  auto b = f32({1, 0, 0, 1, 1, 1}, {3, 2});
  auto c = op2(ember_tensor_matmul, a, b);
  EXPECT_EQ(floats(c.get()), (std::vector<float>{4, 5, 10, 11}));
  auto batch = f32(std::vector<float>(12, 1.0f), {2, 2, 3});  // [2, 2, 3] @ [3, 2]: b lifted to [1, 3, 2]
  EXPECT_EQ(shape_of(op2(ember_tensor_matmul, batch, b).get()), (std::vector<int64_t>{2, 2, 2}));
  ember_tensor* t = nullptr;
  const int64_t r[] = {3, -1};
  EMBER_ASSERT_OK(ember_tensor_reshape(a.get(), r, 2, &t));
  EXPECT_EQ(shape_of(Tensor(t).get()), (std::vector<int64_t>{3, 2}));
  EMBER_ASSERT_OK(ember_tensor_transpose(a.get(), 0, 1, &t));
  EXPECT_EQ(floats(Tensor(t).get()), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  const int64_t axes[] = {1, 0};
  EMBER_ASSERT_OK(ember_tensor_permute(a.get(), axes, 2, &t));
  EXPECT_EQ(shape_of(Tensor(t).get()), (std::vector<int64_t>{3, 2}));
  const int64_t starts[] = {-1, 1}, ends[] = {EMBER_SLICE_END, EMBER_SLICE_END};
  EMBER_ASSERT_OK(ember_tensor_slice(a.get(), starts, ends, 2, &t));
  EXPECT_EQ(floats(Tensor(t).get()), (std::vector<float>{5, 6}));
  const ember_tensor* parts[] = {a.get(), a.get()};
  EMBER_ASSERT_OK(ember_tensor_cat(parts, 2, 1, &t));
  EXPECT_EQ(shape_of(Tensor(t).get()), (std::vector<int64_t>{2, 6}));
  auto idx = i64({2, 0}, {2});
  EMBER_ASSERT_OK(ember_tensor_index_select(a.get(), 1, idx.get(), &t));
  EXPECT_EQ(floats(Tensor(t).get()), (std::vector<float>{3, 1, 6, 4}));
  auto gi = i64({1, 0}, {2, 1});
  EMBER_ASSERT_OK(ember_tensor_gather(a.get(), 1, gi.get(), &t));
  EXPECT_EQ(floats(Tensor(t).get()), (std::vector<float>{2, 4}));
  EMBER_ASSERT_OK(ember_tensor_cast(a.get(), EMBER_DTYPE_BOOL, &t));
  Tensor bools(t);
  int32_t dt = -1;
  EMBER_ASSERT_OK(ember_tensor_dtype(t, &dt));
  EXPECT_EQ(dt, EMBER_DTYPE_BOOL);
  EMBER_ASSERT_OK(ember_tensor_logical(bools.get(), bools.get(), EMBER_LOGIC_XOR, &t));
  EXPECT_EQ(ints(Tensor(t).get()), std::vector<int64_t>(6, 0));
}

TEST(CApiOps, SoftmaxConvPoolAndLosses) {
  auto a = f32({1, 2, 3, 1, 1, 1}, {2, 3});
  ember_tensor* t = nullptr;
  EMBER_ASSERT_OK(ember_tensor_softmax(a.get(), -1, &t));
  const auto sm = floats(Tensor(t).get());
  EXPECT_NEAR(sm[0] + sm[1] + sm[2], 1.0f, 1e-6f);
  EXPECT_NEAR(sm[3], 1.0f / 3.0f, 1e-6f);
  EMBER_ASSERT_OK(ember_tensor_log_softmax(a.get(), 1, &t));
  EXPECT_NEAR(floats(Tensor(t).get())[3], -std::log(3.0f), 1e-6f);
  auto x = f32(std::vector<float>(2 * 1 * 4 * 4, 1.0f), {2, 1, 4, 4});
  auto w = f32(std::vector<float>(3 * 1 * 3 * 3, 1.0f), {3, 1, 3, 3});
  auto bias = f32({0, 1, 2}, {3});
  ember_conv2d_options co;
  EMBER_ASSERT_OK(ember_conv2d_options_init(&co));
  co.padding[0] = co.padding[1] = 1;
  EMBER_ASSERT_OK(ember_tensor_conv2d(x.get(), w.get(), bias.get(), &co, &t));
  Tensor y(t);
  EXPECT_EQ(shape_of(t), (std::vector<int64_t>{2, 3, 4, 4}));
  EXPECT_EQ(floats(t)[5], 9.0f);  // interior pixel of channel 0: a full 3x3 window of ones
  EMBER_ASSERT_OK(ember_tensor_max_pool2d(y.get(), nullptr, &t));
  EXPECT_EQ(shape_of(Tensor(t).get()), (std::vector<int64_t>{2, 3, 2, 2}));
  ember_pool2d_options po;
  EMBER_ASSERT_OK(ember_pool2d_options_init(&po));
  po.kernel_size[0] = po.kernel_size[1] = 4;
  po.stride[0] = po.stride[1] = 4;
  EMBER_ASSERT_OK(ember_tensor_avg_pool2d(x.get(), &po, &t));
  EXPECT_EQ(floats(Tensor(t).get()), (std::vector<float>{1, 1}));
  auto logits = f32({0, 0, 0, 0}, {2, 2});
  auto labels = i64({0, 1}, {2});
  EMBER_ASSERT_OK(ember_loss_cross_entropy(logits.get(), labels.get(), EMBER_REDUCTION_SUM, &t));
  double v = 0;
  EMBER_ASSERT_OK(ember_tensor_item(Tensor(t).get(), &v));
  EXPECT_NEAR(v, 2 * std::log(2.0), 1e-6);
  auto p = f32({1, 2}, {2});
  auto q = f32({0, 0}, {2});
  EMBER_ASSERT_OK(ember_loss_mse(p.get(), q.get(), EMBER_REDUCTION_MEAN, &t));
  EMBER_ASSERT_OK(ember_tensor_item(Tensor(t).get(), &v));
  EXPECT_DOUBLE_EQ(v, 2.5);
}

TEST(CApiOps, Autodiff) {
  auto x = f32({1, 2, 3}, {3});
  int32_t on = -1;
  EMBER_ASSERT_OK(ember_tensor_requires_grad(x.get(), &on));
  EXPECT_EQ(on, 0);
  EMBER_ASSERT_OK(ember_tensor_set_requires_grad(x.get(), 1));
  EMBER_ASSERT_OK(ember_tensor_requires_grad(x.get(), &on));
  EXPECT_EQ(on, 1);
  auto sq = op2(ember_tensor_mul, x, x);
  ember_tensor* s = nullptr;
  EMBER_ASSERT_OK(ember_tensor_reduce_all(sq.get(), EMBER_REDUCE_SUM, &s));
  Tensor loss(s);
  ember_grads* g = nullptr;
  EMBER_ASSERT_OK(ember_tensor_backward(s, nullptr, &g));
  Grads grads(g);
  ember_tensor* gx = nullptr;
  EMBER_ASSERT_OK(ember_grads_get(g, x.get(), &gx));
  ASSERT_NE(gx, nullptr);
  Tensor gxx(gx);
  EXPECT_EQ(floats(gx), (std::vector<float>{2, 4, 6}));
  EMBER_ASSERT_OK(ember_tensor_requires_grad(gx, &on));
  EXPECT_EQ(on, 0);
  ember_tensor* none = reinterpret_cast<ember_tensor*>(0x1);
  EMBER_ASSERT_OK(ember_grads_get(g, sq.get(), &none));  // not a leaf: no gradient kept
  EXPECT_EQ(none, nullptr);
  // A seeded backward: d/dx (x * x) weighted by [1, 0, -1].
  auto sq2 = op2(ember_tensor_mul, x, x);
  auto up = f32({1, 0, -1}, {3});
  EMBER_ASSERT_OK(ember_tensor_backward(sq2.get(), up.get(), &g));
  Grads seeded(g);
  EMBER_ASSERT_OK(ember_grads_get(g, x.get(), &gx));
  EXPECT_EQ(floats(Tensor(gx).get()), (std::vector<float>{2, 0, -6}));
  // Inside a no-grad scope nothing is recorded, and scopes nest.
  int32_t enabled = -1;
  EMBER_ASSERT_OK(ember_no_grad_enter());
  EMBER_ASSERT_OK(ember_no_grad_enter());
  EMBER_ASSERT_OK(ember_no_grad_exit());
  EMBER_ASSERT_OK(ember_is_grad_enabled(&enabled));
  EXPECT_EQ(enabled, 0);
  auto untracked = op2(ember_tensor_mul, x, x);
  EMBER_ASSERT_OK(ember_tensor_requires_grad(untracked.get(), &on));
  EXPECT_EQ(on, 0);
  EMBER_ASSERT_OK(ember_no_grad_exit());
  EMBER_ASSERT_OK(ember_is_grad_enabled(&enabled));
  EXPECT_EQ(enabled, 1);
  ember_tensor* d = nullptr;
  EMBER_ASSERT_OK(ember_tensor_detach(x.get(), &d));
  EMBER_ASSERT_OK(ember_tensor_requires_grad(Tensor(d).get(), &on));
  EXPECT_EQ(on, 0);
}

// The ops added through the op table (engine/backend/ops.def): their ember.h values reach the engine, and the
// kind rules of the table hold at the boundary (float-only ops refuse int tensors with EMBER_ERR_DTYPE).
TEST(CApiOps, TrigRemainderAndPredicates) {
  auto x = f32({-2.0f, 0.5f, 1.0f}, {3});
  ember_tensor* out = nullptr;
  EMBER_ASSERT_OK(ember_tensor_unary(x.get(), EMBER_UNARY_ASIN, &out));
  const auto asin = floats(Tensor(out).get());
  EXPECT_TRUE(std::isnan(asin[0]));
  EXPECT_FLOAT_EQ(asin[1], std::asin(0.5f));
  EMBER_ASSERT_OK(ember_tensor_unary(x.get(), EMBER_UNARY_ATANH, &out));
  EXPECT_EQ(floats(Tensor(out).get())[2], INFINITY);
  auto y = f32({1.0f, -1.0f, 0.0f}, {3});
  EMBER_ASSERT_OK(ember_tensor_binary(y.get(), x.get(), EMBER_BINARY_ATAN2, &out));
  EXPECT_FLOAT_EQ(floats(Tensor(out).get())[0], std::atan2(1.0f, -2.0f));
  EMBER_ASSERT_OK(ember_tensor_scalar(x.get(), EMBER_SCALAR_REMAINDER, -0.75, &out));
  EXPECT_EQ(floats(Tensor(out).get()), (std::vector<float>{-0.5f, -0.25f, -0.5f}));
  auto a = i64({7, -7, 5}, {3});
  auto b = i64({-3, 3, 0}, {3});
  EMBER_EXPECT_ERR(ember_tensor_binary(a.get(), b.get(), EMBER_BINARY_REMAINDER, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "remainder: integer division by zero");
  EMBER_ASSERT_OK(ember_tensor_scalar(a.get(), EMBER_SCALAR_REMAINDER, 4.0, &out));
  EXPECT_EQ(ints(Tensor(out).get()), (std::vector<int64_t>{3, 1, 1}));
  EMBER_EXPECT_ERR(ember_tensor_binary(a.get(), a.get(), EMBER_BINARY_ATAN2, &out), EMBER_ERR_DTYPE,
                   "atan2: not defined for int tensors");
  EMBER_EXPECT_ERR(ember_tensor_unary(a.get(), EMBER_UNARY_SINH, &out), EMBER_ERR_DTYPE,
                   "sinh: not defined for i64 tensors");
  auto q = f32({NAN, INFINITY, -INFINITY, 1.0f}, {4});
  EMBER_ASSERT_OK(ember_tensor_predicate(q.get(), EMBER_PREDICATE_ISNAN, &out));
  Tensor nan_mask(out);
  int32_t dt = -1;
  EMBER_ASSERT_OK(ember_tensor_dtype(nan_mask.get(), &dt));
  EXPECT_EQ(dt, EMBER_DTYPE_BOOL);
  uint8_t flags[4] = {};
  EMBER_ASSERT_OK(ember_tensor_copy_to(nan_mask.get(), EMBER_DTYPE_BOOL, flags, sizeof flags, nullptr));
  EXPECT_EQ(std::vector<int>(flags, flags + 4), (std::vector<int>{1, 0, 0, 0}));
  EMBER_ASSERT_OK(ember_tensor_predicate(q.get(), EMBER_PREDICATE_ISINF, &out));
  EMBER_ASSERT_OK(ember_tensor_copy_to(Tensor(out).get(), EMBER_DTYPE_BOOL, flags, sizeof flags, nullptr));
  EXPECT_EQ(std::vector<int>(flags, flags + 4), (std::vector<int>{0, 1, 1, 0}));
  EMBER_EXPECT_ERR(ember_tensor_predicate(a.get(), EMBER_PREDICATE_ISNAN, &out), EMBER_ERR_DTYPE,
                   "isnan: not defined for i64 tensors");
}

// ember_tensor_dropout: a pre-scaled mask from Ember's global generator (a seed reproduces it), its gradient, the
// edge probabilities, rank 0, and its errors.
TEST(CApiOps, DropoutDrawsASeededScaledMask) {
  std::vector<float> ones(4000, 1.0f);
  const Tensor x = f32(ones, {40, 100});
  EMBER_ASSERT_OK(ember_tensor_set_requires_grad(x.get(), 1));
  auto drop = [&](double p, uint64_t seed) {
    EXPECT_EQ(ember_seed(seed), EMBER_OK);
    ember_tensor* out = nullptr;
    EXPECT_EQ(ember_tensor_dropout(x.get(), p, &out), EMBER_OK) << ember_last_error();
    return Tensor(out);
  };
  const Tensor a = drop(0.25, 7), b = drop(0.25, 7), c = drop(0.25, 8);
  const auto va = floats(a.get());
  EXPECT_EQ(va, floats(b.get())) << "the same seed draws the same mask";
  EXPECT_NE(va, floats(c.get()));
  std::size_t zeros = 0;
  for (float v : va) {
    if (v == 0.0f) ++zeros;
    else EXPECT_EQ(v, static_cast<float>(1.0 / 0.75));
  }
  EXPECT_NEAR(static_cast<double>(zeros) / 4000.0, 0.25, 0.03);
  EXPECT_EQ(shape_of(a.get()), (std::vector<int64_t>{40, 100}));

  // d sum(dropout(x)) / dx is the mask itself.
  ember_tensor* total = nullptr;
  EMBER_ASSERT_OK(ember_tensor_reduce_all(a.get(), EMBER_REDUCE_SUM, &total));
  const Tensor total_owned(total);
  ember_backward_options o;
  EMBER_ASSERT_OK(ember_backward_options_init(&o));
  EMBER_ASSERT_OK(ember_tensor_backward_ex(total, nullptr, &o, nullptr));
  ember_tensor* g = nullptr;
  EMBER_ASSERT_OK(ember_tensor_grad(x.get(), &g));
  const Tensor g_owned(g);
  EXPECT_EQ(floats(g), va);

  EXPECT_EQ(floats(drop(0.0, 1).get()), ones);
  EXPECT_EQ(floats(drop(1.0, 1).get()), std::vector<float>(4000, 0.0f));
  const Tensor scalar = f32({3.0f}, {});
  ember_tensor* s0 = nullptr;
  EMBER_ASSERT_OK(ember_tensor_dropout(scalar.get(), 0.5, &s0));
  const Tensor s0_owned(s0);
  EXPECT_EQ(shape_of(s0), std::vector<int64_t>{});

  ember_tensor* bad = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_dropout(x.get(), 1.5, &bad), EMBER_ERR_INVALID_ARGUMENT, "prob must be in [0, 1]");
  EMBER_EXPECT_ERR(ember_tensor_dropout(x.get(), -0.1, &bad), EMBER_ERR_INVALID_ARGUMENT, "prob must be in [0, 1]");
  EMBER_EXPECT_ERR(ember_tensor_dropout(x.get(), std::nan(""), &bad), EMBER_ERR_INVALID_ARGUMENT, "prob");
  const Tensor ints = i64({1, 2}, {2});
  EMBER_EXPECT_ERR(ember_tensor_dropout(ints.get(), 0.5, &bad), EMBER_ERR_DTYPE, "dropout: input");
  EMBER_EXPECT_ERR(ember_tensor_dropout(nullptr, 0.5, &bad), EMBER_ERR_NULL_HANDLE, "x");
  EXPECT_EQ(bad, nullptr);
}

}  // namespace
}  // namespace ember::capi_test
