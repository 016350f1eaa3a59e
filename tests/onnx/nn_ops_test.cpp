// The nn family's ONNX converters (onnx/ops/nn*.cpp) on hand-made nodes, against PyTorch / NumPy references
// (tests/reference/gen_onnx_nn_reference.py): asymmetric pads, auto_pad, groups, dilations, 1-D / 3-D forms,
// ceil_mode, count_include_pad, MaxPool's Indices, the normalizations' extra outputs, Resize's modes, Dropout,
// and gradients through the composed ops (they must reach the inputs and weights like PyTorch's).
#include <gtest/gtest.h>

#include <cmath>

#include "onnx/ops/numpy_mt19937.hpp"
#include "tests/onnx/onnx_op_test_util.hpp"
#include "tests/reference/onnx_nn_reference.hpp"

namespace ember::onnx_import {
namespace {

namespace ref = ember::test::onnxnnref;
using test::float_attr;
using test::int_attr;
using test::ints_attr;
using test::make_node;
using test::run_op;
using test::string_attr;

TensorData data(const ref::Array& a, DType dt = DType::F32) {
  return TensorData::from_vec<double>(a.data, Shape(a.shape)).convert(dt);
}
TensorData ints(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return TensorData::from_vec<int64_t>(v, Shape{n});
}
TensorData floats(std::vector<double> v) {
  const auto n = static_cast<int64_t>(v.size());
  return TensorData::from_vec<double>(v, Shape{n}).convert(DType::F32);
}

// Same shape, and every value within tol * (1 + |expected|) (f32 arithmetic against f64 references).
void expect_near(const std::optional<TensorData>& got, const ref::Array& want, double tol = 1e-4) {
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->shape, Shape(want.shape));
  const std::vector<double> v = got->to_vec<double>();
  for (std::size_t i = 0; i < v.size(); ++i)
    ASSERT_NEAR(v[i], want.data[i], tol * (1 + std::abs(want.data[i]))) << "element " << i;
}

// The converter on CPU tensors (the float ones requiring grad); then the gradients of sum(out0 * g) for each input.
struct GradRun {
  TensorData y;
  std::vector<std::optional<TensorData>> grads;
};
GradRun run_with_grads(const Node& node, int64_t opset, const std::vector<TensorData>& inputs, const ref::Array& g) {
  const DynDevice& dev = capi::cpu_device();
  OpContext ctx{node, opset, dev, false, {}, nullptr};
  std::vector<DynTensor> leaves;
  for (const TensorData& d : inputs) {
    const DynTensor t = capi::from_data(dev, d);
    leaves.push_back(dtype_is_float(d.dtype) ? capi::set_requires_grad(t, true) : t);
    ctx.inputs.emplace_back(leaves.back());
  }
  const DynTensor y = *op_registry().find(node.op_type, opset)->operator()(ctx).at(0);
  const DynTensor seed = capi::from_data(dev, data(g));
  const capi::DynGrads grads = capi::backward(y, &seed, false, false);
  GradRun out{capi::to_data(y), {}};
  for (const DynTensor& l : leaves) {
    if (!dtype_is_float(capi::dtype(l))) {
      out.grads.emplace_back(std::nullopt);
      continue;
    }
    const auto gr = capi::grad(grads, l);
    out.grads.push_back(gr ? std::optional<TensorData>(capi::to_data(*gr)) : std::nullopt);
  }
  return out;
}

// ---------------------------------------------------------------- Conv
TEST(OnnxNnConv, TwoDWithGroupsDilationsAndAsymmetricPads) {
  const Node n = make_node("Conv", 3, 1,
                           {{"group", int_attr(2)}, {"strides", ints_attr({2, 1})}, {"dilations", ints_attr({1, 2})},
                            {"pads", ints_attr({1, 0, 0, 1})}, {"kernel_shape", ints_attr({3, 2})}});
  expect_near(run_op(n, 13, {data(ref::conv2d_x), data(ref::conv2d_w), data(ref::conv2d_b)})[0], ref::conv2d_y);
}

TEST(OnnxNnConv, OneDSameLowerPutsTheOddPadFirst) {
  const Node n = make_node("Conv", 2, 1, {{"strides", ints_attr({2})}, {"auto_pad", string_attr("SAME_LOWER")}});
  expect_near(run_op(n, 11, {data(ref::conv1d_x), data(ref::conv1d_w)})[0], ref::conv1d_y);
}

TEST(OnnxNnConv, ThreeDForwardAndGradientsMatchTorch) {
  const Node n = make_node("Conv", 3, 1,
                           {{"group", int_attr(2)}, {"strides", ints_attr({2, 1, 2})},
                            {"dilations", ints_attr({1, 1, 2})}, {"pads", ints_attr({1, 1, 0, 0, 1, 1})}});
  const GradRun r = run_with_grads(n, 13, {data(ref::conv3d_x), data(ref::conv3d_w), data(ref::conv3d_b)},
                                   ref::conv3d_g);
  expect_near(r.y, ref::conv3d_y);
  expect_near(r.grads[0], ref::conv3d_dx);
  expect_near(r.grads[1], ref::conv3d_dw);
  expect_near(r.grads[2], ref::conv3d_db);
}

TEST(OnnxNnConv, RejectsAGroupThatDoesNotDivideTheChannels) {
  const Node n = make_node("Conv", 2, 1, {{"group", int_attr(3)}});
  EXPECT_THROW(run_op(n, 13, {data(ref::conv2d_x), data(ref::conv2d_w)}), OnnxError);
}

// ---------------------------------------------------------------- ConvTranspose
TEST(OnnxNnConvTranspose, TwoDPadsAndOutputPaddingWithGradients) {
  const Node n = make_node("ConvTranspose", 3, 1,
                           {{"strides", ints_attr({2, 3})}, {"pads", ints_attr({1, 0, 0, 2})},
                            {"output_padding", ints_attr({1, 2})}});
  const GradRun r = run_with_grads(n, 11, {data(ref::convt2d_x), data(ref::convt2d_w), data(ref::convt2d_b)},
                                   ref::convt2d_g);
  expect_near(r.y, ref::convt2d_y);
  expect_near(r.grads[0], ref::convt2d_dx);
  expect_near(r.grads[1], ref::convt2d_dw);
}

TEST(OnnxNnConvTranspose, OneDOutputShapeBeyondTheFullOutputExtendsTheEnd) {
  const Node n = make_node("ConvTranspose", 3, 1,
                           {{"group", int_attr(2)}, {"strides", ints_attr({2})}, {"output_shape", ints_attr({12})}});
  expect_near(run_op(n, 11, {data(ref::convt1d_x), data(ref::convt1d_w), data(ref::convt1d_b)})[0], ref::convt1d_y);
}

TEST(OnnxNnConvTranspose, ThreeDWithDilationsAndPads) {
  const Node n = make_node("ConvTranspose", 3, 1,
                           {{"strides", ints_attr({2, 1, 2})}, {"dilations", ints_attr({1, 2, 1})},
                            {"pads", ints_attr({0, 1, 0, 1, 0, 0})}});
  expect_near(run_op(n, 11, {data(ref::convt3d_x), data(ref::convt3d_w), data(ref::convt3d_b)})[0], ref::convt3d_y);
}

// ---------------------------------------------------------------- pools
TEST(OnnxNnPool, MaxPoolCeilModeWithFlatIndices) {
  const Node n = make_node("MaxPool", 1, 2,
                           {{"kernel_shape", ints_attr({3, 2})}, {"strides", ints_attr({2, 2})},
                            {"pads", ints_attr({1, 0, 0, 0})}, {"ceil_mode", int_attr(1)}});
  const auto out = run_op(n, 12, {data(ref::maxpool2d_x)});
  expect_near(out[0], ref::maxpool2d_y);
  ASSERT_TRUE(out[1].has_value());
  EXPECT_EQ(out[1]->dtype, DType::I64);
  EXPECT_EQ(out[1]->shape, Shape(ref::maxpool2d_i.shape));
  EXPECT_EQ(out[1]->to_vec<double>(), ref::maxpool2d_i.data);
}

TEST(OnnxNnPool, MaxPoolOneDDilatedAndThreeD) {
  const Node n1 = make_node("MaxPool", 1, 1,
                            {{"kernel_shape", ints_attr({3})}, {"strides", ints_attr({2})},
                             {"dilations", ints_attr({2})}, {"pads", ints_attr({1, 2})}});
  expect_near(run_op(n1, 12, {data(ref::maxpool1d_x)})[0], ref::maxpool1d_y);
  const Node n3 = make_node("MaxPool", 1, 1,
                            {{"kernel_shape", ints_attr({2, 2, 2})}, {"strides", ints_attr({1, 2, 1})},
                             {"pads", ints_attr({1, 0, 0, 0, 1, 1})}});
  expect_near(run_op(n3, 12, {data(ref::avgpool3d_x)})[0], ref::maxpool3d_y);
}

TEST(OnnxNnPool, AveragePoolCountsInputOnlyOrInputAndPadsNeverTheCeilOverhang) {
  std::map<std::string, Attribute, std::less<>> attrs{{"kernel_shape", ints_attr({3, 3})},
                                                      {"strides", ints_attr({2, 2})},
                                                      {"pads", ints_attr({1, 1, 1, 0})},
                                                      {"ceil_mode", int_attr(1)}};
  expect_near(run_op(make_node("AveragePool", 1, 1, attrs), 11, {data(ref::avgpool2d_x)})[0], ref::avgpool2d_y_exclude);
  attrs["count_include_pad"] = int_attr(1);
  expect_near(run_op(make_node("AveragePool", 1, 1, attrs), 11, {data(ref::avgpool2d_x)})[0], ref::avgpool2d_y_include);
}

TEST(OnnxNnPool, AveragePoolThreeD) {
  const Node n = make_node("AveragePool", 1, 1,
                           {{"kernel_shape", ints_attr({2, 3, 2})}, {"strides", ints_attr({2, 2, 1})},
                            {"pads", ints_attr({0, 1, 1, 1, 0, 0})}});
  expect_near(run_op(n, 11, {data(ref::avgpool3d_x)})[0], ref::avgpool3d_y);
}

// Symmetric pads go to the runtime's pools (per stage for 3-D) instead of an explicit pad.
TEST(OnnxNnPool, ThreeDSymmetricPadsCountOnlyTheInput) {
  const std::map<std::string, Attribute, std::less<>> attrs{{"kernel_shape", ints_attr({3, 3, 3})},
                                                            {"strides", ints_attr({2, 2, 1})},
                                                            {"pads", ints_attr({1, 1, 1, 1, 1, 1})}};
  expect_near(run_op(make_node("AveragePool", 1, 1, attrs), 11, {data(ref::avgpool3d_x)})[0], ref::pool3d_sym_avg);
  expect_near(run_op(make_node("MaxPool", 1, 1, attrs), 12, {data(ref::avgpool3d_x)})[0], ref::pool3d_sym_max);
}

TEST(OnnxNnPool, AveragePoolGradientExcludesPadsLikeTorch) {
  const Node n = make_node("AveragePool", 1, 1,
                           {{"kernel_shape", ints_attr({3, 3})}, {"strides", ints_attr({2, 2})},
                            {"pads", ints_attr({1, 1, 1, 1})}});
  const GradRun r = run_with_grads(n, 11, {data(ref::avgpool_grad_x)}, ref::avgpool_grad_g);
  expect_near(r.y, ref::avgpool_grad_y);
  expect_near(r.grads[0], ref::avgpool_grad_dx);
}

TEST(OnnxNnPool, GlobalPoolsAndLpPool) {
  const TensorData x = TensorData::from_vec<float>({1, -2, 3, 4, 0, -5, 6, 2}, Shape{1, 2, 2, 2});
  EXPECT_EQ(run_op(make_node("GlobalAveragePool", 1, 1), 11, {x})[0]->to_vec<float>(), (std::vector<float>{1.5f, 0.75f}));
  EXPECT_EQ(run_op(make_node("GlobalMaxPool", 1, 1), 11, {x})[0]->to_vec<float>(), (std::vector<float>{4, 6}));
  const auto lp = run_op(make_node("GlobalLpPool", 1, 1, {{"p", int_attr(1)}}), 11, {x})[0]->to_vec<float>();
  EXPECT_EQ(lp, (std::vector<float>{10, 13}));
  // LpPool p = 2 over 2x1 windows: sqrt(1 + 9), sqrt(4 + 16), sqrt(0 + 36), sqrt(25 + 4).
  const auto l2 = run_op(make_node("LpPool", 1, 1, {{"kernel_shape", ints_attr({2, 1})}}), 11, {x})[0];
  ASSERT_EQ(l2->shape, (Shape{1, 2, 1, 2}));
  const std::vector<float> v = l2->to_vec<float>();
  const std::vector<float> want{std::sqrt(10.f), std::sqrt(20.f), 6.f, std::sqrt(29.f)};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(v[i], want[i], 1e-5);
}

// Integer tensors come back in the backend's integer type (the executor casts outputs to the declared dtype).
TEST(OnnxNnPool, MaxPoolOfUint8KeepsExactValues) {
  const TensorData x = TensorData::from_vec<uint8_t>({1, 200, 3, 4, 5, 0, 7, 9, 2}, Shape{1, 1, 3, 3});
  const auto y = run_op(make_node("MaxPool", 1, 1, {{"kernel_shape", ints_attr({2, 2})}}), 12, {x})[0];
  EXPECT_FALSE(dtype_is_float(y->dtype));
  EXPECT_EQ(y->to_vec<int>(), (std::vector<int>{200, 200, 9, 9}));
}

// ---------------------------------------------------------------- normalizations
TEST(OnnxNnNorm, BatchNormInferenceAndTrainingMode) {
  const std::vector<std::optional<TensorData>> in{data(ref::bn_x), data(ref::bn_scale), data(ref::bn_bias),
                                                  data(ref::bn_mean), data(ref::bn_var)};
  const Node eval = make_node("BatchNormalization", 5, 1, {{"epsilon", float_attr(1e-3)}});
  expect_near(run_op(eval, 15, in)[0], ref::bn_y);
  const Node train = make_node("BatchNormalization", 5, 3,
                               {{"epsilon", float_attr(1e-3)}, {"momentum", float_attr(0.8)},
                                {"training_mode", int_attr(1)}});
  const auto out = run_op(train, 15, in);
  ASSERT_EQ(out.size(), 3u);
  expect_near(out[0], ref::bn_train_y);
  expect_near(out[1], ref::bn_train_mean);
  expect_near(out[2], ref::bn_train_var);
}

TEST(OnnxNnNorm, LayerNormGivesMeanAndInvStdDev) {
  const Node n = make_node("LayerNormalization", 3, 3, {{"axis", int_attr(1)}});
  const auto out = run_op(n, 17, {data(ref::ln_x), data(ref::ln_scale), data(ref::ln_bias)});
  expect_near(out[0], ref::ln_y);
  expect_near(out[1], ref::ln_mean);
  expect_near(out[2], ref::ln_istd);
}

TEST(OnnxNnNorm, InstanceNormMvnAndEvenSizedLrn) {
  expect_near(run_op(make_node("InstanceNormalization", 3, 1, {{"epsilon", float_attr(1e-4)}}), 6,
                     {data(ref::in_x), data(ref::in_scale), data(ref::in_bias)})[0],
              ref::in_y);
  expect_near(run_op(make_node("MeanVarianceNormalization", 1, 1), 13, {data(ref::mvn_x)})[0], ref::mvn_y);
  const Node lrn = make_node("LRN", 1, 1,
                             {{"size", int_attr(4)}, {"alpha", float_attr(0.3)}, {"beta", float_attr(0.6)},
                              {"bias", float_attr(1.5)}});
  expect_near(run_op(lrn, 13, {data(ref::lrn_x)})[0], ref::lrn_y);
}

// ---------------------------------------------------------------- Gemm, MatMul, Dropout
TEST(OnnxNnLinear, GemmTransposesScalesAndBroadcastsC) {
  const Node n = make_node("Gemm", 3, 1,
                           {{"transA", int_attr(1)}, {"transB", int_attr(1)}, {"alpha", float_attr(0.5)},
                            {"beta", float_attr(2.0)}});
  expect_near(run_op(n, 13, {data(ref::gemm_a), data(ref::gemm_b), data(ref::gemm_c)})[0], ref::gemm_y);
}

// transB with few rows takes the (B A^T)^T form (no weight transpose); its result must be the same.
TEST(OnnxNnLinear, GemmTransBAsPyTorchsLinear) {
  const Node n = make_node("Gemm", 3, 1, {{"transB", int_attr(1)}});
  expect_near(run_op(n, 13, {data(ref::linear_a), data(ref::linear_b), data(ref::linear_c)})[0], ref::linear_y);
  expect_near(run_op(n, 13, {data(ref::linear_a1), data(ref::linear_b), data(ref::linear_c)})[0], ref::linear_y1);
}

TEST(OnnxNnLinear, MatMulWithAOneDOperandAndIntegers) {
  expect_near(run_op(make_node("MatMul", 2, 1), 13, {data(ref::matmul_a), data(ref::matmul_b)})[0], ref::matmul_y);
  const TensorData a = TensorData::from_vec<int32_t>({1, 2, 3, 4}, Shape{2, 2});
  const auto y = run_op(make_node("MatMul", 2, 1), 13, {a, a})[0];
  EXPECT_FALSE(dtype_is_float(y->dtype));
  EXPECT_EQ(y->to_vec<int>(), (std::vector<int>{7, 10, 15, 22}));
}

TEST(OnnxNnLinear, DropoutIsTheIdentityInInferenceAndScalesKeptValuesInTraining) {
  std::vector<double> ones(4000, 1.0);
  const TensorData x = TensorData::from_vec<double>(ones, Shape{4000}).convert(DType::F32);
  const auto eval = run_op(make_node("Dropout", 1, 2), 13, {x});
  EXPECT_EQ(eval[0]->to_vec<float>(), x.to_vec<float>());
  EXPECT_EQ(eval[1]->dtype, DType::Bool);
  EXPECT_EQ(eval[1]->to_vec<int>(), std::vector<int>(4000, 1));
  const TensorData ratio = floats({0.25});
  const TensorData on = TensorData::from_vec<uint8_t>({1}, Shape{}).convert(DType::Bool);
  const auto train = run_op(make_node("Dropout", 3, 2, {{"seed", int_attr(7)}}), 13, {x, ratio, on});
  const std::vector<float> y = train[0]->to_vec<float>();
  const std::vector<int> mask = train[1]->to_vec<int>();
  int kept = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    ASSERT_FLOAT_EQ(y[i], mask[i] ? 1.0f / 0.75f : 0.0f);
    kept += mask[i];
  }
  EXPECT_NEAR(kept / 4000.0, 0.75, 0.03);
}

// NumPy's legacy stream (np.random.seed(s); np.random.uniform(0, 1, n)), values from NumPy 1.24.
TEST(OnnxNnLinear, SeededDropoutDrawsNumpysStream) {
  NumpyMt19937 a(0);
  EXPECT_DOUBLE_EQ(a.uniform(), 0.5488135039273248);
  EXPECT_DOUBLE_EQ(a.uniform(), 0.7151893663724195);
  EXPECT_DOUBLE_EQ(a.uniform(), 0.6027633760716439);
  NumpyMt19937 b(123456789);
  std::vector<double> v(700);
  for (double& x : v) x = b.uniform();
  EXPECT_DOUBLE_EQ(v[0], 0.532833024789759);
  EXPECT_DOUBLE_EQ(v[623], 0.10013367652699212);
  EXPECT_DOUBLE_EQ(v[624], 0.060865803475737335);  // past the first twist
  EXPECT_DOUBLE_EQ(v[699], 0.6986689501375617);
  // seed 0, ratio 0.6: uniforms 0.549, 0.715, 0.603 keep the last two, scaled by 1 / 0.4.
  const TensorData x = TensorData::from_vec<float>({1, 2, 3}, Shape{3});
  const TensorData on = TensorData::from_vec<uint8_t>({1}, Shape{}).convert(DType::Bool);
  const auto out = run_op(make_node("Dropout", 3, 2, {{"seed", int_attr(0)}}), 13, {x, floats({0.6}), on});
  const std::vector<float> y = out[0]->to_vec<float>();
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_FLOAT_EQ(y[1], 5.0f);
  EXPECT_FLOAT_EQ(y[2], 7.5f);
  EXPECT_EQ(out[1]->to_vec<int>(), (std::vector<int>{0, 1, 1}));
}

// ---------------------------------------------------------------- quantized linear ops
TensorData u8(std::vector<uint8_t> v, Shape s) { return TensorData::from_vec<uint8_t>(v, std::move(s)); }

TEST(OnnxNnQuant, QLinearMatMulRoundsHalfToEvenAndSaturates) {
  // (A - 1) = [[1, 2], [3, 5]] times [[0, 0], [1, 3]] = [[2, 6], [5, 15]]; * 0.25 * 0.5 / 0.25 (exact in binary)
  // = [1, 3, 2.5, 7.5] -> round half to even [1, 3, 2, 8].
  const Node n = make_node("QLinearMatMul", 8, 1);
  const auto run = [&](uint8_t y_zp) {
    return run_op(n, 10,
                  {u8({2, 3, 4, 6}, Shape{2, 2}), floats({0.25}), u8({1}, Shape{}), u8({1, 0, 2, 3}, Shape{2, 2}),
                   floats({0.5}), u8({1, 0}, Shape{2}), floats({0.25}), u8({y_zp}, Shape{})})[0]
        ->to_vec<int>();
  };
  EXPECT_EQ(run(10), (std::vector<int>{11, 13, 12, 18}));
  EXPECT_EQ(run(250), (std::vector<int>{251, 253, 252, 255}));
}

TEST(OnnxNnQuant, QLinearConvWithPerChannelWeightScalesAndBias) {
  // ch0: ((x - 10) * (3 - 4) + 2) * 0.5 * 0.5 / 0.25 = [2, -8]; ch1: ((x - 10) * (5 - 4) - 4) * 0.5 * 1 / 0.25.
  const TensorData bias = TensorData::from_vec<int32_t>({2, -4}, Shape{2});
  const auto y = run_op(make_node("QLinearConv", 9, 1), 10,
                        {u8({10, 20}, Shape{1, 1, 1, 2}), floats({0.5}), u8({10}, Shape{}),
                         u8({3, 5}, Shape{2, 1, 1, 1}), floats({0.5, 1.0}), u8({4}, Shape{}), floats({0.25}),
                         u8({100}, Shape{}), bias})[0];
  EXPECT_EQ(y->to_vec<int>(), (std::vector<int>{102, 92, 92, 112}));
}

// ---------------------------------------------------------------- Resize / Upsample
Node resize_node(std::string mode, std::string coord, std::string nearest = "round_prefer_floor") {
  return make_node("Resize", 4, 1,
                   {{"mode", string_attr(std::move(mode))},
                    {"coordinate_transformation_mode", string_attr(std::move(coord))},
                    {"nearest_mode", string_attr(std::move(nearest))}});
}

TEST(OnnxNnResize, LinearCubicAndNearestMatchTorchInterpolate) {
  const TensorData sizes = ints({1, 2, 5, 7});
  expect_near(run_op(resize_node("cubic", "align_corners"), 13, {data(ref::resize_x), std::nullopt, std::nullopt, sizes})[0],
              ref::resize_cubic_y);
  expect_near(run_op(resize_node("nearest", "asymmetric", "floor"), 13,
                     {data(ref::resize_x), std::nullopt, std::nullopt, sizes})[0],
              ref::resize_nearest_y);
  const Node linear = resize_node("linear", "half_pixel");
  std::vector<TensorData> in{data(ref::resize_x)};
  const DynDevice& dev = capi::cpu_device();
  OpContext ctx{linear, 13, dev, false, {}, nullptr};
  const DynTensor x = capi::set_requires_grad(capi::from_data(dev, data(ref::resize_x)), true);
  ctx.inputs = {x, std::nullopt, std::nullopt, capi::from_data(dev, sizes)};
  const DynTensor y = *op_registry().find("Resize", 13)->operator()(ctx).at(0);
  expect_near(capi::to_data(y), ref::resize_linear_y);
  const DynTensor g = capi::from_data(dev, data(ref::resize_linear_g));
  expect_near(capi::to_data(*capi::grad(capi::backward(y, &g, false, false), x)), ref::resize_linear_dx);
}

TEST(OnnxNnResize, ScalesTfCropAndResizeExtrapolatesAndUpsampleRepeats) {
  // A 1x1x1x4 row [0, 1, 2, 3]; roi [.., 0.5 .. 1.5] along W samples x = 1.5, 3.0, 4.5: the last is outside.
  const TensorData x = TensorData::from_vec<float>({0, 1, 2, 3}, Shape{1, 1, 1, 4});
  Node n = resize_node("linear", "tf_crop_and_resize");
  n.attrs["extrapolation_value"] = float_attr(-7.0);
  const TensorData roi = floats({0, 0, 0, 0.5, 1, 1, 1, 1.5});
  const auto y = run_op(n, 11, {x, roi, floats({}), ints({1, 1, 1, 3})})[0];
  EXPECT_EQ(y->to_vec<float>(), (std::vector<float>{1.5f, 3.0f, -7.0f}));
  // Upsample (opset 9) nearest by 2 along W: each value twice.
  const auto up = run_op(make_node("Upsample", 2, 1), 9, {x, floats({1, 1, 1, 2})})[0];
  EXPECT_EQ(up->to_vec<float>(), (std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_THROW(run_op(resize_node("nearest", "sideways"), 13, {x, std::nullopt, floats({1, 1, 1, 2})}), OnnxError);
}

}  // namespace
}  // namespace ember::onnx_import
