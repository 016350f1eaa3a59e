// The math converters (onnx/ops/elementwise*.cpp, onnx/ops/reduce.cpp) on hand-made nodes: golden values from the
// ONNX operator spec's examples and numpy (computed once, written here), small shapes, CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/onnx/onnx_op_test_util.hpp"

namespace ember::onnx_import {
namespace {

using test::float_attr;
using test::int_attr;
using test::ints_attr;
using test::make_node;
using test::run_op;
using test::string_attr;

TensorData f32(std::vector<float> v, Shape s) { return TensorData::from_vec<float>(v, std::move(s)); }
TensorData f32(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return f32(std::move(v), Shape{n});
}
TensorData i64(std::vector<int64_t> v, Shape s) { return TensorData::from_vec<int64_t>(v, std::move(s)); }
TensorData i64(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return i64(std::move(v), Shape{n});
}
TensorData bools(std::vector<uint8_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  TensorData d = TensorData::from_vec<uint8_t>(v, Shape{n});
  d.dtype = DType::Bool;
  return d;
}

// One output of `node` at `opset`.
TensorData run1(const Node& node, int64_t opset, const std::vector<std::optional<TensorData>>& in) {
  auto out = run_op(node, opset, in);
  EXPECT_EQ(out.size(), 1u);
  return *out.at(0);
}

void expect_floats(const TensorData& d, const std::vector<double>& want, const Shape& shape, double tol = 1e-5) {
  EXPECT_EQ(d.shape, shape);
  ASSERT_EQ(d.num_elements(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isinf(want[i]))
      EXPECT_EQ(d.get<double>(i), want[i]) << "element " << i;
    else
      EXPECT_NEAR(d.get<double>(i), want[i], tol * std::max(1.0, std::abs(want[i]))) << "element " << i;
  }
}
void expect_ints(const TensorData& d, const std::vector<int64_t>& want, const Shape& shape) {
  EXPECT_EQ(d.shape, shape);
  EXPECT_FALSE(dtype_is_float(d.dtype)) << dtype_name(d.dtype);
  ASSERT_EQ(d.num_elements(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(d.get<int64_t>(i), want[i]) << "element " << i;
}
void expect_bools(const TensorData& d, const std::vector<int>& want) {
  EXPECT_EQ(d.dtype, DType::Bool);
  ASSERT_EQ(d.num_elements(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(d.get<int64_t>(i), want[i]) << "element " << i;
}

// ---------------------------------------------------------------- unary, binary, variadic

TEST(OnnxMathOps, UnaryMathIncludingComposedTanAndHalfToEvenRound) {
  expect_floats(run1(make_node("Tan", 1, 1), 13, {f32({0.5f, -1.0f})}), {0.54630249, -1.557407725}, Shape{2});
  // The spec's Round example: halves go to the even neighbour.
  expect_floats(run1(make_node("Round", 1, 1), 11, {f32({0.5f, 1.5f, 2.5f, -2.5f, 2.3f, -1.5f})}), {0, 2, 2, -2, 2, -2},
                Shape{6});
  expect_floats(run1(make_node("Reciprocal", 1, 1), 13, {f32({-4.0f, 2.0f})}), {-0.25, 0.5}, Shape{2});
  expect_ints(run1(make_node("Abs", 1, 1), 13, {i64({-3, 0, 4})}), {3, 0, 4}, Shape{3});
  expect_bools(run1(make_node("Not", 1, 1), 1, {bools({1, 0})}), {0, 1});
}

TEST(OnnxMathOps, BinaryArithmeticBroadcasts) {
  expect_floats(run1(make_node("Add", 2, 1), 14, {f32({1, 2, 3, 4, 5, 6}, Shape{2, 3}), f32({10, 20, 30})}),
                {11, 22, 33, 14, 25, 36}, Shape{2, 3});
  expect_floats(run1(make_node("Sub", 2, 1), 14, {f32({1, 2}, Shape{2, 1}), f32({1, 2, 3})}), {0, -1, -2, 1, 0, -1},
                Shape{2, 3});
  expect_ints(run1(make_node("Div", 2, 1), 14, {i64({7, 9}), i64({2, 3})}), {3, 3}, Shape{2});
}

TEST(OnnxMathOps, PowKeepsTheBaseType) {
  // pow_types_int32_float32 of the spec: an int base with a float exponent gives ints.
  expect_ints(run1(make_node("Pow", 2, 1), 15, {i64({1, 2, 3}), f32({4, 5, 6})}), {1, 32, 729}, Shape{3});
  expect_floats(run1(make_node("Pow", 2, 1), 15, {f32({1, 2, 3}), i64({4, 5, 6})}), {1, 32, 729}, Shape{3});
}

TEST(OnnxMathOps, ModFollowsTheDivisorOrWithFmodTheDividend) {
  // The spec's mixed-sign examples.
  const auto a = i64({-4, 7, 5, 4, -7, 8}), b = i64({2, -3, 8, -2, 3, 5});
  expect_ints(run1(make_node("Mod", 2, 1), 13, {a, b}), {0, -2, 5, 0, 2, 3}, Shape{6});
  const auto fa = f32({-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f}), fb = f32({2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f});
  expect_floats(run1(make_node("Mod", 2, 1, {{"fmod", int_attr(1)}}), 13, {fa, fb}), {-0.1, 0.4, 5, 0.1, -0.4, 3},
                Shape{6}, 1e-5);
}

TEST(OnnxMathOps, VariadicMaxMinSumMeanBroadcast) {
  const auto a = f32({3, 2, 1}), b = f32({1, 4, 4}), c = f32({2}, Shape{1});
  expect_floats(run1(make_node("Max", 3, 1), 13, {a, b, c}), {3, 4, 4}, Shape{3});
  expect_floats(run1(make_node("Min", 3, 1), 13, {a, b, c}), {1, 2, 1}, Shape{3});
  expect_floats(run1(make_node("Sum", 3, 1), 13, {a, b, c}), {6, 8, 7}, Shape{3});
  expect_floats(run1(make_node("Mean", 3, 1), 13, {a, b, c}), {2, 8.0 / 3, 7.0 / 3}, Shape{3});
  expect_floats(run1(make_node("Sum", 1, 1), 13, {a}), {3, 2, 1}, Shape{3});
}

TEST(OnnxMathOps, ComparisonsLogicAndClassTests) {
  const auto a = f32({1, 2, 3}), b = f32({2, 2, 2});
  expect_bools(run1(make_node("Less", 2, 1), 13, {a, b}), {1, 0, 0});
  expect_bools(run1(make_node("LessOrEqual", 2, 1), 16, {a, b}), {1, 1, 0});
  expect_bools(run1(make_node("GreaterOrEqual", 2, 1), 16, {a, b}), {0, 1, 1});
  expect_bools(run1(make_node("Equal", 2, 1), 13, {i64({1, 5}), i64({1, 4})}), {1, 0});
  expect_bools(run1(make_node("Xor", 2, 1), 7, {bools({1, 1, 0}), bools({1, 0, 0})}), {0, 1, 0});
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const auto x = f32({-inf, 1, inf, nan});
  expect_bools(run1(make_node("IsNaN", 1, 1), 13, {x}), {0, 0, 0, 1});
  expect_bools(run1(make_node("IsInf", 1, 1), 10, {x}), {1, 0, 1, 0});
  expect_bools(run1(make_node("IsInf", 1, 1, {{"detect_positive", int_attr(0)}}), 10, {x}), {1, 0, 0, 0});
  expect_bools(run1(make_node("IsInf", 1, 1, {{"detect_negative", int_attr(0)}}), 10, {x}), {0, 0, 1, 0});
}

TEST(OnnxMathOps, BitShiftMultipliesOrDividesByPowersOfTwo) {
  expect_ints(
      run1(make_node("BitShift", 2, 1, {{"direction", string_attr("LEFT")}}), 11, {i64({16, 4, 1}), i64({1, 2, 3})}),
      {32, 16, 8}, Shape{3});
  expect_ints(
      run1(make_node("BitShift", 2, 1, {{"direction", string_attr("RIGHT")}}), 11, {i64({16, 4, 1}), i64({1, 2, 3})}),
      {8, 1, 0}, Shape{3});
  EXPECT_THROW(run_op(make_node("BitShift", 2, 1), 11, {i64({1}), i64({1})}), OnnxError);
}

// ---------------------------------------------------------------- activations, Clip

TEST(OnnxMathOps, ActivationsMatchNumpy) {
  const auto x = f32({-2.0f, -0.5f, 0.0f, 1.5f, 30.0f});
  const Shape s{5};
  expect_floats(run1(make_node("Elu", 1, 1, {{"alpha", float_attr(2.0)}}), 6, {x}),
                {-1.729329434, -0.786938681, 0, 1.5, 30}, s);
  expect_floats(run1(make_node("Selu", 1, 1), 6, {x}), {-1.520166473, -0.69175819, 0, 1.576051533, 31.521030664}, s);
  expect_floats(run1(make_node("Celu", 1, 1, {{"alpha", float_attr(2.0)}}), 12, {x}),
                {-1.264241118, -0.442398434, 0, 1.5, 30}, s);
  expect_floats(run1(make_node("HardSigmoid", 1, 1), 6, {x}), {0.1, 0.4, 0.5, 0.8, 1}, s);
  expect_floats(run1(make_node("HardSwish", 1, 1), 14, {x}), {-1.0 / 3, -0.208333333, 0, 1.125, 30}, s);
  expect_floats(run1(make_node("Softplus", 1, 1), 1, {x}), {0.126928011, 0.474076984, 0.693147181, 1.701413278, 30}, s);
  expect_floats(run1(make_node("Softsign", 1, 1), 1, {x}), {-2.0 / 3, -1.0 / 3, 0, 0.6, 30.0 / 31}, s);
  expect_floats(run1(make_node("Mish", 1, 1), 18, {x}), {-0.252501483, -0.220743775, 0, 1.403378266, 30}, s);
  expect_floats(run1(make_node("LeakyRelu", 1, 1, {{"alpha", float_attr(0.1)}}), 6, {x}), {-0.2, -0.05, 0, 1.5, 30}, s);
  expect_floats(run1(make_node("ThresholdedRelu", 1, 1, {{"alpha", float_attr(1.5)}}), 10, {x}), {0, 0, 0, 0, 30}, s);
  expect_floats(run1(make_node("Shrink", 1, 1, {{"lambd", float_attr(1.0)}, {"bias", float_attr(0.5)}}), 9, {x}),
                {-1.5, 0, 0, 1.0, 29.5}, s);
  expect_ints(run1(make_node("Relu", 1, 1), 14, {i64({-3, 2})}), {0, 2}, Shape{2});
}

TEST(OnnxMathOps, PReluSlopeBroadcastsPerChannel) {
  const auto x = f32({-1, 2, -3, 4}, Shape{2, 2}), slope = f32({0.5f, 0.25f});
  expect_floats(run1(make_node("PRelu", 2, 1), 16, {x, slope}), {-0.5, 2, -1.5, 4}, Shape{2, 2});
  // Opset 6: a 1-D slope is per channel (dim 1), not NumPy-aligned to the last dim.
  const auto x3 = f32({-1, -1, -1, -1}, Shape{1, 2, 2});
  expect_floats(run1(make_node("PRelu", 2, 1), 6, {x3, slope}), {-0.5, -0.5, -0.25, -0.25}, Shape{1, 2, 2});
  expect_floats(run1(make_node("PRelu", 2, 1), 9, {x3, slope}), {-0.5, -0.25, -0.5, -0.25}, Shape{1, 2, 2});
}

TEST(OnnxMathOps, ClipBoundsAreAttributesThenOptionalInputs) {
  const auto x = f32({-2, 0, 3});
  expect_floats(run1(make_node("Clip", 1, 1, {{"min", float_attr(-1.0)}, {"max", float_attr(1.0)}}), 6, {x}),
                {-1, 0, 1}, Shape{3});
  expect_floats(run1(make_node("Clip", 3, 1), 13, {x, std::nullopt, f32({2}, Shape{})}), {-2, 0, 2}, Shape{3});
  expect_floats(run1(make_node("Clip", 2, 1), 13, {x, f32({-0.5f}, Shape{})}), {-0.5, 0, 3}, Shape{3});
  expect_ints(run1(make_node("Clip", 3, 1), 13, {i64({-5, 5}), i64({-1}, Shape{}), i64({1}, Shape{})}), {-1, 1},
              Shape{2});
}

// ---------------------------------------------------------------- Cast, Where, Softmax family, CumSum, Einsum

TEST(OnnxMathOps, CastTruncatesAndNamesUnsupportedTypes) {
  const auto x = f32({-1.7f, 2.9f, 0.0f});
  expect_ints(run1(make_node("Cast", 1, 1, {{"to", int_attr(6)}}), 13, {x}), {-1, 2, 0}, Shape{3});
  expect_bools(run1(make_node("Cast", 1, 1, {{"to", int_attr(9)}}), 13, {x}), {1, 1, 0});
  const TensorData d = run1(make_node("Cast", 1, 1, {{"to", int_attr(11)}}), 13, {x});
  EXPECT_EQ(d.dtype, DType::F64);
  expect_floats(run1(make_node("CastLike", 2, 1), 15, {i64({3, -2}), f32({0})}), {3, -2}, Shape{2});
  try {
    run_op(make_node("Cast", 1, 1, {{"to", int_attr(16)}}), 13, {x});
    FAIL() << "bfloat16 was accepted";
  } catch (const UnsupportedDTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("bfloat16"), std::string::npos) << e.what();
  }
}

TEST(OnnxMathOps, WhereBroadcastsConditionAndBranches) {
  TensorData cond = TensorData::from_vec<uint8_t>({1, 0}, Shape{2, 1});
  cond.dtype = DType::Bool;
  expect_floats(run1(make_node("Where", 3, 1), 16, {cond, f32({1, 2, 3}), f32({9}, Shape{})}), {1, 2, 3, 9, 9, 9},
                Shape{2, 3});
}

TEST(OnnxMathOps, SoftmaxFlattensBeforeOpset13) {
  const auto x = f32({1, 2, 3, 4, 5, 6}, Shape{1, 2, 3});
  const Node n = make_node("Softmax", 1, 1, {{"axis", int_attr(1)}});
  expect_floats(run1(n, 13, {x}), {0.047425873, 0.047425873, 0.047425873, 0.952574127, 0.952574127, 0.952574127},
                Shape{1, 2, 3});
  expect_floats(run1(n, 11, {x}), {0.004269779, 0.011606461, 0.031549633, 0.085760795, 0.23312201, 0.633691323},
                Shape{1, 2, 3});
  const TensorData ls = run1(make_node("LogSoftmax", 1, 1), 13, {f32({1, 2, 3, 4, 5, 6}, Shape{2, 3})});
  expect_floats(ls,
                {1 - 3.407605964, 2 - 3.407605964, 3 - 3.407605964, 4 - 6.407605964, 5 - 6.407605964, 6 - 6.407605964},
                Shape{2, 3});
}

TEST(OnnxMathOps, HardmaxMarksTheFirstMaximum) {
  const auto x = f32({3, 1, 3, 0, 5, 2}, Shape{2, 3});
  expect_floats(run1(make_node("Hardmax", 1, 1), 13, {x}), {1, 0, 0, 0, 1, 0}, Shape{2, 3});
  expect_floats(run1(make_node("Hardmax", 1, 1, {{"axis", int_attr(0)}}), 13, {x}), {1, 0, 1, 0, 1, 0}, Shape{2, 3});
}

TEST(OnnxMathOps, CumSumExclusiveAndReverse) {
  const auto x = f32({1, 2, 3, 4, 5}), axis = i64({0}, Shape{});
  expect_floats(run1(make_node("CumSum", 2, 1), 14, {x, axis}), {1, 3, 6, 10, 15}, Shape{5});
  expect_floats(run1(make_node("CumSum", 2, 1, {{"exclusive", int_attr(1)}}), 14, {x, axis}), {0, 1, 3, 6, 10},
                Shape{5});
  expect_floats(run1(make_node("CumSum", 2, 1, {{"reverse", int_attr(1)}}), 14, {x, axis}), {15, 14, 12, 9, 5},
                Shape{5});
  expect_floats(run1(make_node("CumSum", 2, 1, {{"reverse", int_attr(1)}, {"exclusive", int_attr(1)}}), 14, {x, axis}),
                {14, 12, 9, 5, 0}, Shape{5});
  expect_ints(run1(make_node("CumSum", 2, 1), 14, {i64({1, 2, 3, 4}, Shape{2, 2}), i64({-1}, Shape{})}), {1, 3, 3, 7},
              Shape{2, 2});
}

TEST(OnnxMathOps, EinsumIgnoresSpaces) {
  const auto a = f32({1, 2, 3, 4}, Shape{2, 2}), b = f32({5, 6, 7, 8}, Shape{2, 2});
  Attribute eq;
  eq.type = Attribute::Type::String;
  eq.s = "ij, jk -> ik";
  expect_floats(run1(make_node("Einsum", 2, 1, {{"equation", eq}}), 12, {a, b}), {19, 22, 43, 50}, Shape{2, 2});
}

// ---------------------------------------------------------------- reductions

TEST(OnnxMathOps, ReduceSumAxesAttributeThenInput) {
  const auto x = f32({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  expect_floats(run1(make_node("ReduceSum", 1, 1, {{"axes", ints_attr({1})}, {"keepdims", int_attr(0)}}), 11, {x}),
                {6, 15}, Shape{2});
  expect_floats(run1(make_node("ReduceSum", 2, 1), 13, {x, i64({-2})}), {5, 7, 9}, Shape{1, 3});
  expect_floats(run1(make_node("ReduceSum", 1, 1, {{"keepdims", int_attr(0)}}), 13, {x}), {21}, Shape{});
  expect_floats(run1(make_node("ReduceSum", 2, 1, {{"noop_with_empty_axes", int_attr(1)}}), 13, {x, i64({})}),
                {1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_THROW(run_op(make_node("ReduceSum", 2, 1), 13, {x, i64({0, -2})}), OnnxError);  // an axis twice
}

TEST(OnnxMathOps, ReduceFamilyOverSeveralAxes) {
  const auto x = f32({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const auto node = [](const char* op, std::vector<int64_t> axes, int64_t keep) {
    return make_node(op, 1, 1, {{"axes", ints_attr(std::move(axes))}, {"keepdims", int_attr(keep)}});
  };
  expect_floats(run1(node("ReduceMean", {0, 1}, 1), 13, {x}), {3.5}, Shape{1, 1});
  expect_floats(run1(node("ReduceMax", {-1}, 0), 13, {x}), {3, 6}, Shape{2});
  expect_floats(run1(node("ReduceMin", {0}, 0), 13, {x}), {1, 2, 3}, Shape{3});
  expect_floats(run1(node("ReduceProd", {1}, 0), 13, {x}), {6, 120}, Shape{2});
  expect_floats(run1(node("ReduceL1", {1}, 0), 13, {f32({-1, 2, -3, 4, -5, 6}, Shape{2, 3})}), {6, 15}, Shape{2});
  expect_floats(run1(node("ReduceL2", {0}, 0), 13, {x}), {4.123105626, 5.385164807, 6.708203932}, Shape{3});
  expect_floats(run1(node("ReduceSumSquare", {1}, 1), 13, {x}), {14, 77}, Shape{2, 1});
  expect_floats(run1(node("ReduceLogSum", {0, 1}, 0), 13, {x}), {3.044522437723423}, Shape{});
  expect_floats(run1(node("ReduceLogSumExp", {1}, 0), 13, {x}), {3.407605964, 6.407605964}, Shape{2});
  // Large values: the max shift keeps it finite.
  expect_floats(run1(node("ReduceLogSumExp", {0}, 0), 13, {f32({1000, 1000})}), {1000.693147181}, Shape{});
}

TEST(OnnxMathOps, ArgMaxArgMinKeepdimsAndLastIndex) {
  const auto x = f32({2, 5, 5, 1, 1, 0}, Shape{2, 3});
  expect_ints(run1(make_node("ArgMax", 1, 1, {{"axis", int_attr(1)}}), 13, {x}), {1, 0}, Shape{2, 1});
  expect_ints(run1(make_node("ArgMax", 1, 1,
                             {{"axis", int_attr(-1)}, {"keepdims", int_attr(0)}, {"select_last_index", int_attr(1)}}),
                   13, {x}),
              {2, 1}, Shape{2});
  expect_ints(run1(make_node("ArgMin", 1, 1, {{"keepdims", int_attr(0)}}), 13, {x}), {1, 1, 1}, Shape{3});
  expect_ints(run1(make_node("ArgMin", 1, 1, {{"axis", int_attr(1)}, {"select_last_index", int_attr(1)}}), 13, {x}),
              {0, 2}, Shape{2, 1});
}

// ---------------------------------------------------------------- losses, windows

TEST(OnnxMathOps, SoftmaxCrossEntropyWeightsAndIgnoresLikeTorch) {
  // Golden values: torch.nn.functional.cross_entropy / nll_loss / log_softmax in float64.
  const TensorData x = TensorData::from_vec<double>({0.1, 0.5, -1.0, 2.0, 0.3, 0.0}, Shape{2, 3});
  const TensorData w = TensorData::from_vec<double>({0.2, 0.3, 0.5}, Shape{3});
  const Node mean_ii = make_node("SoftmaxCrossEntropyLoss", 3, 2, {{"ignore_index", int_attr(-1)}});
  const auto out = run_op(mean_ii, 13, {x, i64({2, -1}), w});
  ASSERT_EQ(out.size(), 2u);
  expect_floats(*out[0], {2.138400670778164}, Shape{}, 1e-9);
  expect_floats(*out[1], {-1.038400671, -0.638400671, -2.138400671, -0.276129706, -1.976129706, -2.276129706},
                Shape{2, 3});
  expect_floats(
      run1(make_node("SoftmaxCrossEntropyLoss", 2, 1, {{"reduction", string_attr("none")}}), 13, {x, i64({2, 0})}),
      {2.138400671, 0.276129706}, Shape{2});
  const Node nll_sum = make_node("NegativeLogLikelihoodLoss", 2, 1, {{"reduction", string_attr("sum")}});
  expect_floats(run1(nll_sum, 13, {x, i64({1, 0})}), {-2.5}, Shape{});
  expect_floats(run1(make_node("NegativeLogLikelihoodLoss", 3, 1), 13, {x, i64({1, 0}), w}), {-1.1}, Shape{});
  EXPECT_THROW(run_op(nll_sum, 13, {x, i64({1, 0, 2})}), OnnxError);  // target's N differs
}

TEST(OnnxMathOps, CosineWindowsPeriodicAndSymmetric) {
  expect_floats(run1(make_node("HannWindow", 1, 1), 17, {i64({5}, Shape{})}),
                {0.0, 0.3454915028125263, 0.9045084971874737, 0.9045084971874737, 0.3454915028125264}, Shape{5});
  expect_floats(run1(make_node("BlackmanWindow", 1, 1, {{"periodic", int_attr(0)}}), 17, {i64({4}, Shape{})}),
                {0, 0.63, 0.63, 0}, Shape{4});
}

TEST(OnnxMathOps, DetPivotsAndBatches) {
  expect_floats(run1(make_node("Det", 1, 1), 11, {f32({1, 2, 3, 4}, Shape{2, 2})}), {-2}, Shape{});
  // A zero in the first pivot position needs a row swap (cofactor expansion gives -2).
  expect_floats(run1(make_node("Det", 1, 1), 11, {f32({0, 1, 2, 1, 0, 3, 4, -3, 8}, Shape{3, 3})}), {-2}, Shape{});
  // A batch with a singular matrix.
  expect_floats(run1(make_node("Det", 1, 1), 11, {f32({1, 2, 2, 4, 2, 0, 0, 3}, Shape{2, 2, 2})}), {0, 6}, Shape{2});
}

TEST(OnnxMathOps, DftOfRealAndComplexSignalsAndItsInverse) {
  // numpy.fft.fft([1, 2, 3, 4]) = [10, -2+2j, -2, -2-2j].
  const std::vector<double> spectrum{10, 0, -2, 2, -2, 0, -2, -2};
  expect_floats(run1(make_node("DFT", 1, 1), 17, {f32({1, 2, 3, 4}, Shape{1, 4, 1})}), spectrum, Shape{1, 4, 2});
  expect_floats(run1(make_node("DFT", 1, 1, {{"onesided", int_attr(1)}}), 17, {f32({1, 2, 3, 4}, Shape{1, 4, 1})}),
                {10, 0, -2, 2, -2, 0}, Shape{1, 3, 2});
  const auto spec = f32({10, 0, -2, 2, -2, 0, -2, -2}, Shape{1, 4, 2});
  expect_floats(run1(make_node("DFT", 1, 1, {{"inverse", int_attr(1)}}), 17, {spec}), {1, 0, 2, 0, 3, 0, 4, 0},
                Shape{1, 4, 2});
}

TEST(OnnxMathOps, StftFramesWindowsAndTransforms) {
  // Frames [1, 2, 3, 4] and [3, 4, 5, 6] (step 2, length 4), one-sided: [10, -2+2j, -2] and [18, -2+2j, -2].
  const auto signal = f32({1, 2, 3, 4, 5, 6}, Shape{1, 6, 1});
  const auto out = run1(make_node("STFT", 4, 1), 17, {signal, i64({2}, Shape{}), std::nullopt, i64({4}, Shape{})});
  expect_floats(out, {10, 0, -2, 2, -2, 0, 18, 0, -2, 2, -2, 0}, Shape{1, 2, 3, 2});
  // A window of [0, 1, 1, 0] keeps the middle samples: [5, -3-2j, 1] and [9, -5-4j, 1].
  const auto windowed = run1(make_node("STFT", 3, 1), 17, {signal, i64({2}, Shape{}), f32({0, 1, 1, 0})});
  expect_floats(windowed, {5, 0, -3, -2, 1, 0, 9, 0, -5, -4, 1, 0}, Shape{1, 2, 3, 2});
}

TEST(OnnxMathOps, GridSampleInterpolatesAndPadsLikeTorch) {
  // torch.nn.functional.grid_sample of [[1, 2], [3, 4]] at (0, 0), (-1, -1), (1.4, -0.3).
  const auto x = f32({1, 2, 3, 4}, Shape{1, 1, 2, 2}), grid = f32({0, 0, -1, -1, 1.4f, -0.3f}, Shape{1, 1, 3, 2});
  const auto node = [](const char* mode, const char* padding, int64_t align) {
    return make_node(
        "GridSample", 2, 1,
        {{"mode", string_attr(mode)}, {"padding_mode", string_attr(padding)}, {"align_corners", int_attr(align)}});
  };
  const Shape s{1, 1, 1, 3};
  expect_floats(run1(node("bilinear", "zeros", 0), 16, {x, grid}), {2.5, 0.25, 0.24}, s);
  expect_floats(run1(node("bilinear", "border", 1), 16, {x, grid}), {2.5, 1.0, 2.7}, s);
  expect_floats(run1(node("bilinear", "reflection", 1), 16, {x, grid}), {2.5, 1.0, 2.5}, s);
  expect_floats(run1(node("bilinear", "reflection", 0), 16, {x, grid}), {2.5, 1.0, 2.4}, s);
  expect_floats(run1(node("nearest", "zeros", 0), 16, {x, grid}), {1, 1, 0}, s);
  expect_floats(run1(node("bicubic", "zeros", 0), 16, {x, grid}), {3.525390625, 0.109375, 0.22403948}, s);
  expect_floats(run1(node("bicubic", "border", 1), 16, {x, grid}), {2.5, 1.0, 2.76187706}, s);
  EXPECT_THROW(run_op(node("cubic", "zeros", 0), 16, {x, grid}), OnnxError);
}

TEST(OnnxMathOps, NonMaxSuppressionKeepsTheBestOfOverlappingBoxes) {
  // The ONNX spec's suppress_by_IOU example: boxes 0-2 overlap, 3-4 overlap, 5 stands alone.
  const auto boxes =
      f32({0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101},
          Shape{1, 6, 4});
  const auto scores = f32({0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f}, Shape{1, 1, 6});
  const Node n = make_node("NonMaxSuppression", 5, 1);
  expect_ints(run1(n, 11, {boxes, scores, i64({3}), f32({0.5f}), f32({0})}), {0, 0, 3, 0, 0, 0, 0, 0, 5}, Shape{3, 3});
  // A score threshold drops box 5; max_output 0 (the default) selects nothing.
  expect_ints(run1(n, 11, {boxes, scores, i64({3}), f32({0.5f}), f32({0.4f})}), {0, 0, 3, 0, 0, 0}, Shape{2, 3});
  expect_ints(run1(make_node("NonMaxSuppression", 2, 1), 11, {boxes, scores}), {}, Shape{0, 3});
}

TEST(OnnxMathOps, MaxUnpoolScattersAtFlatIndices) {
  // The spec's example: pooled [[6, 8], [14, 16]] at flat indices 5, 7, 13, 15 of a 4 x 4 output.
  const auto x = f32({6, 8, 14, 16}, Shape{1, 1, 2, 2});
  const auto idx = i64({5, 7, 13, 15}, Shape{1, 1, 2, 2});
  const Node n = make_node("MaxUnpool", 2, 1, {{"kernel_shape", ints_attr({2, 2})}, {"strides", ints_attr({2, 2})}});
  expect_floats(run1(n, 11, {x, idx}), {0, 0, 0, 0, 0, 6, 0, 8, 0, 0, 0, 0, 0, 14, 0, 16}, Shape{1, 1, 4, 4});
  const Node with_shape =
      make_node("MaxUnpool", 3, 1, {{"kernel_shape", ints_attr({2, 2})}, {"strides", ints_attr({2, 2})}});
  const TensorData y = run1(with_shape, 11, {x, idx, i64({1, 1, 5, 5})});
  EXPECT_EQ(y.shape, (Shape{1, 1, 5, 5}));
  expect_floats(y, {0, 0, 0, 0, 0, 0, 6, 0, 8, 0, 0, 0, 0, 0, 0, 0, 14, 0, 16, 0, 0, 0, 0, 0, 0}, Shape{1, 1, 5, 5});
}

// ---------------------------------------------------------------- uint8 quantization

TensorData u8(std::vector<uint8_t> v, Shape s) { return TensorData::from_vec<uint8_t>(v, std::move(s)); }

TEST(OnnxMathOps, QuantizeSaturatesAndRoundsHalfToEvenPerAxis) {
  // x / 2 + 128: 1 / 2 = 0.5 rounds to 0, 3 / 2 = 1.5 to 2; -300 and 300 saturate.
  const auto x = f32({1, 3, -300, 300});
  expect_ints(run1(make_node("QuantizeLinear", 3, 1), 13, {x, f32({2}, Shape{}), u8({128}, Shape{})}),
              {128, 130, 0, 255}, Shape{4});
  // Per channel (axis 1) of [1, 2, 2]: scales 1 and 10, zero points 0 and 5.
  const auto x3 = f32({4, 5, 40, 50}, Shape{1, 2, 2});
  expect_ints(run1(make_node("QuantizeLinear", 3, 1), 13, {x3, f32({1, 10}), u8({0, 5}, Shape{2})}), {4, 5, 9, 10},
              Shape{1, 2, 2});
  expect_floats(run1(make_node("DequantizeLinear", 3, 1), 13,
                     {u8({4, 5, 9, 10}, Shape{1, 2, 2}), f32({1, 10}), u8({0, 5}, Shape{2})}),
                {4, 5, 40, 50}, Shape{1, 2, 2});
}

TEST(OnnxMathOps, DynamicQuantizeLinearMatchesTheSpecFormula) {
  // numpy: scale = (max(0, max x) - min(0, min x)) / 255, zp = clip(round(-min / scale)), y = clip(round(x / s) + zp).
  const auto out = run_op(make_node("DynamicQuantizeLinear", 1, 3), 11, {f32({0, 2, -3, -2.5f, 1.34f, 0.5f})});
  ASSERT_EQ(out.size(), 3u);
  expect_ints(*out[0], {153, 255, 0, 26, 221, 179}, Shape{6});
  expect_floats(*out[1], {0.019607844}, Shape{});
  expect_ints(*out[2], {153}, Shape{});
}

TEST(OnnxMathOps, MatMulIntegerSubtractsRowAndColumnZeroPoints) {
  const auto a = u8({11, 7, 3, 10, 6, 2}, Shape{2, 3}), b = u8({1, 4, 2, 5, 3, 6}, Shape{3, 2});
  // (a - [[1], [2]]) @ (b - [1, 2]) = [[10,6,2],[8,4,0]] @ [[0,2],[1,3],[2,4]]
  expect_ints(run1(make_node("MatMulInteger", 4, 1), 10, {a, b, u8({1, 2}, Shape{2}), u8({1, 2}, Shape{2})}),
              {10, 46, 4, 28}, Shape{2, 2});
}

TEST(OnnxMathOps, ConvIntegerSubtractsTheZeroPointAndPads) {
  // ONNX's ConvInteger example: x = 2..10 as [1, 1, 3, 3], x_zero_point 1, w = ones [1, 1, 2, 2].
  const auto x = u8({2, 3, 4, 5, 6, 7, 8, 9, 10}, Shape{1, 1, 3, 3}), w = u8({1, 1, 1, 1}, Shape{1, 1, 2, 2});
  expect_ints(run1(make_node("ConvInteger", 3, 1), 10, {x, w, u8({1}, Shape{})}), {12, 16, 24, 28}, Shape{1, 1, 2, 2});
  const TensorData padded =
      run1(make_node("ConvInteger", 3, 1, {{"pads", ints_attr({1, 1, 1, 1})}}), 10, {x, w, u8({1}, Shape{})});
  expect_ints(padded, {1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9}, Shape{1, 1, 4, 4});
}

// ---------------------------------------------------------------- gradients

// The converters record autodiff like any runtime op: d/dx sum(Elu(x)) is 1 above 0 and exp(x) below, and stays
// finite where exp(x) alone would overflow (the unused branch is exp(min(x, 0))).
TEST(OnnxMathOps, GradientsFlowThroughComposedActivations) {
  const Node n = make_node("Elu", 1, 1);
  OpContext ctx{n, 13, capi::cpu_device(), true, {}, nullptr};
  const DynTensor x = capi::set_requires_grad(capi::from_data(capi::cpu_device(), f32({-1.0f, 2.0f, 100.0f})), true);
  ctx.inputs.emplace_back(x);
  const DynTensor y = *(*op_registry().find("Elu", 13))(ctx).at(0);
  const auto g = capi::backward(capi::reduce_all(y, ReduceOp::Sum), nullptr, false, false);
  const auto gx = capi::grad(g, x);
  ASSERT_TRUE(gx.has_value());
  expect_floats(capi::to_data(*gx), {std::exp(-1.0), 1, 1}, Shape{3});
}

// GridSample's taps are gathers weighted by the fractional parts: sampling the centre of a 2 x 2 image weighs each
// pixel 1/4, which is d/dX of the sum.
TEST(OnnxMathOps, GradientsReachGridSampleInput) {
  const Node n = make_node("GridSample", 2, 1);
  OpContext ctx{n, 16, capi::cpu_device(), true, {}, nullptr};
  const DynTensor x =
      capi::set_requires_grad(capi::from_data(capi::cpu_device(), f32({1, 2, 3, 4}, Shape{1, 1, 2, 2})), true);
  ctx.inputs.emplace_back(x);
  ctx.inputs.emplace_back(capi::from_data(capi::cpu_device(), f32({0, 0}, Shape{1, 1, 1, 2})));
  const DynTensor y = *(*op_registry().find("GridSample", 16))(ctx).at(0);
  const auto g = capi::backward(capi::reduce_all(y, ReduceOp::Sum), nullptr, false, false);
  const auto gx = capi::grad(g, x);
  ASSERT_TRUE(gx.has_value());
  expect_floats(capi::to_data(*gx), {0.25, 0.25, 0.25, 0.25}, Shape{1, 1, 2, 2});
}

}  // namespace
}  // namespace ember::onnx_import
