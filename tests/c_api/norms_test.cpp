// issue 13 (h-norms) through the C ABI: ember_tensor_conv_transpose2d and the layer kinds GROUP_NORM, RMS_NORM and
// CONV_TRANSPOSE2D against PyTorch's values (tests/reference/norms_reference.hpp, gen_norms_reference.py), their
// gradients, record and PyTorch state_dict round trips, and the refusals.
#include <cmath>
#include <vector>

#include "tests/c_api/capi_support.hpp"
#include "tests/reference/norms_reference.hpp"

namespace ember::capi_test {
namespace {

namespace R = ember::test::normsref;

template <std::size_t N, std::size_t D>
Tensor ref(const double (&v)[N], const std::array<int64_t, D>& shape) {
  return f32(std::vector<float>(v, v + N), std::vector<int64_t>(shape.begin(), shape.end()));
}
template <std::size_t N>
void expect_close(const std::vector<float>& got, const double (&want)[N], double tol = 1e-4) {
  ASSERT_EQ(got.size(), N);
  for (std::size_t i = 0; i < N; ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}
Tensor leaf(Tensor t) {
  EXPECT_EQ(ember_tensor_set_requires_grad(t.get(), 1), EMBER_OK) << ember_last_error();
  return t;
}
std::vector<float> grad_of(const ember_grads* g, const ember_tensor* t) {
  ember_tensor* out = nullptr;
  EXPECT_EQ(ember_grads_get(g, t, &out), EMBER_OK) << ember_last_error();
  if (!out) return {};
  Tensor o(out);
  return floats(out);
}
void set_state(ember_module* m, const char* path, const ember_tensor* v) {
  EXPECT_EQ(ember_module_state_set(m, path, v), EMBER_OK) << path << ": " << ember_last_error();
}
Module single(const ember_layer_desc& d) {
  ember_module* m = nullptr;
  EXPECT_EQ(ember_module_layer(nullptr, &d, &m), EMBER_OK) << ember_last_error();
  return Module(m);
}

ember_conv_transpose2d_options ctg_options() {
  ember_conv_transpose2d_options o;
  EXPECT_EQ(ember_conv_transpose2d_options_init(&o), EMBER_OK);
  o.stride[0] = 2, o.stride[1] = 3;
  o.padding[0] = 1, o.padding[1] = 0;
  o.output_padding[0] = 1, o.output_padding[1] = 2;
  o.dilation[0] = 2, o.dilation[1] = 1;
  o.groups = 2;
  return o;
}

TEST(CApiNorms, ConvTranspose2dFunctionMatchesTorchWithGradients) {
  auto x = leaf(ref(R::ctg_x, R::ctg_x_shape));
  auto w = leaf(ref(R::ctg_w, R::ctg_w_shape));
  auto b = leaf(ref(R::ctg_b, R::ctg_b_shape));
  const auto o = ctg_options();
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_conv_transpose2d(x.get(), w.get(), b.get(), &o, &y));
  Tensor yo(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{2, 6, 8, 13}));
  expect_close(floats(y), R::ctg_y);
  auto gy = ref(R::ctg_gy, R::ctg_gy_shape);
  ember_grads* g = nullptr;
  EMBER_ASSERT_OK(ember_tensor_backward(y, gy.get(), &g));
  Grads go(g);
  expect_close(grad_of(g, x.get()), R::ctg_dx);
  expect_close(grad_of(g, w.get()), R::ctg_dw);
  expect_close(grad_of(g, b.get()), R::ctg_db);
}

TEST(CApiNorms, ConvTranspose2dDefaultsAndRefusals) {
  auto x = ref(R::ct_x, R::ct_x_shape);
  auto w = ref(R::ct_w, R::ct_w_shape);
  ember_tensor* y = nullptr;
  // NULL options: PyTorch's defaults; no bias.
  EMBER_ASSERT_OK(ember_tensor_conv_transpose2d(x.get(), w.get(), nullptr, nullptr, &y));
  Tensor yo(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{2, 3, 5, 5}));
  ember_conv_transpose2d_options o;
  EMBER_ASSERT_OK(ember_conv_transpose2d_options_init(&o));
  o.output_padding[0] = 1;  // stride 1, dilation 1: not smaller than either
  ember_tensor* bad = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_conv_transpose2d(x.get(), w.get(), nullptr, &o, &bad), EMBER_ERR_INVALID_ARGUMENT,
                   "output_padding");
  EMBER_ASSERT_OK(ember_conv_transpose2d_options_init(&o));
  o.reserved = 1;
  EMBER_EXPECT_ERR(ember_tensor_conv_transpose2d(x.get(), w.get(), nullptr, &o, &bad), EMBER_ERR_INVALID_ARGUMENT,
                   "reserved");
  auto b4 = f32({0, 0, 0, 0}, {4});
  EMBER_EXPECT_ERR(ember_tensor_conv_transpose2d(x.get(), w.get(), b4.get(), nullptr, &bad), EMBER_ERR_SHAPE, "bias");
  EMBER_EXPECT_ERR(ember_tensor_conv_transpose2d(w.get(), x.get(), nullptr, nullptr, &bad), EMBER_ERR_SHAPE,
                   "input channels");
  EXPECT_EQ(bad, nullptr);
}

TEST(CApiNorms, LayerKindsMatchTorch) {
  {
    auto d = layer(EMBER_LAYER_GROUP_NORM);
    d.num_groups = 3;
    d.in_features = 6;
    auto m = single(d);
    set_state(m.get(), "weight", ref(R::gn_w, R::gn_w_shape).get());
    set_state(m.get(), "bias", ref(R::gn_b, R::gn_b_shape).get());
    auto x = ref(R::gn_x, R::gn_x_shape);
    expect_close(floats(forward(m.get(), x.get()).get()), R::gn_y);
  }
  {
    auto d = layer(EMBER_LAYER_GROUP_NORM);
    d.num_groups = 2;
    d.in_features = 4;
    d.eps = 1e-3;
    d.affine = 0;
    auto m = single(d);
    size_t n = 99;
    EMBER_ASSERT_OK(ember_module_param_count(m.get(), &n));
    EXPECT_EQ(n, 0u);
    auto x = ref(R::gn3_x, R::gn3_x_shape);
    expect_close(floats(forward(m.get(), x.get()).get()), R::gn3_y);
  }
  {
    auto d = layer(EMBER_LAYER_RMS_NORM);
    d.in_features = 5;
    d.eps = 1e-6;
    auto m = single(d);
    set_state(m.get(), "weight", ref(R::rms_w, R::rms_w_shape).get());
    auto x = ref(R::rms_x, R::rms_x_shape);
    expect_close(floats(forward(m.get(), x.get()).get()), R::rms_y);
  }
  {
    // ember_layer_init's eps for RMS_NORM is PyTorch's None: float32's machine epsilon on f32 input.
    auto d = layer(EMBER_LAYER_RMS_NORM);
    EXPECT_LT(d.eps, 0.0);
    d.in_features = 4;
    d.affine = 0;
    auto m = single(d);
    auto x = ref(R::rms_small_x, R::rms_small_x_shape);
    expect_close(floats(forward(m.get(), x.get()).get()), R::rms_small_y_f32);
  }
  {
    auto d = layer(EMBER_LAYER_CONV_TRANSPOSE2D);
    d.in_features = 4;
    d.out_features = 6;
    d.kernel_size[0] = 3, d.kernel_size[1] = 2;
    d.stride[0] = 2, d.stride[1] = 3;
    d.padding[0] = 1;
    d.output_padding[0] = 1, d.output_padding[1] = 2;
    d.dilation[0] = 2;
    d.groups = 2;
    auto m = single(d);
    set_state(m.get(), "weight", ref(R::ctg_w, R::ctg_w_shape).get());
    set_state(m.get(), "bias", ref(R::ctg_b, R::ctg_b_shape).get());
    auto x = ref(R::ctg_x, R::ctg_x_shape);
    expect_close(floats(forward(m.get(), x.get()).get()), R::ctg_y);
  }
}

// A decoder-style stack: its params under PyTorch's names (weight layout [in, out / groups, kH, kW] as torch's), a
// record round trip, and refusals of bad layer fields naming the layer.
TEST(CApiNorms, SequentialRecordsTorchNamesAndRefusals) {
  EMBER_ASSERT_OK(ember_seed(5));
  auto ct = layer(EMBER_LAYER_CONV_TRANSPOSE2D);
  ct.in_features = 4;
  ct.out_features = 2;
  ct.kernel_size[0] = ct.kernel_size[1] = 2;
  ct.stride[0] = ct.stride[1] = 2;
  auto gn = layer(EMBER_LAYER_GROUP_NORM);
  gn.num_groups = 2;
  gn.in_features = 2;
  auto rms = layer(EMBER_LAYER_RMS_NORM);
  rms.in_features = 6;
  const std::vector<ember_layer_desc> arch = {ct, gn, rms};
  auto a = sequential(arch);
  std::vector<float> xv(2 * 4 * 3 * 3);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.37f * static_cast<float>(i));
  auto x = f32(xv, {2, 4, 3, 3});
  const auto ya = floats(forward(a.get(), x.get()).get());
  EXPECT_EQ(shape_of(forward(a.get(), x.get()).get()), (std::vector<int64_t>{2, 2, 6, 6}));

  ember_record* sd = nullptr;
  EMBER_ASSERT_OK(ember_module_to_torch_state_dict(a.get(), &sd));
  RecordH sdo(sd);
  auto b = sequential(arch);  // other random weights
  EMBER_ASSERT_OK(ember_module_load_torch_state_dict(b.get(), sd, EMBER_LOAD_STRICT, nullptr));
  EXPECT_EQ(floats(forward(b.get(), x.get()).get()), ya);
  std::vector<std::string> names;
  size_t n = 0;
  EMBER_ASSERT_OK(ember_module_param_count(a.get(), &n));
  for (size_t i = 0; i < n; ++i) names.push_back(param_name(a.get(), i));
  EXPECT_EQ(names, (std::vector<std::string>{"layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
                                             "layers.2.weight"}));

  ember_record* r = nullptr;
  EMBER_ASSERT_OK(ember_module_to_record(a.get(), &r));
  RecordH ro(r);
  auto c = sequential(arch);
  EMBER_ASSERT_OK(ember_module_load_record(c.get(), r, EMBER_LOAD_STRICT, nullptr));
  EXPECT_EQ(floats(forward(c.get(), x.get()).get()), ya);

  ember_module* bad = nullptr;
  auto gn5 = gn;
  gn5.num_groups = 3;  // 2 channels
  EMBER_EXPECT_ERR(ember_module_sequential(nullptr, &gn5, 1, &bad), EMBER_ERR_INVALID_ARGUMENT, "num_groups");
  auto ct_op = ct;
  ct_op.output_padding[0] = 2;
  EMBER_EXPECT_ERR(ember_module_sequential(nullptr, &ct_op, 1, &bad), EMBER_ERR_INVALID_ARGUMENT, "output_padding");
  EXPECT_EQ(bad, nullptr);
  // GroupNorm needs [N, C, *]; a rank-1 input is a shape error, not a crash.
  auto gm = sequential({gn});
  auto v = f32({1, 2}, {2});
  ember_tensor* y = nullptr;
  EMBER_EXPECT_ERR(ember_module_forward(gm.get(), v.get(), EMBER_MODE_EVAL, &y), EMBER_ERR_SHAPE, "group_norm");
}

}  // namespace
}  // namespace ember::capi_test
