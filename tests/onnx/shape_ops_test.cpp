// The shape family's converters (onnx/ops/shape*.cpp) on hand-made nodes: values from the ONNX operator spec's
// examples and numpy, small shapes, per opset where the operator changed; and gradients through gathers, scatters
// and slices reaching the data (and the updates).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/onnx/onnx_op_test_util.hpp"

namespace ember::onnx_import {
namespace {

using test::float_attr;
using test::int_attr;
using test::ints_attr;
using test::make_node;
using test::run_op;
using test::string_attr;

TensorData F(std::vector<float> v, Shape s) { return TensorData::from_vec<float>(v, std::move(s)); }
TensorData I(std::vector<int64_t> v, Shape s) { return TensorData::from_vec<int64_t>(v, std::move(s)); }
// 0, 1, 2, ... as float32 of `s`.
TensorData iota(Shape s) {
  std::vector<float> v(static_cast<std::size_t>(s.num_elements()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return F(v, std::move(s));
}
std::vector<double> values(const TensorData& d) { return d.to_vec<double>(); }
std::vector<double> D(std::vector<double> v) { return v; }

void expect_tensor(const std::optional<TensorData>& got, const Shape& shape, const std::vector<double>& want) {
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->shape, shape) << got->shape.to_string();
  EXPECT_EQ(values(*got), want);
}

// ---------------------------------------------------------------- layout
TEST(OnnxShapeOps, ReshapeCopiesZerosInfersMinusOneAndHonoursAllowzero) {
  const Node n = make_node("Reshape", 2, 1);
  auto y = run_op(n, 14, {iota(Shape{2, 3, 4}), I({0, -1, 2}, Shape{3})});
  expect_tensor(y[0], Shape{2, 6, 2}, values(iota(Shape{24})));
  // allowzero: a 0 is a real zero-size dim (an empty input reshapes to [0, 3]).
  const Node nz = make_node("Reshape", 2, 1, {{"allowzero", int_attr(1)}});
  y = run_op(nz, 14, {F({}, Shape{3, 0}), I({0, 3}, Shape{2})});
  expect_tensor(y[0], Shape{0, 3}, {});
  EXPECT_THROW(run_op(n, 14, {iota(Shape{2, 3}), I({4, -1, -1}, Shape{3})}), OnnxError);
  EXPECT_THROW(run_op(n, 14, {iota(Shape{2, 3}), I({4, 2}, Shape{2})}), OnnxError);
}

TEST(OnnxShapeOps, TransposeDefaultsToReversedDims) {
  auto y = run_op(make_node("Transpose", 1, 1), 13, {iota(Shape{2, 3})});
  expect_tensor(y[0], Shape{3, 2}, {0, 3, 1, 4, 2, 5});
  y = run_op(make_node("Transpose", 1, 1, {{"perm", ints_attr({1, 0, 2})}}), 13, {iota(Shape{2, 2, 1})});
  expect_tensor(y[0], Shape{2, 2, 1}, {0, 2, 1, 3});
}

TEST(OnnxShapeOps, ConcatAndSplitAlongNegativeAxes) {
  auto y = run_op(make_node("Concat", 2, 1, {{"axis", int_attr(-1)}}), 13,
                  {iota(Shape{2, 1}), F({7, 8, 9, 10}, Shape{2, 2})});
  expect_tensor(y[0], Shape{2, 3}, {0, 7, 8, 1, 9, 10});
  // Split: sizes as an input (opset 13) or an attribute (opset 11), or equal parts.
  y = run_op(make_node("Split", 2, 2, {{"axis", int_attr(-1)}}), 13, {iota(Shape{2, 3}), I({1, 2}, Shape{2})});
  expect_tensor(y[0], Shape{2, 1}, {0, 3});
  expect_tensor(y[1], Shape{2, 2}, {1, 2, 4, 5});
  y = run_op(make_node("Split", 1, 2, {{"split", ints_attr({2, 1})}}), 11, {iota(Shape{3})});
  expect_tensor(y[0], Shape{2}, {0, 1});
  expect_tensor(y[1], Shape{1}, {2});
  y = run_op(make_node("Split", 1, 3), 13, {iota(Shape{6})});
  expect_tensor(y[2], Shape{2}, {4, 5});
  EXPECT_THROW(run_op(make_node("Split", 1, 4), 13, {iota(Shape{6})}), OnnxError);
}

TEST(OnnxShapeOps, SqueezeUnsqueezeFlattenAxesByOpset) {
  auto y = run_op(make_node("Squeeze", 2, 1), 13, {iota(Shape{1, 3, 1}), I({-1}, Shape{1})});
  expect_tensor(y[0], Shape{1, 3}, {0, 1, 2});
  y = run_op(make_node("Squeeze", 1, 1), 13, {iota(Shape{1, 3, 1})});  // no axes: every 1
  expect_tensor(y[0], Shape{3}, {0, 1, 2});
  y = run_op(make_node("Squeeze", 1, 1, {{"axes", ints_attr({0})}}), 11, {iota(Shape{1, 3, 1})});
  expect_tensor(y[0], Shape{3, 1}, {0, 1, 2});
  EXPECT_THROW(run_op(make_node("Squeeze", 2, 1), 13, {iota(Shape{1, 3}), I({1}, Shape{1})}), OnnxError);
  y = run_op(make_node("Unsqueeze", 2, 1), 13, {iota(Shape{3, 2}), I({3, 0}, Shape{2})});  // unsorted axes
  expect_tensor(y[0], Shape{1, 3, 2, 1}, values(iota(Shape{6})));
  y = run_op(make_node("Unsqueeze", 1, 1, {{"axes", ints_attr({-1})}}), 11, {iota(Shape{2})});
  expect_tensor(y[0], Shape{2, 1}, {0, 1});
  y = run_op(make_node("Flatten", 1, 1, {{"axis", int_attr(-2)}}), 13, {iota(Shape{2, 3, 4})});
  expect_tensor(y[0], Shape{2, 12}, values(iota(Shape{24})));
  y = run_op(make_node("Flatten", 1, 1, {{"axis", int_attr(0)}}), 13, {iota(Shape{2, 3})});
  expect_tensor(y[0], Shape{1, 6}, values(iota(Shape{6})));
}

TEST(OnnxShapeOps, ExpandBroadcastsBothWaysAndTileRepeats) {
  // Expand's shape [2, 1, 6] with input [3, 1]: the input's 3 survives the 1 (bidirectional broadcast).
  auto y = run_op(make_node("Expand", 2, 1), 13, {F({1, 2, 3}, Shape{3, 1}), I({2, 1, 2}, Shape{3})});
  expect_tensor(y[0], Shape{2, 3, 2}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  y = run_op(make_node("Tile", 2, 1), 13, {iota(Shape{2, 2}), I({1, 2}, Shape{2})});
  expect_tensor(y[0], Shape{2, 4}, {0, 1, 0, 1, 2, 3, 2, 3});
}

TEST(OnnxShapeOps, DepthToSpaceModesAndSpaceToDepthInvertIt) {
  // The spec's examples: x = arange(16).reshape(1, 4, 2, 2), blocksize 2.
  const auto dcr = run_op(make_node("DepthToSpace", 1, 1, {{"blocksize", int_attr(2)}}), 13, {iota(Shape{1, 4, 2, 2})});
  expect_tensor(dcr[0], Shape{1, 1, 4, 4}, {0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15});
  const auto crd = run_op(make_node("DepthToSpace", 1, 1, {{"blocksize", int_attr(2)}, {"mode", string_attr("CRD")}}),
                          13, {iota(Shape{1, 4, 2, 2})});
  expect_tensor(crd[0], Shape{1, 1, 4, 4}, {0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15});
  const auto crd2 = run_op(make_node("DepthToSpace", 1, 1, {{"blocksize", int_attr(2)}, {"mode", string_attr("CRD")}}),
                           13, {iota(Shape{1, 8, 1, 1})});
  expect_tensor(crd2[0], Shape{1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  const auto dcr2 =
      run_op(make_node("DepthToSpace", 1, 1, {{"blocksize", int_attr(2)}}), 13, {iota(Shape{1, 8, 1, 1})});
  expect_tensor(dcr2[0], Shape{1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7});
  const auto back = run_op(make_node("SpaceToDepth", 1, 1, {{"blocksize", int_attr(2)}}), 13, {*dcr[0]});
  expect_tensor(back[0], Shape{1, 4, 2, 2}, values(iota(Shape{16})));
}

// ---------------------------------------------------------------- tensors from shapes
TEST(OnnxShapeOps, ShapeWithStartEndSizeConstantOfShapeRangeEyeLike) {
  auto y = run_op(make_node("Shape", 1, 1), 15, {iota(Shape{2, 3, 4})});
  expect_tensor(y[0], Shape{3}, {2, 3, 4});
  EXPECT_EQ(y[0]->dtype, DType::I64);
  y = run_op(make_node("Shape", 1, 1, {{"start", int_attr(-2)}, {"end", int_attr(10)}}), 15, {iota(Shape{2, 3, 4})});
  expect_tensor(y[0], Shape{2}, {3, 4});
  y = run_op(make_node("Size", 1, 1), 13, {iota(Shape{2, 3, 4})});
  expect_tensor(y[0], Shape{}, {24});
  Attribute value;
  value.type = Attribute::Type::Tensor;
  value.t = std::make_shared<TensorData>(TensorData::from_vec<int32_t>({7}, Shape{1}));
  y = run_op(make_node("ConstantOfShape", 1, 1, {{"value", value}}), 9, {I({2, 2}, Shape{2})});
  expect_tensor(y[0], Shape{2, 2}, {7, 7, 7, 7});
  y = run_op(make_node("ConstantOfShape", 1, 1), 9, {I({0}, Shape{1})});
  expect_tensor(y[0], Shape{0}, {});
  y = run_op(make_node("Range", 3, 1), 11, {F({1}, Shape{}), F({5}, Shape{}), F({1.5f}, Shape{})});
  expect_tensor(y[0], Shape{3}, {1, 2.5, 4});
  y = run_op(make_node("Range", 3, 1), 11, {I({10}, Shape{}), I({4}, Shape{}), I({-3}, Shape{})});
  expect_tensor(y[0], Shape{2}, {10, 7});
  y = run_op(make_node("EyeLike", 1, 1, {{"k", int_attr(1)}, {"dtype", int_attr(7)}}), 9, {iota(Shape{2, 3})});
  expect_tensor(y[0], Shape{2, 3}, {0, 1, 0, 0, 0, 1});
  EXPECT_TRUE(dtype_is_int(y[0]->dtype));
}

// ---------------------------------------------------------------- gathers
TEST(OnnxShapeOps, GatherFamiliesTakeNegativeIndices) {
  // Gather axis 1 with 2-D indices: out = x.shape[:1] + indices.shape + x.shape[2:].
  auto y = run_op(make_node("Gather", 2, 1, {{"axis", int_attr(1)}}), 13,
                  {iota(Shape{2, 3}), I({0, -1, 1, 1}, Shape{2, 2})});
  expect_tensor(y[0], Shape{2, 2, 2}, {0, 2, 1, 1, 3, 5, 4, 4});
  y = run_op(make_node("Gather", 2, 1), 13, {iota(Shape{3, 2}), I({-1}, Shape{})});  // a scalar index drops the dim
  expect_tensor(y[0], Shape{2}, {4, 5});
  y = run_op(make_node("GatherElements", 2, 1, {{"axis", int_attr(1)}}), 13,
             {F({1, 2, 3, 4}, Shape{2, 2}), I({0, 0, -1, 0}, Shape{2, 2})});
  expect_tensor(y[0], Shape{2, 2}, {1, 1, 4, 3});
  // GatherND, the spec's examples: batch_dims 0 with whole rows, and batch_dims 1.
  y = run_op(make_node("GatherND", 2, 1), 13,
             {F({0, 1, 2, 3, 4, 5, 6, 7}, Shape{2, 2, 2}), I({0, 1, 1, 0}, Shape{2, 2})});
  expect_tensor(y[0], Shape{2, 2}, {2, 3, 4, 5});
  y = run_op(make_node("GatherND", 2, 1, {{"batch_dims", int_attr(1)}}), 13,
             {F({0, 1, 2, 3, 4, 5, 6, 7}, Shape{2, 2, 2}), I({1, 0}, Shape{2, 1})});
  expect_tensor(y[0], Shape{2, 2}, {2, 3, 4, 5});
  EXPECT_THROW(run_op(make_node("GatherND", 2, 1), 13, {iota(Shape{2, 2}), I({2, 0}, Shape{1, 2})}), OnnxError);
}

// ---------------------------------------------------------------- scatters
TEST(OnnxShapeOps, ScatterElementsReplacesAddsAndMultiplies) {
  const TensorData data = F({1, 2, 3, 4, 5}, Shape{1, 5});
  const TensorData idx = I({1, -2, 1}, Shape{1, 3});
  const TensorData upd = F({10, 20, 30}, Shape{1, 3});
  auto y = run_op(make_node("ScatterElements", 3, 1, {{"axis", int_attr(1)}}), 16,
                  {data, I({1, 3}, Shape{1, 2}), F({10, 20}, Shape{1, 2})});
  expect_tensor(y[0], Shape{1, 5}, {1, 10, 3, 20, 5});
  y = run_op(make_node("ScatterElements", 3, 1, {{"axis", int_attr(1)}, {"reduction", string_attr("add")}}), 16,
             {data, idx, upd});
  expect_tensor(y[0], Shape{1, 5}, {1, 42, 3, 24, 5});
  y = run_op(make_node("ScatterElements", 3, 1, {{"axis", int_attr(1)}, {"reduction", string_attr("mul")}}), 16,
             {data, idx, upd});
  expect_tensor(y[0], Shape{1, 5}, {1, 600, 3, 80, 5});
  // Scatter (opset 9/10), axis 0 on 2-D: the spec's example.
  y = run_op(make_node("Scatter", 3, 1), 10,
             {F({0, 0, 0, 0, 0, 0, 0, 0, 0}, Shape{3, 3}), I({1, 0, 2, 0, 2, 1}, Shape{2, 3}),
              F({1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f}, Shape{2, 3})});
  ASSERT_TRUE(y[0]);
  const auto v = values(*y[0]);
  const std::vector<double> want{2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(v[i], want[i], 1e-6) << i;
}

TEST(OnnxShapeOps, ScatterNDWritesSlicesAndReducesRepeats) {
  // The spec's example: data [4, 4, 4], indices [[0], [2]], updates [2, 4, 4].
  std::vector<float> d(64, 1.0f), u(32);
  for (std::size_t i = 0; i < 32; ++i) u[i] = static_cast<float>(i + 2);
  auto y =
      run_op(make_node("ScatterND", 3, 1), 16, {F(d, Shape{4, 4, 4}), I({0, 2}, Shape{2, 1}), F(u, Shape{2, 4, 4})});
  ASSERT_TRUE(y[0]);
  const auto v = values(*y[0]);
  EXPECT_EQ(v[0], 2.0);
  EXPECT_EQ(v[16], 1.0);
  EXPECT_EQ(v[32], 18.0);
  EXPECT_EQ(v[63], 1.0);
  y = run_op(make_node("ScatterND", 3, 1, {{"reduction", string_attr("mul")}}), 16,
             {F({1, 2, 3, 4}, Shape{4}), I({1, 1, 3}, Shape{3, 1}), F({5, 6, 7}, Shape{3})});
  expect_tensor(y[0], Shape{4}, {1, 60, 3, 28});
  y = run_op(make_node("ScatterND", 3, 1, {{"reduction", string_attr("add")}}), 16,
             {F({1, 2, 3, 4}, Shape{4}), I({1, 1, 3}, Shape{3, 1}), F({5, 6, 7}, Shape{3})});
  expect_tensor(y[0], Shape{4}, {1, 13, 3, 11});
}

// ---------------------------------------------------------------- slicing, padding, masks
TEST(OnnxShapeOps, SliceClampsAndStepsBothWays) {
  const TensorData x = iota(Shape{3, 4});
  // Negative steps with out-of-range starts: rows from the end, columns 3, 1.
  auto y = run_op(make_node("Slice", 5, 1), 13,
                  {x, I({100, -1}, Shape{2}), I({-100, 0}, Shape{2}), I({0, 1}, Shape{2}), I({-2, -2}, Shape{2})});
  expect_tensor(y[0], Shape{2, 2}, {11, 9, 3, 1});
  y = run_op(make_node("Slice", 3, 1), 13, {x, I({1}, Shape{1}), I({1000}, Shape{1})});  // default axes / steps
  expect_tensor(y[0], Shape{2, 4}, {4, 5, 6, 7, 8, 9, 10, 11});
  y = run_op(
      make_node("Slice", 1, 1, {{"starts", ints_attr({1})}, {"ends", ints_attr({3})}, {"axes", ints_attr({-1})}}), 9,
      {x});
  expect_tensor(y[0], Shape{3, 2}, {1, 2, 5, 6, 9, 10});
}

TEST(OnnxShapeOps, PadConstantReflectEdgeAcrossOpsets) {
  const TensorData x = F({1, 2, 3, 4, 5, 6}, Shape{3, 2});
  // The spec's examples (pads [0, 2, 0, 0]: two columns before).
  auto y = run_op(make_node("Pad", 3, 1), 11, {x, I({0, 2, 0, 0}, Shape{4}), F({9}, Shape{})});
  expect_tensor(y[0], Shape{3, 4}, {9, 9, 1, 2, 9, 9, 3, 4, 9, 9, 5, 6});
  y = run_op(make_node("Pad", 2, 1, {{"mode", string_attr("reflect")}}), 11, {x, I({0, 2, 0, 0}, Shape{4})});
  expect_tensor(y[0], Shape{3, 4}, {1, 2, 1, 2, 3, 4, 3, 4, 5, 6, 5, 6});
  y = run_op(make_node("Pad", 2, 1, {{"mode", string_attr("edge")}}), 11, {x, I({0, 2, 0, 0}, Shape{4})});
  expect_tensor(y[0], Shape{3, 4}, {1, 1, 1, 2, 3, 3, 3, 4, 5, 5, 5, 6});
  // Opset 2's attributes, a 1-D reflect pad (rank 1: beyond torch's reflect rule), a negative pad that crops.
  y = run_op(make_node("Pad", 1, 1, {{"pads", ints_attr({1, -1})}, {"value", float_attr(-1.0)}}), 2,
             {F({1, 2, 3}, Shape{3})});
  expect_tensor(y[0], Shape{3}, {-1, 1, 2});
  y = run_op(make_node("Pad", 2, 1, {{"mode", string_attr("reflect")}}), 13,
             {F({1, 2, 3}, Shape{3}), I({2, 1}, Shape{2})});
  expect_tensor(y[0], Shape{6}, {3, 2, 1, 2, 3, 2});
}

TEST(OnnxShapeOps, TriluCompressReverseSequence) {
  auto y = run_op(make_node("Trilu", 2, 1, {{"upper", int_attr(0)}}), 14, {iota(Shape{3, 3}), I({-1}, Shape{})});
  expect_tensor(y[0], Shape{3, 3}, {0, 0, 0, 3, 0, 0, 6, 7, 0});
  y = run_op(make_node("Trilu", 1, 1), 14, {iota(Shape{2, 3})});
  expect_tensor(y[0], Shape{2, 3}, {0, 1, 2, 0, 4, 5});
  const TensorData cond = TensorData::from_vec<bool>({false, true, true}, Shape{3});
  y = run_op(make_node("Compress", 2, 1, {{"axis", int_attr(0)}}), 11, {iota(Shape{3, 2}), cond});
  expect_tensor(y[0], Shape{2, 2}, {2, 3, 4, 5});
  y = run_op(make_node("Compress", 2, 1), 11, {iota(Shape{3, 2}), TensorData::from_vec<bool>({false, true}, Shape{2})});
  expect_tensor(y[0], Shape{1}, {1});
  // time_axis 1, batch_axis 0: the spec's example, sequence_lens [1, 2, 3, 4].
  y = run_op(make_node("ReverseSequence", 2, 1, {{"time_axis", int_attr(1)}, {"batch_axis", int_attr(0)}}), 10,
             {iota(Shape{4, 4}), I({1, 2, 3, 4}, Shape{4})});
  expect_tensor(y[0], Shape{4, 4}, {0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12});
}

TEST(OnnxShapeOps, OneHotNonZeroTopK) {
  // OneHot: axis 0, a negative index counts from depth, an out-of-range one is all off.
  auto y = run_op(make_node("OneHot", 3, 1, {{"axis", int_attr(0)}}), 11,
                  {I({1, -1, 5}, Shape{3}), F({3}, Shape{}), F({-2, 7}, Shape{2})});
  expect_tensor(y[0], Shape{3, 3}, {-2, -2, -2, 7, -2, -2, -2, 7, -2});
  y = run_op(make_node("NonZero", 1, 1), 13, {F({1, 0, 0, 3}, Shape{2, 2})});
  expect_tensor(y[0], Shape{2, 2}, {0, 1, 0, 1});
  y = run_op(make_node("TopK", 2, 2, {{"largest", int_attr(0)}}), 11,
             {F({3, 1, 2, 0, 5, 4}, Shape{2, 3}), I({2}, Shape{1})});
  expect_tensor(y[0], Shape{2, 2}, {1, 2, 0, 4});
  expect_tensor(y[1], Shape{2, 2}, {1, 2, 0, 2});
  y = run_op(make_node("TopK", 1, 2, {{"k", int_attr(1)}, {"axis", int_attr(0)}}), 9,
             {F({3, 1, 2, 0, 5, 4}, Shape{2, 3})});
  expect_tensor(y[0], Shape{1, 3}, {3, 5, 4});
  expect_tensor(y[1], Shape{1, 3}, {0, 1, 1});
}

TEST(OnnxShapeOps, UniqueSortedAndInFirstOccurrenceOrder) {
  // The spec's example x = [2, 1, 1, 3, 4, 3].
  const TensorData x = F({2, 1, 1, 3, 4, 3}, Shape{6});
  auto y = run_op(make_node("Unique", 1, 4, {{"sorted", int_attr(0)}}), 11, {x});
  expect_tensor(y[0], Shape{4}, {2, 1, 3, 4});
  expect_tensor(y[1], Shape{4}, {0, 1, 3, 4});
  expect_tensor(y[2], Shape{6}, {0, 1, 1, 2, 3, 2});
  expect_tensor(y[3], Shape{4}, {1, 2, 2, 1});
  y = run_op(make_node("Unique", 1, 4), 11, {x});
  expect_tensor(y[0], Shape{4}, {1, 2, 3, 4});
  expect_tensor(y[1], Shape{4}, {1, 0, 3, 4});
  expect_tensor(y[2], Shape{6}, {1, 0, 0, 2, 3, 2});
  expect_tensor(y[3], Shape{4}, {2, 1, 2, 1});
  // Rows along axis 0: [[1, 0], [1, 0], [0, 2]] has two distinct rows, [0, 2] first when sorted.
  y = run_op(make_node("Unique", 1, 1, {{"axis", int_attr(0)}}), 11, {F({1, 0, 1, 0, 0, 2}, Shape{3, 2})});
  expect_tensor(y[0], Shape{2, 2}, {0, 2, 1, 0});
}

// Shape exactly, values within 1e-5 (transforms and cosines round).
void expect_near(const std::optional<TensorData>& got, const Shape& shape, const std::vector<double>& want) {
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->shape, shape) << got->shape.to_string();
  const auto v = values(*got);
  ASSERT_EQ(v.size(), want.size());
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], 1e-5) << i;
}

TEST(OnnxShapeOps, RoiAlignAveragesAndMaxesBilinearSamples) {
  const TensorData x = F({1, 2, 3, 4}, Shape{1, 1, 2, 2});
  const TensorData batch = I({0}, Shape{1});
  // half_pixel, 2x2 bins of one sample each over [0, 2]^2: the samples fall on the pixel centres.
  auto y = run_op(
      make_node("RoiAlign", 3, 1,
                {{"output_height", int_attr(2)}, {"output_width", int_attr(2)}, {"sampling_ratio", int_attr(1)}}),
      16, {x, F({0, 0, 2, 2}, Shape{1, 4}), batch});
  expect_near(y[0], Shape{1, 1, 2, 2}, {1, 2, 3, 4});
  // output_half_pixel: four samples of the unit region around (0.5, 0.5) average to the bilinear centre 2.5.
  y = run_op(make_node("RoiAlign", 3, 1,
                       {{"coordinate_transformation_mode", string_attr("output_half_pixel")},
                        {"sampling_ratio", int_attr(2)}}),
             16, {x, F({0, 0, 1, 1}, Shape{1, 4}), batch});
  expect_near(y[0], Shape{1, 1, 1, 1}, {2.5});
  // max (ONNX Runtime's reading): the largest weighted tap, 0.25 * 4, not the bilinear value.
  y = run_op(make_node("RoiAlign", 3, 1, {{"mode", string_attr("max")}, {"sampling_ratio", int_attr(1)}}), 16,
             {x, F({0, 0, 2, 2}, Shape{1, 4}), batch});
  expect_near(y[0], Shape{1, 1, 1, 1}, {1.0});
}

TEST(OnnxShapeOps, TfIdfVectorizerCountsNgramsWithSkips) {
  // Pool: unigrams 2, 3 (columns 0, 1) and the bigram (3, 3) (column 2); tokens [3, 3, 2, 3].
  std::map<std::string, Attribute, std::less<>> attrs{
      {"min_gram_length", int_attr(1)},        {"max_gram_length", int_attr(2)},
      {"max_skip_count", int_attr(0)},         {"mode", string_attr("TF")},
      {"ngram_counts", ints_attr({0, 2})},     {"ngram_indexes", ints_attr({0, 1, 2})},
      {"pool_int64s", ints_attr({2, 3, 3, 3})}};
  const TensorData tokens = I({3, 3, 2, 3}, Shape{4});
  expect_tensor(run_op(make_node("TfIdfVectorizer", 1, 1, attrs), 9, {tokens})[0], Shape{3}, {1, 3, 1});
  attrs["max_skip_count"] = int_attr(1);  // (x1, x3) = (3, 3) with one token skipped; unigrams still count once
  expect_tensor(run_op(make_node("TfIdfVectorizer", 1, 1, attrs), 9, {tokens})[0], Shape{3}, {1, 3, 2});
  Attribute weights;
  weights.type = Attribute::Type::Floats;
  weights.floats = {0.5, 2, 4};
  attrs["weights"] = weights;
  attrs["mode"] = string_attr("TFIDF");
  expect_tensor(run_op(make_node("TfIdfVectorizer", 1, 1, attrs), 9, {tokens})[0], Shape{3}, {0.5, 6, 8});
  attrs["mode"] = string_attr("IDF");  // batched rows count on their own: row 1 [2, 2] has no 3 and no bigram
  expect_tensor(run_op(make_node("TfIdfVectorizer", 1, 1, attrs), 9, {I({3, 3, 2, 2}, Shape{2, 2})})[0], Shape{2, 3},
                {0, 2, 4, 0.5, 0, 0});
}

TEST(OnnxShapeOps, MelWeightMatrixTriangles) {
  // 3 mel bins, dft_length 16, 8 kHz, 0..4 kHz: bin edges 0, 0, 1, 3, 5 (numpy transcription of ONNX's function).
  const auto y = run_op(make_node("MelWeightMatrix", 5, 1), 17,
                        {I({3}, Shape{}), I({16}, Shape{}), I({8000}, Shape{}), F({0}, Shape{}), F({4000}, Shape{})});
  std::vector<double> want(27, 0.0);
  want[0 * 3 + 0] = 1;
  want[1 * 3 + 1] = 1;
  want[2 * 3 + 1] = 0.5;
  want[2 * 3 + 2] = 0.5;
  want[3 * 3 + 2] = 1;
  want[4 * 3 + 2] = 0.5;
  expect_near(y[0], Shape{9, 3}, want);
}

// ---------------------------------------------------------------- gradients
// Runs `node` on CPU tensors whose float inputs require grad, backpropagates sum(out * seed) and returns each float
// input's gradient.
std::vector<std::vector<double>> grads_of(const Node& node, int64_t opset, const std::vector<TensorData>& inputs,
                                          const std::vector<double>& seed) {
  OpContext ctx{node, opset, capi::cpu_device(), true, {}, nullptr};
  std::vector<DynTensor> leaves;
  for (const auto& in : inputs) {
    DynTensor t = capi::from_data(capi::cpu_device(), in);
    if (dtype_is_float(in.dtype)) t = capi::set_requires_grad(t, true);
    leaves.push_back(t);
    ctx.inputs.emplace_back(t);
  }
  const DynTensor y = *(*op_registry().find(node.op_type, opset))(ctx).at(0);
  const DynTensor g =
      capi::from_data(capi::cpu_device(), TensorData::from_vec<double>(seed, capi::shape(y)).convert(DType::F32));
  const capi::DynGrads grads = capi::backward(y, &g, false, false);
  std::vector<std::vector<double>> out;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (dtype_is_float(inputs[i].dtype)) {
      const auto gi = capi::grad(grads, leaves[i]);
      out.push_back(gi ? capi::to_data(*gi).to_vec<double>() : std::vector<double>{});
    }
  return out;
}

TEST(OnnxShapeOps, GradientsReachDataAndUpdates) {
  // Gather with a repeated index sums the seeds back into the data.
  auto g = grads_of(make_node("Gather", 2, 1), 13, {iota(Shape{3}), I({2, 0, 2}, Shape{3})}, {1, 10, 100});
  EXPECT_EQ(g.at(0), D({10, 0, 101}));
  // ScatterND replaces rows: the replaced data rows get no gradient, the updates get theirs.
  g = grads_of(make_node("ScatterND", 3, 1), 16, {iota(Shape{3}), I({1}, Shape{1, 1}), F({9}, Shape{1})}, {1, 2, 3});
  EXPECT_EQ(g.at(0), D({1, 0, 3}));
  EXPECT_EQ(g.at(1), D({2}));
  // A negative-step slice and a reflect pad route each seed to its source element.
  g = grads_of(make_node("Slice", 5, 1), 13,
               {iota(Shape{4}), I({-1}, Shape{1}), I({-5}, Shape{1}), I({0}, Shape{1}), I({-2}, Shape{1})}, {1, 2});
  EXPECT_EQ(g.at(0), D({0, 2, 0, 1}));
  g = grads_of(make_node("Pad", 2, 1, {{"mode", string_attr("reflect")}}), 13, {iota(Shape{3}), I({1, 0}, Shape{2})},
               {1, 2, 3, 4});
  EXPECT_EQ(g.at(0), D({2, 4, 4}));
}

}  // namespace
}  // namespace ember::onnx_import
