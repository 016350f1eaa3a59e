// issue 19: ONNX models through the C ABI (ember_onnx_*): load, forward with several inputs and outputs and the
// mode flag, input/output names and declared dims, the operator list, the initializers as module params that
// gradients, optimizers and records reach, and the errors. The models and their torch values:
// tests/c_api/onnx_models/gen_onnx_models.py.
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/c_api/capi_support.hpp"
#include "tests/c_api/onnx_models/onnx_expected.hpp"

namespace ember::capi_test {
namespace {

namespace expect = ember::onnx_expected;

std::string model_path(const std::string& name) {
  return std::string(EMBER_TEST_SOURCE_DIR) + "/tests/c_api/onnx_models/" + name;
}

#if EMBER_TEST_ONNX_PARSER

Module load(const std::string& name) {
  ember_module* m = nullptr;
  EXPECT_EQ(ember_onnx_load(model_path(name).c_str(), nullptr, &m), EMBER_OK) << ember_last_error();
  return Module(m);
}

using NameFn = ember_status (*)(const ember_module*, size_t, char*, size_t, size_t*);
std::string name_of(NameFn fn, const ember_module* m, size_t i) {
  size_t len = 0;
  EXPECT_EQ(fn(m, i, nullptr, 0, &len), EMBER_OK) << ember_last_error();
  std::string s(len + 1, '\0');
  EXPECT_EQ(fn(m, i, s.data(), s.size(), &len), EMBER_OK) << ember_last_error();
  s.resize(len);
  return s;
}

std::vector<Tensor> run(ember_module* m, const std::vector<const ember_tensor*>& xs, size_t n_out,
                        int32_t mode = EMBER_MODE_EVAL) {
  std::vector<ember_tensor*> ys(n_out, nullptr);
  EXPECT_EQ(ember_onnx_forward(m, xs.data(), xs.size(), ys.data(), ys.size(), mode), EMBER_OK) << ember_last_error();
  std::vector<Tensor> out;
  for (auto* y : ys) out.emplace_back(y);
  return out;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-4f) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

Tensor find_param(const ember_module* m, const char* path) {
  ember_tensor* t = nullptr;
  EXPECT_EQ(ember_module_find_param(m, path, &t), EMBER_OK) << ember_last_error();
  return Tensor(t);
}

TEST(OnnxCapi, OperatorListIsSortedAndNamesTheCoreOperators) {
  size_t n = 0;
  EMBER_ASSERT_OK(ember_onnx_operator_count(&n));
  ASSERT_GE(n, 2u);
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i)
    names.push_back(name_of([](const ember_module*, size_t i, char* b, size_t c, size_t* l) {
      return ember_onnx_operator_name(i, b, c, l);
    }, nullptr, i));
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_NE(std::find(names.begin(), names.end(), "Identity"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "NotAnOnnxOp"), names.end());
  char buf[4];
  size_t len = 0;
  EMBER_EXPECT_ERR(ember_onnx_operator_name(n, buf, sizeof buf, &len), EMBER_ERR_INDEX, "out of range");
}

TEST(OnnxCapi, MlpGivesTorchOutputsWithItsInitializersAsParams) {
  Module m = load("mlp.onnx");
  ASSERT_TRUE(m);
  size_t n_in = 0, n_out = 0;
  EMBER_ASSERT_OK(ember_onnx_input_count(m.get(), &n_in));
  EMBER_ASSERT_OK(ember_onnx_output_count(m.get(), &n_out));
  EXPECT_EQ(n_in, 1u);
  EXPECT_EQ(n_out, 1u);
  EXPECT_EQ(name_of(ember_onnx_input_name, m.get(), 0), "x");
  EXPECT_EQ(name_of(ember_onnx_output_name, m.get(), 0), "y");
  int32_t dtype = -2;
  int64_t dims[4] = {0, 0, 0, 0}, rank = 0;
  EMBER_ASSERT_OK(ember_onnx_input_info(m.get(), 0, &dtype, dims, 4, &rank));
  EXPECT_EQ(dtype, EMBER_DTYPE_F32);
  ASSERT_EQ(rank, 2);
  EXPECT_EQ(dims[0], -1);  // "batch": dynamic
  EXPECT_EQ(dims[1], 3);
  EMBER_EXPECT_ERR(ember_onnx_input_info(m.get(), 0, &dtype, dims, 1, &rank), EMBER_ERR_BUFFER_TOO_SMALL, "rank 2");

  size_t n_params = 0;
  EMBER_ASSERT_OK(ember_module_param_count(m.get(), &n_params));
  ASSERT_EQ(n_params, 4u);
  EXPECT_EQ(param_name(m.get(), 0), "fc1.weight");
  EXPECT_EQ(param_name(m.get(), 3), "fc2.bias");
  ember_param_info info{};
  info.struct_size = sizeof info;
  EMBER_ASSERT_OK(ember_module_param_info(m.get(), 0, &info));
  EXPECT_EQ(info.role, EMBER_PARAM_TRAINABLE);
  EXPECT_EQ(info.requires_grad, 1);

  Tensor x = f32(expect::mlp_x, expect::mlp_x_shape);
  auto ys = run(m.get(), {x.get()}, 1);
  EXPECT_EQ(shape_of(ys[0].get()), expect::mlp_y_shape);
  expect_near(floats(ys[0].get()), expect::mlp_y);
  // ember_module_forward runs a one-input model too, and a different batch size resolves "batch" again.
  Tensor x2 = f32({expect::mlp_x.begin(), expect::mlp_x.begin() + 6}, {2, 3});
  Tensor y2 = forward(m.get(), x2.get());
  expect_near(floats(y2.get()), {expect::mlp_y.begin(), expect::mlp_y.begin() + 4});
}

TEST(OnnxCapi, GradientsOfTheOutputsReachTheInitializerHandles) {
  Module m = load("mlp.onnx");
  Tensor x = f32(expect::mlp_x, expect::mlp_x_shape);
  auto ys = run(m.get(), {x.get()}, 1, EMBER_MODE_TRAIN);
  ember_tensor* loss = nullptr;
  EMBER_ASSERT_OK(ember_tensor_reduce_all(ys[0].get(), EMBER_REDUCE_SUM, &loss));
  Tensor loss_h(loss);
  ember_grads* g = nullptr;
  EMBER_ASSERT_OK(ember_tensor_backward(loss, nullptr, &g));
  Grads grads(g);
  Tensor w1 = find_param(m.get(), "fc1.weight");
  Tensor b2 = find_param(m.get(), "fc2.bias");
  ember_tensor* gw = nullptr;
  ember_tensor* gb = nullptr;
  EMBER_ASSERT_OK(ember_grads_get(grads.get(), w1.get(), &gw));
  EMBER_ASSERT_OK(ember_grads_get(grads.get(), b2.get(), &gb));
  Tensor gw_h(gw), gb_h(gb);
  ASSERT_TRUE(gw && gb);
  expect_near(floats(gw), expect::mlp_grad_fc1_weight);
  expect_near(floats(gb), expect::mlp_grad_fc2_bias);
}

TEST(OnnxCapi, OptimizerStepsAndRecordLoadsAreWhatTheNextForwardUses) {
  Module m = load("mlp.onnx");
  Tensor x = f32(expect::mlp_x, expect::mlp_x_shape);
  ember_record* r = nullptr;
  EMBER_ASSERT_OK(ember_module_to_record(m.get(), &r));
  RecordH rec(r);

  ember_optimizer_options o;
  EMBER_ASSERT_OK(ember_optimizer_options_init(&o, EMBER_OPTIM_SGD));
  o.lr = 0.1;
  ember_optimizer* opt_raw = nullptr;
  EMBER_ASSERT_OK(ember_optimizer_create(m.get(), &o, &opt_raw));
  Optim opt(opt_raw);
  auto before = floats(run(m.get(), {x.get()}, 1)[0].get());
  {
    auto ys = run(m.get(), {x.get()}, 1, EMBER_MODE_TRAIN);
    ember_tensor* loss = nullptr;
    EMBER_ASSERT_OK(ember_tensor_reduce_all(ys[0].get(), EMBER_REDUCE_SUM, &loss));
    Tensor loss_h(loss);
    ember_grads* g = nullptr;
    EMBER_ASSERT_OK(ember_tensor_backward(loss, nullptr, &g));
    Grads grads(g);
    EMBER_ASSERT_OK(ember_optimizer_step(opt.get(), grads.get()));
  }
  auto after = floats(run(m.get(), {x.get()}, 1)[0].get());
  // SGD on sum(y): fc2.bias moves by -lr * 5 per output, so every output drops by at least 0.5.
  for (std::size_t i = 0; i < after.size(); ++i) EXPECT_LT(after[i], before[i] - 0.49f) << i;

  ember_load_report* rep = nullptr;
  EMBER_ASSERT_OK(ember_module_load_record(m.get(), rec.get(), EMBER_LOAD_STRICT, &rep));
  Report report(rep);
  expect_near(floats(run(m.get(), {x.get()}, 1)[0].get()), before, 1e-6f);
}

TEST(OnnxCapi, SeveralInputsAndOutputs) {
  Module m = load("two_io.onnx");
  EXPECT_EQ(name_of(ember_onnx_input_name, m.get(), 1), "b");
  EXPECT_EQ(name_of(ember_onnx_output_name, m.get(), 1), "prod");
  Tensor a = f32(expect::two_a, {2, 3}), b = f32(expect::two_b, {2, 3});
  auto ys = run(m.get(), {a.get(), b.get()}, 2);
  expect_near(floats(ys[0].get()), expect::two_sum);
  expect_near(floats(ys[1].get()), expect::two_prod);
  auto first = run(m.get(), {a.get(), b.get()}, 1);  // fewer outputs than the graph has
  expect_near(floats(first[0].get()), expect::two_sum);

  const ember_tensor* one[] = {a.get()};
  ember_tensor* outs[3] = {a.get(), a.get(), a.get()};  // overwritten with NULL on failure
  EMBER_EXPECT_ERR(ember_onnx_forward(m.get(), one, 1, outs, 2, EMBER_MODE_EVAL), EMBER_ERR_INVALID_ARGUMENT,
                   "n_inputs is 1");
  EXPECT_EQ(outs[0], nullptr);
  EXPECT_EQ(outs[1], nullptr);
  const ember_tensor* both[] = {a.get(), b.get()};
  EMBER_EXPECT_ERR(ember_onnx_forward(m.get(), both, 2, outs, 3, EMBER_MODE_EVAL), EMBER_ERR_INVALID_ARGUMENT,
                   "3 outputs asked for");
  EMBER_EXPECT_ERR(ember_onnx_forward(m.get(), both, 2, outs, 2, 7), EMBER_ERR_INVALID_ARGUMENT, "unknown mode 7");
  EMBER_EXPECT_ERR(ember_module_forward(m.get(), a.get(), EMBER_MODE_EVAL, outs), EMBER_ERR_INVALID_ARGUMENT,
                   "use ember_onnx_forward");
}

TEST(OnnxCapi, IntegerInitializersAreConstantParams) {
  Module m = load("reshape.onnx");
  ember_param_info info{};
  info.struct_size = sizeof info;
  EMBER_ASSERT_OK(ember_module_param_info(m.get(), 0, &info));
  EXPECT_EQ(info.role, EMBER_PARAM_CONSTANT);
  EXPECT_EQ(info.requires_grad, 0);
  EXPECT_EQ(param_name(m.get(), 0), "shape");
  Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  auto ys = run(m.get(), {x.get()}, 1);
  EXPECT_EQ(shape_of(ys[0].get()), (std::vector<int64_t>{3, 2}));
  expect_near(floats(ys[0].get()), {1, 2, 3, 4, 5, 6});
}

TEST(OnnxCapi, TheModeFlagReachesDropout) {
  Module m = load("dropout.onnx");
  std::vector<float> ones(32, 1.0f);
  Tensor x = f32(ones, {4, 8});
  expect_near(floats(run(m.get(), {x.get()}, 1, EMBER_MODE_EVAL)[0].get()), ones);
  const auto train = floats(run(m.get(), {x.get()}, 1, EMBER_MODE_TRAIN)[0].get());
  int zeros = 0, doubled = 0;
  for (float v : train) {
    zeros += v == 0.0f;
    doubled += std::fabs(v - 2.0f) < 1e-6f;
  }
  EXPECT_EQ(zeros + doubled, 32);  // each element dropped, or kept and scaled by 1 / (1 - 0.5)
  EXPECT_GT(zeros, 0);
  EXPECT_GT(doubled, 0);
}

TEST(OnnxCapi, UnsupportedOperatorsAreNamedWithTheirNodeAtLoad) {
  ember_module* m = nullptr;
  EMBER_EXPECT_ERR(ember_onnx_load(model_path("unsupported.onnx").c_str(), nullptr, &m), EMBER_ERR_UNSUPPORTED,
                   "NotAnOnnxOp");
  EXPECT_EQ(m, nullptr);
  EXPECT_TRUE(has_phrase(ember_last_error(), "mystery")) << ember_last_error();
}

TEST(OnnxCapi, LoadFromMemoryIsTheSameModel) {
  std::ifstream f(model_path("two_io.onnx"), std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  ember_module* raw = nullptr;
  EMBER_ASSERT_OK(ember_onnx_load_memory(bytes.data(), bytes.size(), nullptr, &raw));
  Module m(raw);
  Tensor a = f32(expect::two_a, {2, 3}), b = f32(expect::two_b, {2, 3});
  expect_near(floats(run(m.get(), {a.get(), b.get()}, 2)[1].get()), expect::two_prod);
  // A truncated copy is refused (sizes past its bytes), never read past its end.
  ember_module* bad = nullptr;
  ember_clear_error();
  EXPECT_NE(ember_onnx_load_memory(bytes.data(), bytes.size() / 2, nullptr, &bad), EMBER_OK);
  EXPECT_EQ(bad, nullptr);
  EXPECT_STRNE(ember_last_error(), "");
}

TEST(OnnxCapi, Misuse) {
  ember_module* m = nullptr;
  EMBER_EXPECT_ERR(ember_onnx_load(nullptr, nullptr, &m), EMBER_ERR_INVALID_ARGUMENT, "path is NULL");
  EMBER_EXPECT_ERR(ember_onnx_load(model_path("mlp.onnx").c_str(), nullptr, nullptr), EMBER_ERR_INVALID_ARGUMENT,
                   "out is NULL");
  ember_clear_error();
  EXPECT_NE(ember_onnx_load(model_path("no_such_model.onnx").c_str(), nullptr, &m), EMBER_OK);
  EXPECT_TRUE(has_phrase(ember_last_error(), "no_such_model.onnx")) << ember_last_error();
  EMBER_EXPECT_ERR(ember_onnx_load_memory(nullptr, 10, nullptr, &m), EMBER_ERR_INVALID_ARGUMENT, "data is NULL");

  ember_module* plain = nullptr;
  EMBER_ASSERT_OK(ember_module_create(nullptr, &plain));
  Module container(plain);
  size_t n = 0;
  EMBER_EXPECT_ERR(ember_onnx_input_count(container.get(), &n), EMBER_ERR_INVALID_ARGUMENT, "not an ONNX model");
  ember_tensor* out = nullptr;
  EMBER_EXPECT_ERR(ember_onnx_forward(container.get(), nullptr, 0, &out, 1, EMBER_MODE_EVAL),
                   EMBER_ERR_INVALID_ARGUMENT, "not an ONNX model");

  Module mlp = load("mlp.onnx");
  EMBER_EXPECT_ERR(ember_onnx_input_count(mlp.get(), nullptr), EMBER_ERR_INVALID_ARGUMENT, "count is NULL");
  EMBER_EXPECT_ERR(ember_onnx_forward(mlp.get(), nullptr, 1, &out, 1, EMBER_MODE_EVAL), EMBER_ERR_INVALID_ARGUMENT,
                   "inputs is NULL");
  const ember_tensor* none[] = {nullptr};
  EMBER_EXPECT_ERR(ember_onnx_forward(mlp.get(), none, 1, &out, 1, EMBER_MODE_EVAL), EMBER_ERR_NULL_HANDLE,
                   "inputs[0]");
  char buf[8];
  size_t len = 0;
  EMBER_EXPECT_ERR(ember_onnx_output_name(mlp.get(), 1, buf, sizeof buf, &len), EMBER_ERR_INDEX, "out of range");
}

#else  // a libember without the ONNX library

TEST(OnnxCapi, LoadingSaysUnsupportedWithoutTheOnnxLibrary) {
  ember_module* m = nullptr;
  EMBER_EXPECT_ERR(ember_onnx_load(model_path("mlp.onnx").c_str(), nullptr, &m), EMBER_ERR_UNSUPPORTED, "ONNX");
  const char bytes[4] = {0, 1, 2, 3};
  EMBER_EXPECT_ERR(ember_onnx_load_memory(bytes, sizeof bytes, nullptr, &m), EMBER_ERR_UNSUPPORTED, "ONNX");
  size_t n = 0;
  EMBER_EXPECT_OK(ember_onnx_operator_count(&n));  // the converters are there in every build
  EXPECT_GE(n, 2u);
}

#endif

}  // namespace
}  // namespace ember::capi_test
