// The operator registry and the node attribute accessors (onnx/op_registry.hpp, onnx/ir.hpp).
#include <gtest/gtest.h>

#include "tests/onnx/onnx_op_test_util.hpp"

namespace ember::onnx_import {
namespace {

TEST(OnnxRegistry, FindsByOpsetRange) {
  OpRegistry r;
  r.add("Foo", [](OpContext&) { return std::vector<std::optional<DynTensor>>{}; }, 7, 12);
  EXPECT_EQ(r.find("Foo", 6), nullptr);
  EXPECT_NE(r.find("Foo", 7), nullptr);
  EXPECT_NE(r.find("Foo", 12), nullptr);
  EXPECT_EQ(r.find("Foo", 13), nullptr);
  EXPECT_EQ(r.find("Bar", 13), nullptr);
  EXPECT_THROW(r.add("Foo", [](OpContext&) { return std::vector<std::optional<DynTensor>>{}; }, 12, 13),
               std::logic_error);
  r.add("Foo", [](OpContext&) { return std::vector<std::optional<DynTensor>>{}; }, 13);
  EXPECT_EQ(r.names(), std::vector<std::string>{"Foo"});
}

TEST(OnnxNode, AttributesAreTypedAndMessagesEscapeNames) {
  Node n = test::make_node("Conv", 2, 1, {{"group", test::int_attr(2)}, {"pads", test::ints_attr({1, 1, 1, 1})}});
  n.name = "c\x1b[31m";
  n.index = 4;
  EXPECT_EQ(n.attr_int("group", 1), 2);
  EXPECT_EQ(n.attr_int("missing", 7), 7);
  EXPECT_EQ(n.attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  try {
    n.attr_float("group", 0.0);
    FAIL() << "a typed accessor accepted an int attribute as float";
  } catch (const OnnxError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'Conv' node 'c\\x1b[31m' (#4)"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\x1b'), std::string::npos) << "raw escape byte in the message";
  }
}

TEST(OnnxOpContext, ReadsIntegerInputsAndNamesMissingOnes) {
  const Node n = test::make_node("Reshape", 2, 1);
  OpContext ctx{n, 13, capi::cpu_device(), false, {}, nullptr};
  ctx.inputs.emplace_back(std::nullopt);
  ctx.inputs.emplace_back(capi::from_data(capi::cpu_device(), TensorData::from_vec<int32_t>({2, -1, 3}, Shape{3})));
  EXPECT_EQ(ctx.ints(1), (std::vector<int64_t>{2, -1, 3}));
  EXPECT_THROW(ctx.input(0), OnnxError);
  EXPECT_THROW(ctx.input(5), OnnxError);
}

TEST(OnnxOpContext, ScalarReadsAnyDtypeOnTheHost) {
  const Node n = test::make_node("Clip", 3, 1);
  OpContext ctx{n, 13, capi::cpu_device(), false, {}, nullptr};
  ctx.inputs.emplace_back(capi::from_data(capi::cpu_device(), TensorData::from_vec<int64_t>({-7}, Shape{})));
  // A trainable F32 value (an initializer that requires grad) reads without becoming an op of the graph.
  ctx.inputs.emplace_back(capi::set_requires_grad(
      capi::from_data(capi::cpu_device(), TensorData::from_vec<float>({0.25f}, Shape{1})), true));
  ctx.inputs.emplace_back(capi::from_data(capi::cpu_device(), TensorData::from_vec<float>({1.f, 2.f}, Shape{2})));
  EXPECT_EQ(ctx.scalar(0), -7.0);
  EXPECT_EQ(ctx.scalar(1), 0.25);
  EXPECT_THROW(ctx.scalar(2), OnnxError);  // two values
}

}  // namespace
}  // namespace ember::onnx_import
