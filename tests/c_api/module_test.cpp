// Modules, records and optimizers through the C ABI.
#include <cmath>

#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

ember_optimizer* make_optim(ember_module* m, int32_t kind, double lr) {
  ember_optimizer_options o;
  EXPECT_EQ(ember_optimizer_options_init(&o, kind), EMBER_OK);
  o.lr = lr;
  ember_optimizer* opt = nullptr;
  EXPECT_EQ(ember_optimizer_create(m, &o, &opt), EMBER_OK) << ember_last_error();
  return opt;
}

// MSE of the module's output against zeros, backward, and the gradients.
Grads mse_grads(ember_module* m, const ember_tensor* x) {
  auto y = forward(m, x, EMBER_MODE_TRAIN);
  ember_tensor *zero = nullptr, *loss = nullptr;
  int64_t dims[EMBER_MAX_RANK];
  size_t rank = 0;
  EXPECT_EQ(ember_tensor_shape(y.get(), dims, EMBER_MAX_RANK, &rank), EMBER_OK);
  EXPECT_EQ(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, dims, rank, &zero), EMBER_OK);
  Tensor z(zero);
  EXPECT_EQ(ember_loss_mse(y.get(), zero, EMBER_REDUCTION_MEAN, &loss), EMBER_OK) << ember_last_error();
  Tensor l(loss);
  ember_grads* g = nullptr;
  EXPECT_EQ(ember_tensor_backward(loss, nullptr, &g), EMBER_OK) << ember_last_error();
  return Grads(g);
}

TEST(CApiModule, EveryLayerKindRuns) {
  EMBER_ASSERT_OK(ember_seed(1));
  // A small CNN: conv -> batch norm -> prelu -> max pool -> avg pool -> flatten -> linear -> log_softmax.
  auto conv = layer(EMBER_LAYER_CONV2D);
  conv.in_features = 1;
  conv.out_features = 4;
  conv.kernel_size[0] = conv.kernel_size[1] = 3;
  conv.padding[0] = conv.padding[1] = 1;
  auto bn = layer(EMBER_LAYER_BATCH_NORM2D);
  bn.in_features = 4;
  auto prelu = layer(EMBER_LAYER_PRELU);
  prelu.in_features = 4;
  auto mp = layer(EMBER_LAYER_MAX_POOL2D);
  mp.kernel_size[0] = mp.kernel_size[1] = 2;
  auto ap = layer(EMBER_LAYER_AVG_POOL2D);
  ap.kernel_size[0] = ap.kernel_size[1] = 2;
  auto ad = layer(EMBER_LAYER_ADAPTIVE_AVG_POOL2D);
  ad.kernel_size[0] = ad.kernel_size[1] = 1;
  auto cnn = sequential({conv, bn, prelu, mp, ap, ad, layer(EMBER_LAYER_FLATTEN), linear(4, 3),
                         layer(EMBER_LAYER_LOG_SOFTMAX)});
  auto img = f32(std::vector<float>(2 * 64, 0.5f), {2, 1, 8, 8});
  EXPECT_EQ(shape_of(forward(cnn.get(), img.get(), EMBER_MODE_TRAIN).get()), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(shape_of(forward(cnn.get(), img.get(), EMBER_MODE_EVAL).get()), (std::vector<int64_t>{2, 3}));
  // A token model: embedding -> layer norm -> gelu(tanh) -> linear, then every activation.
  auto emb = layer(EMBER_LAYER_EMBEDDING);
  emb.in_features = 10;
  emb.out_features = 6;
  auto ln = layer(EMBER_LAYER_LAYER_NORM);
  ln.in_features = 6;
  auto gelu = layer(EMBER_LAYER_GELU);
  gelu.approximate = EMBER_GELU_TANH;
  auto thr = layer(EMBER_LAYER_THRESHOLD);
  thr.threshold = 0.1;
  thr.value = -1.0;
  auto bn1 = layer(EMBER_LAYER_BATCH_NORM1D);
  bn1.in_features = 3;
  auto tok = sequential({emb, ln, gelu, linear(6, 5), layer(EMBER_LAYER_RELU), layer(EMBER_LAYER_SIGMOID),
                         layer(EMBER_LAYER_TANH), thr, layer(EMBER_LAYER_LEAKY_RELU), layer(EMBER_LAYER_SILU),
                         layer(EMBER_LAYER_DROPOUT), layer(EMBER_LAYER_SOFTMAX), linear(5, 3), bn1});
  // [batch 3, seq 2] tokens reach the final BatchNorm1d as [3, 2, 3], whose channel dim 1 is 2, not 3: a clean
  // shape error naming the layer...
  auto ids = i64({1, 2, 3, 9, 0, 4}, {3, 2});
  ember_tensor* out = nullptr;
  EMBER_EXPECT_ERR(ember_module_forward(tok.get(), ids.get(), EMBER_MODE_EVAL, &out), EMBER_ERR_SHAPE, "layer 13");
  // ...and a flat batch of tokens works.
  auto flat = i64({1, 2, 3, 9}, {4});
  EXPECT_EQ(shape_of(forward(tok.get(), flat.get(), EMBER_MODE_TRAIN).get()), (std::vector<int64_t>{4, 3}));
}

TEST(CApiModule, NamedParameters) {
  auto bn = layer(EMBER_LAYER_BATCH_NORM1D);
  bn.in_features = 4;
  auto m = sequential({linear(3, 4), bn, layer(EMBER_LAYER_RELU), linear(4, 2, false)});
  size_t n = 0;
  EMBER_ASSERT_OK(ember_module_param_count(m.get(), &n));
  ASSERT_EQ(n, 7u);
  const std::vector<std::string> names = {"layers.0.weight",       "layers.0.bias",        "layers.1.gamma",
                                          "layers.1.beta",         "layers.1.running_mean", "layers.1.running_var",
                                          "layers.3.weight"};
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(param_name(m.get(), i), names[i]);
  ember_param_info info;
  info.struct_size = sizeof info;
  EMBER_ASSERT_OK(ember_module_param_info(m.get(), 0, &info));
  EXPECT_EQ(info.rank, 2u);
  EXPECT_EQ(info.shape[0], 3);
  EXPECT_EQ(info.shape[1], 4);
  EXPECT_EQ(info.numel, 12);
  EXPECT_EQ(info.dtype, EMBER_DTYPE_F32);
  EXPECT_EQ(info.role, EMBER_PARAM_TRAINABLE);
  EXPECT_EQ(info.requires_grad, 1);
  EMBER_ASSERT_OK(ember_module_param_info(m.get(), 4, &info));
  EXPECT_EQ(info.role, EMBER_PARAM_BUFFER);
  EXPECT_EQ(info.requires_grad, 0);
  int64_t total = 0;
  EMBER_ASSERT_OK(ember_module_num_elements(m.get(), &total));
  EXPECT_EQ(total, 12 + 4 + 4 * 4 + 8);
}

TEST(CApiModule, DropoutTrainAndEval) {
  auto d = layer(EMBER_LAYER_DROPOUT);
  d.p = 0.5;
  auto m = sequential({d});
  auto x = f32(std::vector<float>(1000, 1.0f), {1000});
  EXPECT_EQ(floats(forward(m.get(), x.get(), EMBER_MODE_EVAL).get()), std::vector<float>(1000, 1.0f));
  const auto y = floats(forward(m.get(), x.get(), EMBER_MODE_TRAIN).get());
  int zeros = 0;
  for (float v : y) {
    EXPECT_TRUE(v == 0.0f || v == 2.0f);
    zeros += v == 0.0f;
  }
  EXPECT_GT(zeros, 350);
  EXPECT_LT(zeros, 650);
}

TEST(CApiModule, RecordRoundTrips) {
  EMBER_ASSERT_OK(ember_seed(3));
  const std::vector<ember_layer_desc> arch = {linear(4, 8), layer(EMBER_LAYER_GELU), linear(8, 3)};
  auto a = sequential(arch);
  auto x = f32({0.1f, -0.2f, 0.3f, 0.4f, 1, 2, 3, 4}, {2, 4});
  const auto ya = floats(forward(a.get(), x.get()).get());
  for (int32_t recorder : {EMBER_RECORDER_BINARY, EMBER_RECORDER_JSON, EMBER_RECORDER_COMPACT}) {
    SCOPED_TRACE(recorder);
    ember_record_options o;
    EMBER_ASSERT_OK(ember_record_options_init(&o));
    o.recorder = recorder;
    TempPath file("roundtrip" + std::to_string(recorder) + ".emr");
    EMBER_ASSERT_OK(ember_module_save(a.get(), file.path.c_str(), &o));
    auto b = sequential(arch);  // other random weights
    EMBER_ASSERT_OK(ember_module_load(b.get(), file.path.c_str(), EMBER_LOAD_STRICT, nullptr));
    const auto yb = floats(forward(b.get(), x.get()).get());
    for (size_t i = 0; i < ya.size(); ++i)
      EXPECT_NEAR(yb[i], ya[i], recorder == EMBER_RECORDER_COMPACT ? 2e-2 : 0.0) << i;
  }
  // In memory.
  ember_record* r = nullptr;
  EMBER_ASSERT_OK(ember_module_to_record(a.get(), &r));
  RecordH rec(r);
  size_t entries = 0;
  EMBER_ASSERT_OK(ember_record_entry_count(r, &entries));
  EXPECT_EQ(entries, 4u);
  size_t size = 0;
  ember_record_to_bytes(r, nullptr, nullptr, 0, &size);
  std::vector<char> bytes(size);
  EMBER_ASSERT_OK(ember_record_to_bytes(r, nullptr, bytes.data(), bytes.size(), &size));
  ember_record* back = nullptr;
  EMBER_ASSERT_OK(ember_record_from_bytes(bytes.data(), bytes.size(), &back));
  RecordH rback(back);
  auto c = sequential(arch);
  ember_load_report* rep = nullptr;
  EMBER_ASSERT_OK(ember_module_load_record(c.get(), back, EMBER_LOAD_STRICT, &rep));
  Report report(rep);
  size_t len = 99;
  char text[8];
  EMBER_ASSERT_OK(ember_load_report_text(rep, text, sizeof text, &len));
  EXPECT_EQ(len, 0u);
  EXPECT_EQ(floats(forward(c.get(), x.get()).get()), ya);
}

// Each (recorder, precision) pair of ember_record_options selects its typed recorder: the archive shows in the
// preamble's kind field, the precision in the header (binary bodies hold the name as raw bytes, JSON as text).
TEST(CApiModule, RecordOptionsPickTheArchiveAndPrecision) {
  auto m = sequential({linear(2, 3)});
  ember_record* r = nullptr;
  EMBER_ASSERT_OK(ember_module_to_record(m.get(), &r));
  RecordH rec(r);
  struct Case {
    int32_t recorder, precision;
    char kind;
    const char* name;
  };
  const Case cases[] = {{EMBER_RECORDER_BINARY, EMBER_PRECISION_DEFAULT, '0', "full"},
                        {EMBER_RECORDER_JSON, EMBER_PRECISION_DEFAULT, '1', "full"},
                        {EMBER_RECORDER_COMPACT, EMBER_PRECISION_DEFAULT, '0', "half"},
                        {EMBER_RECORDER_COMPACT, EMBER_PRECISION_FULL, '0', "full"},
                        {EMBER_RECORDER_BINARY, EMBER_PRECISION_HALF, '0', "half"},
                        {EMBER_RECORDER_JSON, EMBER_PRECISION_DOUBLE, '1', "double"},
                        {EMBER_RECORDER_BINARY, EMBER_PRECISION_DOUBLE, '0', "double"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.recorder) + "/" + std::to_string(c.precision));
    ember_record_options o;
    EMBER_ASSERT_OK(ember_record_options_init(&o));
    o.recorder = c.recorder;
    o.precision = c.precision;
    size_t size = 0;
    ember_record_to_bytes(r, &o, nullptr, 0, &size);
    std::string bytes(size, '\0');
    EMBER_ASSERT_OK(ember_record_to_bytes(r, &o, bytes.data(), bytes.size(), &size));
    ASSERT_GT(bytes.size(), 61u);
    EXPECT_EQ(bytes[25], c.kind) << bytes.substr(0, 61);
    for (const char* name : {"full", "half", "double"})
      EXPECT_EQ(bytes.find(name, 61) != std::string::npos, std::string(name) == c.name) << name;
  }
}

TEST(CApiModule, SgdStepMatchesTheUpdateRule) {
  auto m = sequential({linear(2, 1)});
  auto x = f32({1, 2}, {1, 2});
  ember_tensor* w0 = nullptr;
  EMBER_ASSERT_OK(ember_module_param_value(m.get(), 0, &w0));
  Tensor wt(w0);
  const auto before = floats(w0);
  auto grads = mse_grads(m.get(), x.get());
  ember_tensor* gw = nullptr;
  EMBER_ASSERT_OK(ember_grads_get(grads.get(), w0, &gw));
  ASSERT_NE(gw, nullptr);
  const auto g = floats(Tensor(gw).get());
  Optim opt(make_optim(m.get(), EMBER_OPTIM_SGD, 0.1));
  EMBER_ASSERT_OK(ember_optimizer_step(opt.get(), grads.get()));
  ember_tensor* w1 = nullptr;
  EMBER_ASSERT_OK(ember_module_param_value(m.get(), 0, &w1));
  const auto after = floats(Tensor(w1).get());
  for (size_t i = 0; i < after.size(); ++i) EXPECT_FLOAT_EQ(after[i], before[i] - 0.1f * g[i]);
  double lr = 0;
  EMBER_ASSERT_OK(ember_optimizer_set_lr(opt.get(), 0.5));
  EMBER_ASSERT_OK(ember_optimizer_get_lr(opt.get(), &lr));
  EXPECT_EQ(lr, 0.5);
  EMBER_EXPECT_ERR(ember_optimizer_set_lr(opt.get(), -1.0), EMBER_ERR_INVALID_ARGUMENT, "lr must be");
}

TEST(CApiModule, AccumulateAndZeroGrad) {
  EMBER_ASSERT_OK(ember_seed(5));
  const std::vector<ember_layer_desc> arch = {linear(3, 2)};
  auto a = sequential(arch);
  auto b = sequential(arch);
  auto x = f32({1, 2, 3}, {1, 3});
  // Same weights in both: copy a into b through a record.
  ember_record* r = nullptr;
  EMBER_ASSERT_OK(ember_module_to_record(a.get(), &r));
  EMBER_ASSERT_OK(ember_module_load_record(b.get(), RecordH(r).get(), EMBER_LOAD_STRICT, nullptr));
  Optim oa(make_optim(a.get(), EMBER_OPTIM_SGD, 0.1)), ob(make_optim(b.get(), EMBER_OPTIM_SGD, 0.2));
  // a: two accumulated passes of the same gradient at lr 0.1 == b: one pass at lr 0.2.
  EMBER_ASSERT_OK(ember_optimizer_accumulate(oa.get(), mse_grads(a.get(), x.get()).get()));
  EMBER_ASSERT_OK(ember_optimizer_step(oa.get(), mse_grads(a.get(), x.get()).get()));
  // b: a pending gradient thrown away by zero_grad, then one real step.
  EMBER_ASSERT_OK(ember_optimizer_accumulate(ob.get(), mse_grads(b.get(), x.get()).get()));
  EMBER_ASSERT_OK(ember_optimizer_zero_grad(ob.get()));
  EMBER_ASSERT_OK(ember_optimizer_step(ob.get(), mse_grads(b.get(), x.get()).get()));
  const auto ya = floats(forward(a.get(), x.get()).get()), yb = floats(forward(b.get(), x.get()).get());
  for (size_t i = 0; i < ya.size(); ++i) EXPECT_NEAR(ya[i], yb[i], 1e-6f);
}

TEST(CApiModule, AdamStateSurvivesSaveAndLoad) {
  EMBER_ASSERT_OK(ember_seed(11));
  const std::vector<ember_layer_desc> arch = {linear(3, 4), layer(EMBER_LAYER_TANH), linear(4, 1)};
  auto x = f32({0.5f, -1, 2, 1, 1, 1}, {2, 3});
  auto a = sequential(arch);
  Optim oa(make_optim(a.get(), EMBER_OPTIM_ADAMW, 0.01));
  for (int i = 0; i < 3; ++i) EMBER_ASSERT_OK(ember_optimizer_step(oa.get(), mse_grads(a.get(), x.get()).get()));
  TempPath mfile("adam_model.emr"), ofile("adam_optim.emr");
  EMBER_ASSERT_OK(ember_module_save(a.get(), mfile.path.c_str(), nullptr));
  EMBER_ASSERT_OK(ember_optimizer_save(oa.get(), ofile.path.c_str(), nullptr));
  // Resume in fresh objects: module first (param ids come from the record), then the optimizer state.
  auto b = sequential(arch);
  EMBER_ASSERT_OK(ember_module_load(b.get(), mfile.path.c_str(), EMBER_LOAD_STRICT, nullptr));
  Optim ob(make_optim(b.get(), EMBER_OPTIM_ADAMW, 0.5));
  EMBER_ASSERT_OK(ember_optimizer_load(ob.get(), ofile.path.c_str()));
  double lr = 0;
  EMBER_ASSERT_OK(ember_optimizer_get_lr(ob.get(), &lr));
  EXPECT_DOUBLE_EQ(lr, 0.01);
  for (int i = 0; i < 3; ++i) {
    EMBER_ASSERT_OK(ember_optimizer_step(oa.get(), mse_grads(a.get(), x.get()).get()));
    EMBER_ASSERT_OK(ember_optimizer_step(ob.get(), mse_grads(b.get(), x.get()).get()));
  }
  EXPECT_EQ(floats(forward(a.get(), x.get()).get()), floats(forward(b.get(), x.get()).get()));
  // Without the state (reset), the next step differs.
  EMBER_ASSERT_OK(ember_optimizer_reset(ob.get()));
  EMBER_ASSERT_OK(ember_optimizer_step(oa.get(), mse_grads(a.get(), x.get()).get()));
  EMBER_ASSERT_OK(ember_optimizer_step(ob.get(), mse_grads(b.get(), x.get()).get()));
  EXPECT_NE(floats(forward(a.get(), x.get()).get()), floats(forward(b.get(), x.get()).get()));
}

TEST(CApiModule, TrainingReducesTheLoss) {
  EMBER_ASSERT_OK(ember_seed(2));
  auto m = sequential({linear(2, 16), layer(EMBER_LAYER_RELU), linear(16, 1)});
  Optim opt(make_optim(m.get(), EMBER_OPTIM_ADAM, 0.01));
  auto x = f32({0, 0, 0, 1, 1, 0, 1, 1}, {4, 2});
  auto target = f32({0, 1, 1, 0}, {4, 1});
  double first = 0, last = 0;
  for (int i = 0; i < 300; ++i) {
    auto y = forward(m.get(), x.get(), EMBER_MODE_TRAIN);
    ember_tensor* l = nullptr;
    EMBER_ASSERT_OK(ember_loss_mse(y.get(), target.get(), EMBER_REDUCTION_MEAN, &l));
    Tensor loss(l);
    EMBER_ASSERT_OK(ember_tensor_item(l, i == 0 ? &first : &last));
    ember_grads* g = nullptr;
    EMBER_ASSERT_OK(ember_tensor_backward(l, nullptr, &g));
    EMBER_ASSERT_OK(ember_optimizer_step(opt.get(), Grads(g).get()));
  }
  EXPECT_LT(last, first * 0.05);
}

}  // namespace
}  // namespace ember::capi_test
